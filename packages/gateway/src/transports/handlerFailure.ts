import { GatewayError } from '../errors.js';
import { errorSummary } from '../observe/errorSummary.js';

/**
 * GW_SESSION_FAILED for a handler that threw on a message from the upstream: the session fails
 * (its upstream is closed), never the process.
 */
export function handlerFailure(error: unknown): GatewayError {
  return new GatewayError(
    'GW_SESSION_FAILED',
    `a message from the upstream could not be handled: ${errorSummary(error)}`,
    {},
    { cause: error },
  );
}
