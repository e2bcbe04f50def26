// Memory of many idle tracked sessions: a fresh toolpin in front of a fresh stateful upstream,
// N sessions initialized through it, each listing the tools once (so the gateway holds an
// observed catalog for every one of them), then the resident set size of the toolpin process.
import { makeCatalog } from './catalog.js';
import { rssBytes } from './children.js';
import { bodyOf } from './load.js';
import { BASE_HEADERS, messagesOf, openSession, post } from './mcpHttp.js';
import { startUpstream } from './targets.js';
import { startToolpin } from './toolpinTarget.js';

/** What the idle-sessions measurement found. */
export interface IdleSessionsResult {
  readonly sessions: number;
  readonly tools: number;
  /** RSS of the toolpin process after start-up and one session. */
  readonly rssBaselineBytes: number | undefined;
  /** RSS after every session listed once. */
  readonly rssBytes: number | undefined;
  readonly seconds: number;
  /** catalog.verified log lines toolpin wrote: one per session. */
  readonly verified: number;
}

async function openListingSession(url: string, tools: number): Promise<void> {
  const session = await openSession(url);
  const headers = { ...BASE_HEADERS, 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' };
  const answer = await post(url, headers, bodyOf('list'));
  const reply = messagesOf(answer)[0] as { result?: { tools?: unknown[] } } | undefined;
  if (reply?.result?.tools?.length !== tools)
    throw new Error(
      `a session's tools/list through toolpin failed: HTTP ${answer.status} ${answer.text.slice(0, 200)}`,
    );
}

/** Opens `count` sessions (with `concurrency` in flight) through toolpin and reads its RSS. */
export async function measureIdleSessions(
  count: number,
  size: number,
  concurrency: number,
): Promise<IdleSessionsResult> {
  const upstream = await startUpstream('stateful', size);
  const toolpin = await startToolpin(upstream.url, makeCatalog(size)).catch(async (error: unknown) => {
    await upstream.stop();
    throw error;
  });
  try {
    await openListingSession(toolpin.url, size);
    await settle();
    const rssBaselineBytes = rssBytes(toolpin.child.pid);
    const started = performance.now();
    let next = 1;
    const worker = async (): Promise<void> => {
      while (next < count) {
        next++;
        await openListingSession(toolpin.url, size);
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    const seconds = (performance.now() - started) / 1000;
    await settle();
    return {
      sessions: count,
      tools: size,
      rssBaselineBytes,
      rssBytes: rssBytes(toolpin.child.pid),
      seconds,
      verified: toolpin.events.get('catalog.verified') ?? 0,
    };
  } finally {
    await toolpin.stop();
    await upstream.stop();
  }
}

/** Lets the gateway finish its writes and a garbage collection happen before RSS is read. */
function settle(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 1500));
}
