import { errorSummary } from './errorSummary.js';
import type { GatewayLogger } from './logger.js';

/**
 * The last line of containment for a long-running command (`serve`, `wrap`): a promise rejection
 * that no handler took is logged and the process goes on. Every input path contains its own
 * failures (a message or a session fails, with its own log line); this only keeps one missed
 * rejection from ending every other client's sessions with it.
 */
export function logUnhandledRejections(logger: GatewayLogger): void {
  process.on('unhandledRejection', (reason) => {
    logger.error(
      { event: 'process.unhandled_rejection', err: errorSummary(reason) },
      'a rejected promise had no handler (contained)',
    );
  });
}
