import { createRequire } from 'node:module';
import { pino, type DestinationStream, type Logger } from 'pino';
import { redactUrlsInText } from '../wire/redactUrl.js';
import { redactLogFields } from './redactLogFields.js';

/** The gateway's logger type (pino). */
export type GatewayLogger = Logger;

/** How log events are written: one JSON line each, or for a person reading a terminal. */
export type LogFormat = 'json' | 'pretty';

/** The log formats, as `--log-format` accepts them. */
export const LOG_FORMATS: readonly LogFormat[] = ['json', 'pretty'];

/** Options of {@link createLogger}. */
export interface LoggerOptions {
  /** @default 'info' */
  level?: string;
  /** Where log lines go. @default stdout */
  destination?: DestinationStream & { readonly isTTY?: boolean };
  /** @default 'pretty' when the destination is a terminal, else 'json' */
  format?: LogFormat;
}

/** The format of {@link LoggerOptions.format} when none is given: pretty for a terminal, JSON for anything else. */
export function defaultLogFormat(destination: { readonly isTTY?: boolean }): LogFormat {
  return destination.isTTY === true ? 'pretty' : 'json';
}

/**
 * A destination that writes each JSON line as pino-pretty renders it (time, level, message, then
 * the fields indented), synchronously, to `destination`. It sees the line after redaction.
 */
function prettyDestination(destination: DestinationStream & { readonly isTTY?: boolean }): DestinationStream {
  // Loaded here, by the first pretty logger: JSON logging (every gateway under test) never needs it.
  const pinoPretty = createRequire(import.meta.url)('pino-pretty') as typeof import('pino-pretty');
  const render = pinoPretty.prettyFactory({
    colorize: destination.isTTY === true,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'service',
  });
  return { write: (line: string) => destination.write(render(line)) };
}

// pino's error serializer returns an object of its own prototype; its own fields are copied out to
// a plain object (what the JSON line holds anyway) so that redactLogFields reaches them.
function redactError(error: unknown): unknown {
  const serialized = pino.stdSerializers.err(error as Error) as unknown;
  if (typeof serialized !== 'object' || serialized === null) return redactLogFields(serialized);
  return redactLogFields({ ...serialized });
}

/**
 * One JSON line per event (or, in the `pretty` format, the same event rendered for a person by
 * pino-pretty). Credentials and tool arguments are never passed to the logger; the
 * redaction list is a second line of defence for headers that might reach it through an error,
 * and every URL in a logged string (fields, the message, an error's message and stack) has its
 * userinfo and credential parameters redacted (redactUrl), whoever built the string.
 */
export function createLogger(options: LoggerOptions = {}): GatewayLogger {
  const config = {
    level: options.level ?? 'info',
    base: { service: 'toolpin' },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: {
      paths: [
        'headers.authorization',
        'headers.cookie',
        'headers["proxy-authorization"]',
        'headers["x-api-key"]',
        '*.headers.authorization',
        '*.headers.cookie',
        '*.headers["proxy-authorization"]',
        '*.headers["x-api-key"]',
        '*.arguments',
        'arguments',
      ],
      censor: '[redacted]',
    },
    formatters: { log: (fields: Record<string, unknown>) => redactLogFields(fields) },
    serializers: {
      err: redactError,
      msg: (message: unknown) => (typeof message === 'string' ? redactUrlsInText(message) : message),
    },
  };
  const destination = options.destination ?? process.stdout;
  const format = options.format ?? defaultLogFormat(destination);
  if (format === 'pretty') return pino(config, prettyDestination(destination));
  return options.destination === undefined ? pino(config) : pino(config, options.destination);
}
