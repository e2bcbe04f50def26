import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { defaultTools, startV1Server } from '../peers/index.js';
import { spawnGateway } from '../operate/gatewayProcess.js';
import { writeGatewayFiles } from '../support/gatewayFiles.js';
import { pinFor } from '../support/pinFor.js';
import { callRequest } from '../support/rawMcp.js';
import { responseTo } from './support/lenientRead.js';
import { answerJson, startMaliciousUpstream, type MaliciousUpstream } from './support/maliciousUpstream.js';
import { listRequest, openSession, postJson, rigAround, SERVER, type RigOf } from './support/rig.js';
import { ECHO, ECHO_DRIFTED, EVIL } from './support/tools.js';

// Red team 11: listings kept as the chunks they arrived in (jsonResponse.ts, resultEnvelope.ts
// edge()), one tools-by-name map per one-page inspection shared by the sessions it is replayed to
// (sessionCatalog.ts) and the modules loaded on first use (aggregateRoute.ts, pinnedLiveCatalog.ts, pinCommand.ts).

describe('redteam11: the aggregate route’s module loaded by its first request (aggregateRoute.ts)', () => {
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolpin-rt11-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /**
   * `toolpin serve` (the built binary) of a gateway file with an aggregate block, in a node whose
   * module loader cannot find `ingress/aggregateFront.js` (an install missing it, or the v2 SDK it
   * imports): what each era's first request to /mcp gets, and what the gateway logged meanwhile.
   */
  async function serveWithoutAggregateModule(): Promise<{
    replies: { status: number; type: string | null; body: string }[];
    logs: readonly Record<string, unknown>[];
    code: number | null;
  }> {
    const hook = join(dir, 'missingAggregate.mjs');
    const resolver = [
      'export async function resolve(specifier, context, next) {',
      "  if (specifier.endsWith('/aggregateFront.js'))",
      "    throw Object.assign(new Error(`Cannot find module ${specifier}`), { code: 'ERR_MODULE_NOT_FOUND' });",
      '  return next(specifier, context);',
      '}',
    ].join('\n');
    await writeFile(
      hook,
      `import { register } from 'node:module';\nregister(${JSON.stringify(`data:text/javascript,${encodeURIComponent(resolver)}`)});\n`,
    );
    const peer = await startV1Server({ mode: 'stateful-sse' });
    const files = await writeGatewayFiles([pinFor('web', peer.url, defaultTools())], { aggregate: {} });
    const gateway = await spawnGateway(files.file, ['--import', pathToFileURL(hook).href]);
    try {
      const replies = [];
      for (const version of ['2025-06-18', '2026-07-28']) {
        const reply = await fetch(`${gateway.url}/mcp`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-protocol-version': version,
            'mcp-method': 'tools/list',
          },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
        });
        replies.push({
          status: reply.status,
          type: reply.headers.get('content-type'),
          body: await reply.text(),
        });
      }
      // Stopped, so that every line it logged was written (pino writes after the answer).
      gateway.signal('SIGTERM');
      const code = await gateway.exited;
      return { replies, logs: gateway.logs, code };
    } finally {
      await gateway.kill();
      await peer.close();
      await files.remove();
    }
  }

  it('attack: the module cannot be loaded: each request gets a JSON-RPC error naming no file, the gateway logs why, and stops cleanly', async () => {
    const { replies, logs, code } = await serveWithoutAggregateModule();
    for (const reply of replies) {
      expect(reply.status).toBe(500);
      expect(reply.type).toMatch(/^application\/json/);
      const message = JSON.parse(reply.body) as { id: unknown; error?: { code: number } };
      expect(message).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32603 } });
      // No stack, no path of the gateway's install.
      expect(reply.body).not.toContain('aggregateFront');
      expect(reply.body).not.toContain(' at ');
    }
    expect(logs.filter((line) => line.event === 'aggregate.unavailable')).toHaveLength(2);
    // SIGTERM stops it as any gateway (the route never loaded has nothing to close).
    expect(logs.filter((line) => line.event === 'gateway.stop_failed')).toEqual([]);
    expect(code).toBe(0);
  });
});

/** A pinned tool whose definition holds multi-byte UTF-8 (2, 3 and 4 bytes) to split. */
const UNI: Readonly<Record<string, unknown>> = {
  name: 'echo',
  description: 'Échoe le texte — ü 🙂 tel quel',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
};

describe('redteam11: a JSON listing kept as the chunks it arrived in (jsonResponse.ts, edge())', () => {
  let rig: RigOf<MaliciousUpstream>;
  let session: Record<string, string>;
  /** How the next tools/list answer is written: its bytes from the request's id, cut where this says. */
  let answer: (id: unknown) => { bytes: Buffer; cuts: readonly number[] } = () => ({
    bytes: Buffer.alloc(0),
    cuts: [],
  });

  beforeAll(async () => {
    const upstream = await startMaliciousUpstream();
    rig = await rigAround(upstream, {});
    // The pin approves UNI alone (the rig's own pin file, rewritten and reloaded).
    await writeFile(
      join(rig.gateway.dir, 'servers', `${SERVER}.json`),
      JSON.stringify(pinFor(SERVER, upstream.url, [UNI])),
    );
    await rig.gateway.running.reload();
    upstream.behaviour = async ({ res, message }) => {
      if (message.method !== 'tools/list') return false;
      const { bytes, cuts } = answer(message.id);
      // Chunked: each piece is a chunk of its own, a few ms apart, so the gateway reads them apart.
      res.writeHead(200, { 'content-type': 'application/json' });
      let at = 0;
      for (const cut of [...cuts, bytes.length]) {
        res.write(bytes.subarray(at, cut));
        at = cut;
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
      res.end();
      return true;
    };
    session = await openSession(rig.endpoint);
  });
  afterAll(async () => {
    await rig.close();
  });

  /** The two compact key orders around a result, for this id. */
  const body = (result: unknown, id: unknown, resultFirst: boolean): Buffer =>
    Buffer.from(
      resultFirst
        ? `{"result":${JSON.stringify(result)},"jsonrpc":"2.0","id":${JSON.stringify(id)}}`
        : `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${JSON.stringify(result)}}`,
    );

  /** Lists with this id as the upstream answers; what the client got, and whether echo then ran. */
  async function listAndCall(id: string) {
    const mark = rig.gateway.logs.length;
    const reply = await postJson(rig.endpoint, listRequest(id), session);
    const before = rig.upstream.executed.length;
    await postJson(rig.endpoint, callRequest(`${id}-call`, 'echo', { text: id }), session);
    return {
      status: reply.status,
      message: responseTo(reply.body, id),
      drift: rig.gateway.logs.slice(mark).some((line) => line.event === 'catalog.drift'),
      ran: rig.upstream.executed.length > before,
    };
  }

  it('attack: the verified listing cut at each distinct byte, in both key orders, ids spanning three chunks, a last chunk of one byte: each answered as verified', async () => {
    const honest = {
      status: 200,
      message: { jsonrpc: '2.0', result: { tools: [UNI] } },
      drift: false,
      ran: true,
    };
    for (const resultFirst of [true, false]) {
      const bytes = body({ tools: [UNI] }, 'i-000', resultFirst);
      const length = bytes.length;
      const resultStart = bytes.indexOf(JSON.stringify({ tools: [UNI] }));
      const resultEnd = resultStart + Buffer.byteLength(JSON.stringify({ tools: [UNI] }));
      // The cut positions that are distinct for the code under test, each alone: every one in the
      // envelope (prefix, id, suffix) and within 4 bytes of either end of the result, every one
      // beside or inside a multi-byte character (the text path's decoder, when the bytes are
      // judged as text), and every 8th elsewhere. The rest are equivalent to those: the body is
      // read as the list of its chunks whatever their sizes, matchResultEnvelopeBytes reads the
      // same first and last 192 bytes (the whole body here) however they are split, and a cut
      // inside the result away from its ends moves only where findBytes' comparison passes from
      // one chunk to the next (packages/gateway/test/checkpoint/verifiedListings.test.ts runs every
      // position and random sets of cuts; resultEnvelope.test.ts the envelope under any slicing).
      const distinct = (cut: number): boolean =>
        cut <= resultStart + 4 ||
        cut >= resultEnd - 4 ||
        (bytes[cut - 1] as number) >= 0x80 ||
        (bytes[cut] as number) >= 0x80 ||
        cut % 8 === 0;
      const cutsOf: number[][] = [];
      for (let cut = 1; cut < length; cut++) if (distinct(cut)) cutsOf.push([cut]);
      // The id ("i-NNN") of each order cut in three inside it, and a last chunk of 1 byte.
      const idAt = resultFirst ? length - 8 : '{"jsonrpc":"2.0","id":'.length;
      cutsOf.push([idAt + 1, idAt + 4], [idAt + 2, idAt + 3], [idAt, idAt + 7], [1, length - 1]);
      for (const [n, cuts] of cutsOf.entries()) {
        const id = `i-${String(n).padStart(3, '0')}`;
        answer = (asked) => ({ bytes: body({ tools: [UNI] }, asked, resultFirst), cuts });
        const got = await listAndCall(id);
        expect([resultFirst, cuts, got]).toEqual([
          resultFirst,
          cuts,
          { ...honest, message: { ...honest.message, id } },
        ]);
      }
    }
  }, 60_000);

  it('attack: a listing equal to the verified one but for one byte in one chunk (first, middle, last): never taken for it', async () => {
    const flipped = { ...UNI, description: String(UNI.description).replace('tel', 'teL') };
    for (const resultFirst of [true, false]) {
      const length = body({ tools: [flipped] }, 'f-0', resultFirst).length;
      const at = body({ tools: [flipped] }, 'f-0', resultFirst).indexOf('teL');
      for (const [n, cuts] of [[at + 1], [at - 1, at + 2], [at + 2, length - 1], [at, at + 1]].entries()) {
        answer = (asked) => ({ bytes: body({ tools: [flipped] }, asked, resultFirst), cuts });
        const got = await listAndCall(`f-${n}`);
        expect([cuts, got.drift, got.ran]).toEqual([cuts, true, false]);
        expect(JSON.stringify(got.message)).not.toContain('teL');
        // The honest listing again, cut the same way: verified, echo runs.
        answer = (asked) => ({ bytes: body({ tools: [UNI] }, asked, resultFirst), cuts });
        expect(await listAndCall(`f-${n}-back`)).toMatchObject({ drift: false, ran: true });
      }
    }
  });

  it('attack: the verified listing in chunks under another id, and one whose bytes are not UTF-8: neither replayed', async () => {
    answer = () => ({ bytes: body({ tools: [UNI] }, 'someone-else', true), cuts: [5, 40] });
    const other = await postJson(rig.endpoint, listRequest('o-1'), session);
    const mine = responseTo(other.body, 'o-1');
    expect(mine?.result).toBeUndefined();
    expect(mine?.error).toBeDefined();
    expect(responseTo(other.body, 'someone-else')).toBeUndefined();
    // The 🙂 (F0 9F 99 82) cut in two, its last byte replaced (not UTF-8): the text path decides it.
    answer = (asked) => {
      const bytes = body({ tools: [UNI] }, asked, true);
      const smile = bytes.indexOf(Buffer.from('🙂'));
      bytes[smile + 3] = 0x41;
      return { bytes, cuts: [smile + 2] };
    };
    const got = await listAndCall('u-1');
    expect([got.drift, got.ran]).toEqual([true, false]);
    expect(JSON.stringify(got.message)).not.toContain('🙂');
  });
});

describe('redteam11: one tools-by-name map per one-page inspection, shared by sessions (sessionCatalog.ts)', () => {
  let rig: RigOf<MaliciousUpstream>;

  beforeAll(async () => {
    rig = await rigAround(await startMaliciousUpstream(), {});
    rig.upstream.behaviour = ({ res, message }) => {
      if (message.method !== 'tools/list') return false;
      const cursor = (message.params as { cursor?: string } | undefined)?.cursor;
      // A cursorless listing is the pinned one-page catalog; a cursor gets one page of it drifted.
      const tools = cursor === undefined ? [ECHO] : cursor === 'evil' ? [EVIL] : [ECHO_DRIFTED];
      answerJson(res, { result: { tools }, jsonrpc: '2.0', id: message.id });
      return true;
    };
  });
  afterAll(async () => {
    await rig.close();
  });

  async function calls(session: Record<string, string>, id: string, name = 'echo'): Promise<boolean> {
    const before = rig.upstream.executed.length;
    await postJson(rig.endpoint, callRequest(id, name, { text: id }), session);
    return rig.upstream.executed.length > before;
  }

  it('attack: a later page in one session (a drifted echo, an unpinned tool), a list_changed: the other sessions keep exactly what they saw', async () => {
    const [a, b] = [await openSession(rig.endpoint), await openSession(rig.endpoint)];
    await postJson(rig.endpoint, listRequest('a-1'), a);
    await postJson(rig.endpoint, listRequest('b-1'), b);
    expect([await calls(a, 'a-c1'), await calls(b, 'b-c1')]).toEqual([true, true]);
    // A asks a page with a cursor: echo drifted on it, two definitions under one name for A.
    await postJson(rig.endpoint, { ...listRequest('a-2'), params: { cursor: 'drift' } }, a);
    await postJson(rig.endpoint, { ...listRequest('a-3'), params: { cursor: 'evil' } }, a);
    expect([await calls(a, 'a-c2'), await calls(a, 'a-c3', 'evil')]).toEqual([false, false]);
    // B, and a session listing after it (served the same inspection), still call the pinned echo.
    const c = await openSession(rig.endpoint);
    await postJson(rig.endpoint, listRequest('c-1'), c);
    expect([await calls(b, 'b-c2'), await calls(c, 'c-c1')]).toEqual([true, true]);
    expect([await calls(b, 'b-c3', 'evil'), await calls(c, 'c-c2', 'evil')]).toEqual([false, false]);
    // A lists again without a cursor: the shared catalog again, echo allowed; its later page again refused.
    await postJson(rig.endpoint, listRequest('a-4'), a);
    expect(await calls(a, 'a-c4')).toBe(true);
    await postJson(rig.endpoint, { ...listRequest('a-5'), params: { cursor: 'drift' } }, a);
    expect([await calls(a, 'a-c5'), await calls(b, 'b-c4'), await calls(c, 'c-c3')]).toEqual([
      false,
      true,
      true,
    ]);
  });
});
