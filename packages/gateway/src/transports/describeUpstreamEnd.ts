import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { StdioChildTransport } from './stdioChildTransport.js';

/**
 * Why an upstream connection ended, in words for the log line and for the error the requests still
 * open receive: the client or the gateway closing the session, else the child's exit (its code or
 * signal) or the connection closing.
 */
export function describeUpstreamEnd(by: 'client' | 'gateway' | 'upstream', transport: Transport): string {
  if (by === 'client') return 'the client closed the session';
  if (by === 'gateway') return 'the gateway closed the session';
  const exit = transport instanceof StdioChildTransport ? transport.exit : undefined;
  if (exit === undefined) return 'the upstream closed the connection';
  return `the upstream process exited (${exit.signal === null ? `code ${String(exit.code)}` : `signal ${exit.signal}`})`;
}
