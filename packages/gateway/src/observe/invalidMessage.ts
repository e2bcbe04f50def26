import type { InvalidUpstreamMessage } from '../wire/upstreamMessage.js';
import type { GatewayLogger } from './logger.js';

/** Logs a dropped upstream message: what was wrong and whether it answered a request, never its content. */
export function logInvalidMessage(
  logger: GatewayLogger,
  fields: Readonly<Record<string, unknown>>,
  invalid: InvalidUpstreamMessage,
  answered: boolean,
): void {
  logger.warn(
    {
      event: 'upstream.invalid_message',
      ...fields,
      reason: invalid.reason,
      problem: invalid.problem,
      answered,
    },
    answered
      ? 'dropped an invalid upstream message; its request was answered with -32042'
      : 'dropped an invalid upstream message',
  );
}
