import { redactUrlsInText } from '../wire/redactUrl.js';

/**
 * An error message fit for the logs: cut before the first JSON value it embeds, and URL
 * credentials redacted. SDK messages such as "Received a response for an unknown message ID: {…}"
 * carry whole JSON-RPC messages, and with them tool results and the arguments they echo, which are
 * never logged.
 */
export function errorSummary(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const json = message.search(/[{[]/);
  return redactUrlsInText(json === -1 ? message : `${message.slice(0, json).trimEnd()} …`).slice(0, 300);
}
