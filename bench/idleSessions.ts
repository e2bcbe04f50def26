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
  /** RSS right after the last session listed: includes the garbage of the load not yet collected. */
  readonly rssAfterLoadBytes: number | undefined;
  /** RSS once the gateway has been idle (V8 collects and returns memory some seconds after a load ends). */
  readonly rssBytes: number | undefined;
  /** How long the gateway sat idle before `rssBytes` was read. */
  readonly idleSeconds: number;
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

/**
 * Watches an idle process's RSS for up to `seconds` and returns the lowest reading: V8 keeps the
 * heap a load grew until its memory reducer runs, some seconds after allocation stops. Stops early
 * once RSS fell well below its first reading and held there for three seconds.
 */
async function idleRss(pid: number, seconds: number): Promise<{ rss: number | undefined; waited: number }> {
  const first = rssBytes(pid);
  let lowest = first;
  let steady = 0;
  let waited = 0;
  while (waited < seconds) {
    await sleep(1000);
    waited++;
    const now = rssBytes(pid);
    if (now === undefined || lowest === undefined || first === undefined) return { rss: now, waited };
    steady = now >= lowest ? steady + 1 : 0;
    lowest = Math.min(lowest, now);
    if (lowest < first * 0.9 && steady >= 3) break;
  }
  return { rss: lowest, waited };
}

/** Opens `count` sessions (`concurrency` in flight) through toolpin; reads its RSS after the load and idle. */
export async function measureIdleSessions(
  count: number,
  size: number,
  concurrency: number,
  idleSeconds: number,
): Promise<IdleSessionsResult> {
  const upstream = await startUpstream('stateful', size);
  const toolpin = await startToolpin(upstream.url, makeCatalog(size)).catch(async (error: unknown) => {
    await upstream.stop();
    throw error;
  });
  try {
    await openListingSession(toolpin.url, size);
    await sleep(1500);
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
    const rssAfterLoadBytes = rssBytes(toolpin.child.pid);
    const idle = await idleRss(toolpin.child.pid, idleSeconds);
    return {
      sessions: count,
      tools: size,
      rssBaselineBytes,
      rssAfterLoadBytes,
      rssBytes: idle.rss,
      idleSeconds: idle.waited,
      seconds,
      verified: toolpin.events.get('catalog.verified') ?? 0,
    };
  } finally {
    await toolpin.stop();
    await upstream.stop();
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
