// One load window against one target with autocannon (programmatic API): a fixed number of
// connections for a fixed duration, each connection bound to its own MCP session when the
// profile has sessions. Every answer is checked (HTTP 200, a JSON-RPC result of the expected
// shape); errors, timeouts, non-2xx answers and mismatching bodies are counted, and a window
// with any of them is invalid.
import autocannon from 'autocannon';
import { BASE_HEADERS } from './mcpHttp.js';

/** The two messages the benchmark sends. */
export type MessageKind = 'call' | 'list';

/** What one window sends, and to where. */
export interface LoadSpec {
  readonly url: string;
  readonly kind: MessageKind;
  /** One session id per connection (stateful profile), or undefined (stateless). */
  readonly sessions: readonly string[] | undefined;
  readonly connections: number;
  readonly seconds: number;
  /** True when an answer body is what the message must produce. */
  readonly check: (body: string) => boolean;
}

/** What one window measured. */
export interface LoadResult {
  readonly requests: number;
  readonly seconds: number;
  readonly reqPerSec: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** Connection errors + timeouts + non-2xx answers + bodies that failed the check. */
  readonly failures: number;
}

/** The JSON-RPC body of each message kind (echo for calls, the full catalog for lists). */
export function bodyOf(kind: MessageKind): string {
  return kind === 'call'
    ? JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'echo', arguments: { text: 'hello from toolpin-bench' } },
      })
    : JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

/** Runs one window and resolves with its figures. */
export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  const headers: Record<string, string> = { ...BASE_HEADERS, 'mcp-protocol-version': '2025-06-18' };
  const latencies: number[] = [];
  let nextSession = 0;
  const instance = autocannon({
    url: spec.url,
    method: 'POST',
    connections: spec.connections,
    duration: spec.seconds,
    pipelining: 1,
    timeout: 20,
    headers,
    body: bodyOf(spec.kind),
    verifyBody: spec.check,
    setupClient: (client) => {
      const session = spec.sessions?.[nextSession++ % spec.sessions.length];
      if (session !== undefined) client.setHeaders({ ...headers, 'mcp-session-id': session });
    },
  });
  // autocannon's own histogram keeps whole milliseconds; calls take about one, so keep the exact times.
  instance.on('response', (_client, _status, _bytes, ms) => latencies.push(ms));
  const result = await instance;
  latencies.sort((a, b) => a - b);
  const requests = result.requests.total;
  return {
    requests,
    seconds: result.duration,
    reqPerSec: requests / result.duration,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    failures: result.errors + result.timeouts + result.non2xx + result.mismatches,
  };
}

/**
 * Sends exactly `amount` messages of one kind over 8 connections (each bound to a session, when
 * there are sessions) and throws if any failed: the fixed request counts of bench/allocations.ts
 * and bench/perfPair.ts.
 */
export async function sendExactly(
  url: string,
  kind: MessageKind,
  sessions: readonly string[] | undefined,
  amount: number,
): Promise<void> {
  const headers = { ...BASE_HEADERS, 'mcp-protocol-version': '2025-06-18' };
  let next = 0;
  const result = await autocannon({
    url,
    method: 'POST',
    connections: 8,
    amount,
    // A 5,000-tool listing takes seconds on a loaded machine.
    timeout: 60,
    headers,
    body: bodyOf(kind),
    setupClient: (client) => {
      const session = sessions?.[next++ % sessions.length];
      if (session !== undefined) client.setHeaders({ ...headers, 'mcp-session-id': session });
    },
  });
  if (result.errors + result.timeouts + result.non2xx > 0) throw new Error('failed requests');
}
