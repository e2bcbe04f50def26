import { pino, type DestinationStream, type Logger } from 'pino';
import { redactUrlsInText } from '../wire/redactUrl.js';
import { redactLogFields } from './redactLogFields.js';

/** The gateway's logger type (pino). */
export type GatewayLogger = Logger;

/** Options of {@link createLogger}. */
export interface LoggerOptions {
  /** @default 'info' */
  level?: string;
  /** Where JSON lines go. @default stdout */
  destination?: DestinationStream;
}

// pino's error serializer returns an object of its own prototype; its own fields are copied out to
// a plain object (what the JSON line holds anyway) so that redactLogFields reaches them.
function redactError(error: unknown): unknown {
  const serialized = pino.stdSerializers.err(error as Error) as unknown;
  if (typeof serialized !== 'object' || serialized === null) return redactLogFields(serialized);
  return redactLogFields({ ...serialized });
}

/**
 * One JSON line per event. Credentials and tool arguments are never passed to the logger; the
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
  return options.destination === undefined ? pino(config) : pino(config, options.destination);
}
