// A malicious HTTP upstream and the identity it states (docs/pin-lifecycle.md#the-artifact): the
// pin records `{kind: server, name, version}`; the upstream answers an honest initialize first and
// another version only in a later one, or a serverInfo with odd values (a number, a hidden
// character, a duplicate key, null, an endless string, a second statement in `_meta`, none at all).
// Every initialize answer is judged: never the pinned identity unless it is exactly the pinned name
// and version; flagged and served by default, refused (nothing of the answer reaches the client)
// where the drift policy blocks low drift.
import { startGatewayHarness, type GatewayHarness, type LogLine } from '../support/gatewayHarness.js';
import { pinFor } from '../support/pinFor.js';
import { initializeRequest } from '../support/rawMcp.js';
import { answerText } from './support/framing.js';
import { responsesIn } from './support/lenientRead.js';
import { startMaliciousUpstream, type MaliciousUpstream } from './support/maliciousUpstream.js';
import { postJson } from './support/rig.js';
import { PINNED_TOOLS } from './support/tools.js';

const HONEST = '"serverInfo":{"name":"malicious-upstream","version":"1.0.0"}';
const CHANGED = '"serverInfo":{"name":"malicious-upstream","version":"6.6.6"}';

/** The exact bytes of an initialize answer whose identity members are `stated` (raw JSON text). */
function initializeText(id: unknown, stated: string): string {
  const members = [
    '"protocolVersion":"2025-06-18"',
    '"capabilities":{"tools":{}}',
    ...(stated === '' ? [] : [stated]),
  ];
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{${members.join(',')}}}`;
}

type Answer = {
  result?: { serverInfo?: Record<string, unknown> };
  error?: { code: number; message: string; data?: Record<string, unknown> };
};

describe('a malicious upstream and the serverInfo it states', () => {
  let upstream: MaliciousUpstream;
  let gateway: GatewayHarness;
  /** The identity members of the next initialize answers, in order; then the honest one. */
  const script: string[] = [];
  let sessions = 0;

  beforeAll(async () => {
    upstream = await startMaliciousUpstream();
    upstream.behaviour = ({ res, message }) => {
      if (message.method !== 'initialize') return false;
      answerText(res, 'application/json', initializeText(message.id, script.shift() ?? HONEST), 200, {
        'mcp-session-id': `stated-${++sessions}`,
      });
      return true;
    };
    const pin = pinFor('mal', upstream.url, PINNED_TOOLS);
    const section = {
      ...(pin.pin as object),
      artifact: { kind: 'server', name: 'malicious-upstream', version: '1.0.0' },
    };
    gateway = await startGatewayHarness([
      { ...pin, pin: section },
      { ...pin, name: 'mal-block', pin: section, onDrift: { high: 'filter', low: 'block-server' } },
    ]);
  });

  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
  });

  const initialize = async (route: string, id: string): Promise<Answer> => {
    const reply = await postJson(`${gateway.url}/${route}/mcp`, initializeRequest(id));
    expect(reply.status).toBe(200);
    const answer = responsesIn(reply.body).find((message) => message.id === id);
    expect(answer).toBeDefined();
    return answer as Answer;
  };
  const lastDrift = (server: string): LogLine | undefined =>
    gateway
      .events('upstream.artifact_drifted')
      .filter((line) => line.server === server)
      .at(-1);

  it('an honest first answer and another version in the second: verified, then flagged and served as stated', async () => {
    script.push(HONEST, CHANGED);
    const verifiedBefore = gateway.events('upstream.artifact_verified').length;
    expect((await initialize('mal', 'first')).result?.serverInfo?.version).toBe('1.0.0');
    expect(gateway.events('upstream.artifact_verified').length).toBe(verifiedBefore + 1);
    expect(lastDrift('mal')).toBeUndefined();
    expect((await initialize('mal', 'second')).result?.serverInfo?.version).toBe('6.6.6');
    expect(lastDrift('mal')).toMatchObject({
      action: 'flagged',
      severity: 'low',
      pinned: { version: '1.0.0' },
      observed: { version: '6.6.6' },
    });
  });

  it('where low drift blocks, the second answer is refused: nothing of it reaches the client', async () => {
    script.push(HONEST, CHANGED);
    expect((await initialize('mal-block', 'first')).result?.serverInfo?.version).toBe('1.0.0');
    const refused = await initialize('mal-block', 'second');
    expect(refused.result).toBeUndefined();
    expect(refused.error).toMatchObject({
      code: -32040,
      data: { reason: 'artifact_drifted', server: 'mal-block', observed: { version: '6.6.6' } },
    });
    expect(refused.error?.message).toContain('toolpin approve');
  });

  it.each([
    [
      'a number for a version',
      '"serverInfo":{"name":"malicious-upstream","version":1.0}',
      { version: '(not a string) 1' },
    ],
    [
      'a hidden character in the name',
      '"serverInfo":{"name":"malicious-upstream\\u202e","version":"1.0.0"}',
      { name: 'malicious-upstream\u202e' },
    ],
    [
      'a duplicate key (the last one read)',
      '"serverInfo":{"name":"malicious-upstream","version":"1.0.0","version":"6.6.6"}',
      { version: '6.6.6' },
    ],
    ['null', '"serverInfo":null', { name: '(not an object) null' }],
    [
      'a second statement in _meta that disagrees',
      `${HONEST},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"malicious-upstream","version":"6.6.6"}}`,
      { version: '6.6.6' },
    ],
  ])('%s is never the pinned identity', async (_case, stated, observed) => {
    script.push(stated);
    const refused = await initialize('mal-block', 'odd');
    expect(refused.result).toBeUndefined();
    expect(refused.error?.data).toMatchObject({ reason: 'artifact_drifted', observed });
    expect(lastDrift('mal-block')).toMatchObject({ action: 'refused', observed });
  });

  it('a hidden character is shown escaped in the summary', async () => {
    script.push('"serverInfo":{"name":"malicious-upstream\\u202e","version":"1.0.0"}');
    await initialize('mal-block', 'hidden');
    expect(String(lastDrift('mal-block')?.summary)).toContain('malicious-upstream\\u{202e}');
  });

  it('no serverInfo at all is drift from the pinned one', async () => {
    script.push('');
    const refused = await initialize('mal-block', 'none');
    expect(refused.error?.data).toMatchObject({ reason: 'artifact_drifted', observed: null });
    expect(String(lastDrift('mal-block')?.summary)).toMatch(/-> no serverInfo stated$/);
  });

  it('an endless version is judged, and logged bounded', async () => {
    script.push(`"serverInfo":{"name":"malicious-upstream","version":"${'9'.repeat(100_000)}"}`);
    await initialize('mal', 'endless');
    const observed = lastDrift('mal')?.observed as { version: string };
    expect(observed.version).toHaveLength(513);
    expect(observed.version.endsWith('…')).toBe(true);
  });

  it('members beside the pinned name and version are not pinned: verified, passed as served', async () => {
    script.push(
      '"serverInfo":{"name":"malicious-upstream","version":"1.0.0","title":"Trusted by toolpin","x-odd":{"deep":[1,2]}}',
    );
    const drifts = gateway.events('upstream.artifact_drifted').length;
    const answer = await initialize('mal', 'extras');
    expect(answer.result?.serverInfo).toEqual({
      name: 'malicious-upstream',
      version: '1.0.0',
      title: 'Trusted by toolpin',
      'x-odd': { deep: [1, 2] },
    });
    expect(gateway.events('upstream.artifact_drifted')).toHaveLength(drifts);
  });

  it('a duplicate key: the client receives the version that was judged, serialized once by the gateway', async () => {
    script.push('"serverInfo":{"name":"malicious-upstream","version":"1.0.0","version":"6.6.6"}');
    const answer = await initialize('mal', 'duplicate');
    expect(answer.result?.serverInfo?.version).toBe('6.6.6');
    expect(lastDrift('mal')).toMatchObject({ action: 'flagged', observed: { version: '6.6.6' } });
  });
});
