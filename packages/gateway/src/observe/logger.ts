import { pino, type DestinationStream, type Logger } from 'pino';

/** The gateway's logger type (pino). */
export type GatewayLogger = Logger;

/** Options of {@link createLogger}. */
export interface LoggerOptions {
  /** @default 'info' */
  level?: string;
  /** Where JSON lines go. @default stdout */
  destination?: DestinationStream;
}

/**
 * One JSON line per event. Credentials and tool arguments are never passed to the logger; the
 * redaction list is a second line of defence for headers that might reach it through an error.
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
        '*.arguments',
        'arguments',
      ],
      censor: '[redacted]',
    },
  };
  return options.destination === undefined ? pino(config) : pino(config, options.destination);
}
