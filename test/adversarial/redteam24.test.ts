// The red-team pass over issue 24's fixes (answer correlation, bounded validation), as an attacker
// with a raw upstream and a raw client. Each finding is reproduced against the reference the
// gateway claims to follow (ECMAScript patterns as JSON Schema defines them, one answer per
// request) and shows what the gateway does.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGatewayHarness, type GatewayHarness } from '../support/gatewayHarness.js';
import { pinFor } from '../support/pinFor.js';
import { initializeRequest } from '../support/rawMcp.js';
import { useScoped, type Closable } from '../support/useScoped.js';
import { RAW_ECHO, runWrapInProcess, stdioPinFor, writePin } from '../transports/support.js';
import { answerText, sentinelText } from './support/framing.js';
import { responsesIn } from './support/lenientRead.js';
import { startMaliciousUpstream, type MaliciousUpstream } from './support/maliciousUpstream.js';
import { RawConnection, rawRequest } from './support/rawClient.js';
import { openSession, postJson } from './support/rig.js';
import { ECHO } from './support/tools.js';

interface Setup extends Closable {
  readonly upstream: MaliciousUpstream;
  readonly gateway: GatewayHarness;
  readonly endpoint: string;
  readonly session: Record<string, string>;
}

/** A malicious upstream listing `tools` exactly, a gateway pinning them at `/rt/mcp`, one session. */
function useSetup(tools: readonly Record<string, unknown>[]): Setup {
  return useScoped(async () => {
    const upstream = await startMaliciousUpstream();
    const gateway = await startGatewayHarness([pinFor('rt', upstream.url, tools)]);
    const endpoint = `${gateway.url}/rt/mcp`;
    return {
      upstream,
      gateway,
      endpoint,
      session: await openSession(endpoint),
      close: async () => {
        await gateway.close();
        await upstream.close();
      },
    };
  });
}

/** The upstream lists `tools`; any other request goes to `other` (else the default behaviour). */
function serveListing(
  upstream: MaliciousUpstream,
  tools: readonly Record<string, unknown>[],
  other?: (message: Record<string, unknown>, res: import('node:http').ServerResponse) => boolean,
): void {
  upstream.behaviour = ({ res, message }) => {
    if (message.method === 'tools/list') {
      answerText(
        res,
        'application/json',
        JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { tools } }),
      );
      return true;
    }
    return other?.(message, res) ?? false;
  };
}

function callOf(id: string | number, name: string, args: Record<string, unknown>): Record<string, unknown> {
  return { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } };
}

// --- Finding A: pinned patterns read with RE2's meaning where ECMAScript's differs ---------------

const LINE = '^.+$';
const PYTHON_HEX = '(?i)^[a-f0-9]+$';
const WORD = '^\\S+$';
const PATTERN_TOOLS = [
  {
    name: 'header',
    description: 'Sets one HTTP header on the outgoing request.',
    inputSchema: {
      type: 'object',
      properties: {
        // One line: what keeps a header value from starting a second header (CRLF injection).
        value: { type: 'string', pattern: LINE },
        // One word, no whitespace of any kind.
        name: { type: 'string', pattern: WORD },
      },
      required: ['value', 'name'],
    },
  },
  {
    name: 'hex',
    description: 'Looks an object up by its hex id.',
    // Python's spelling: ECMAScript refuses `(?i)`, RE2 reads it as case-insensitive.
    inputSchema: { type: 'object', properties: { id: { type: 'string', pattern: PYTHON_HEX } } },
  },
];

/** The pinned patterns as JSON Schema defines `pattern` (ECMA-262; Ajv's own engine uses the `u` flag). */
function ecmaScriptValid(args: { value?: unknown; name?: unknown }): boolean {
  return new RegExp(LINE, 'u').test(String(args.value)) && new RegExp(WORD, 'u').test(String(args.name));
}

describe('finding A: a pinned pattern is checked as ECMAScript reads it', () => {
  const setup = useSetup(PATTERN_TOOLS);
  beforeEach(() => {
    setup.upstream.reset();
    serveListing(setup.upstream, PATTERN_TOOLS);
  });

  const cases: readonly [string, { value: string; name: string }][] = [
    [
      'a carriage return in a one-line value (`.` matches \\r in RE2)',
      { value: 'x\rSet-Cookie: a=b', name: 'X-A' },
    ],
    ['a line separator in a one-line value', { value: 'x\u2028y', name: 'X-A' }],
    ['a no-break space in a one-word value (`\\S` is ASCII in RE2)', { value: 'x', name: 'X\u00a0A' }],
    ['an ideographic space in a one-word value', { value: 'x', name: 'X\u3000A' }],
  ];

  it.each(cases)('ECMAScript refuses %s', (_, args) => {
    expect(ecmaScriptValid(args)).toBe(false);
    expect(ecmaScriptValid({ value: 'x', name: 'X-A' })).toBe(true);
  });

  it.each(cases)('the gateway refuses %s (arguments_invalid), never forwards it', async (_, args) => {
    const reply = await postJson(setup.endpoint, callOf('p1', 'header', args), setup.session);
    const [answer] = responsesIn(reply.body);
    expect(answer?.error).toMatchObject({ code: -32040, data: { reason: 'arguments_invalid' } });
    expect(setup.upstream.executed).toEqual([]);
  });

  it('refuses a pattern ECMAScript cannot read (unverifiable), where RE2 read it its own way', async () => {
    expect(() => new RegExp(PYTHON_HEX, 'u')).toThrow(SyntaxError);
    const reply = await postJson(setup.endpoint, callOf('p3', 'hex', { id: 'ABC' }), setup.session);
    expect(responsesIn(reply.body)[0]?.error).toMatchObject({
      code: -32040,
      data: { reason: 'unverifiable' },
    });
    expect(setup.upstream.executed).toEqual([]);
  });

  it('still forwards a value both engines accept', async () => {
    const reply = await postJson(
      setup.endpoint,
      callOf('p2', 'header', { value: 'x y', name: 'X-A' }),
      setup.session,
    );
    expect(responsesIn(reply.body)[0]?.result).toBeDefined();
    expect(setup.upstream.executed).toEqual(['header']);
  });
});

// --- Finding B: one request, two answers (an -32042 the gateway wrote, then the upstream's) -------

/**
 * Opens the session's GET stream on the gateway over a raw connection with exactly the session's
 * headers (the caller's identity is every forwarded header: the POSTs and this stream are one
 * caller), and waits until the upstream holds its own GET stream open.
 */
async function openGetStream(setup: Setup): Promise<RawConnection> {
  const connection = await RawConnection.open(setup.endpoint);
  const headers = Object.entries({ ...setup.session, Accept: 'text/event-stream' });
  connection.write(rawRequest('GET', setup.endpoint, headers));
  await setup.upstream.waitForGetStream();
  return connection;
}

/** Everything the GET stream carried once `until` appeared on it. */
async function readUntil(connection: RawConnection, until: string): Promise<string> {
  await connection.waitFor((c) => c.received.includes(until), until);
  connection.close();
  return connection.received;
}

describe('finding B: the gateway answers a request it declared unanswered a second time', () => {
  const setup = useSetup([ECHO]);
  beforeEach(() => setup.upstream.reset());

  it('the late answer on the session stream is dropped after -32042 unanswered', async () => {
    const { upstream, endpoint, session } = setup;
    const late = { jsonrpc: '2.0', id: 'd1', result: { content: [{ type: 'text', text: 'LATE-ANSWER' }] } };
    upstream.behaviour = ({ res, message }) => {
      if (message.method !== 'tools/call') return false;
      // A valid JSON body that answers nothing: the gateway answers d1 itself (-32042 unanswered)…
      answerText(res, 'application/json', sentinelText('not-the-answer'));
      return true;
    };
    const stream = await openGetStream(setup);
    const reply = await postJson(endpoint, callOf('d1', 'echo', { text: 'x' }), session);
    const answers = responsesIn(reply.body).filter((message) => message.id === 'd1');
    expect(answers).toEqual([expect.objectContaining({ error: expect.objectContaining({ code: -32042 }) })]);
    // …and the upstream answers d1 afterwards on the session's GET stream (once the client has the
    // -32042: the order this test is about, whatever the machine's load).
    upstream.pushOnGetStreams(`data: ${JSON.stringify(late)}\n\ndata: ${sentinelText('end')}\n\n`);
    const streamed = await readUntil(stream, '"end"');
    // One request, one answer: the second (the upstream's late one) must not reach the client.
    expect(streamed).not.toContain('LATE-ANSWER');
  });

  it('an answer on the session stream first, then -32042 unanswered on the POST', async () => {
    const { upstream, endpoint, session } = setup;
    const early = { jsonrpc: '2.0', id: 'd2', result: { content: [{ type: 'text', text: 'EARLY-ANSWER' }] } };
    let answerPost: (() => void) | undefined;
    upstream.behaviour = ({ res, message }) => {
      if (message.method !== 'tools/call') return false;
      // The POST's JSON body (answering nothing) only once the client has read the early answer:
      // the order this test is about, whatever the machine's load.
      answerPost = () => answerText(res, 'application/json', sentinelText('not-the-answer'));
      upstream.pushOnGetStreams(`data: ${JSON.stringify(early)}\n\ndata: ${sentinelText('end')}\n\n`);
      return true;
    };
    const stream = await openGetStream(setup);
    const replying = postJson(endpoint, callOf('d2', 'echo', { text: 'x' }), session);
    const streamed = await readUntil(stream, '"end"');
    answerPost?.();
    const reply = await replying;
    expect(streamed).toContain('EARLY-ANSWER');
    // d2 was answered on the session stream: the POST must not answer it again.
    expect(responsesIn(reply.body).filter((message) => message.id === 'd2')).toEqual([]);
  });
});

// --- Finding C: the bridge answers -32042 for an invalid line, then relays the valid one ---------

/** A stdio server that answers every tools/call twice: an invalid line (result beside `error: null`), then a valid one. */
const TWICE_SERVER = `
const echo = ${JSON.stringify(RAW_ECHO)};
let buffer = '';
process.stdin.on('data', (chunk) => {
  buffer += chunk;
  for (let at = buffer.indexOf('\\n'); at !== -1; at = buffer.indexOf('\\n')) {
    const line = buffer.slice(0, at);
    buffer = buffer.slice(at + 1);
    const m = JSON.parse(line);
    const out = (value) => process.stdout.write(JSON.stringify(value) + '\\n');
    if (m.method === 'initialize')
      out({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'twice', version: '1' } } });
    else if (m.method === 'tools/list') out({ jsonrpc: '2.0', id: m.id, result: { tools: [echo] } });
    else if (m.method === 'tools/call') {
      out({ jsonrpc: '2.0', id: m.id, result: { content: [] }, error: null });
      out({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: 'SECOND-ANSWER' }] } });
    }
  }
});
process.stdin.on('end', () => process.exit(0));
`;

describe('finding C: wrap (the message bridge) answers one request twice', () => {
  it('an invalid line answered -32042, then the valid line under the same id is dropped', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'toolpin-rt24-'));
    const command = [process.execPath, '-e', TWICE_SERVER];
    const pinFile = await writePin(dir, stdioPinFor('twice', command, [RAW_ECHO]));
    const wrap = runWrapInProcess(pinFile, undefined);
    let received = '';
    wrap.stdout.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
    const send = (message: unknown): void => void wrap.stdin.write(`${JSON.stringify(message)}\n`);
    const answersTo = (id: number): Record<string, unknown>[] =>
      received
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>)
        .filter((message) => message.id === id);
    const until = async (done: () => boolean): Promise<void> => {
      for (let waited = 0; !done() && waited < 5000; waited += 20)
        await new Promise((r) => setTimeout(r, 20));
    };
    try {
      send(initializeRequest(0));
      await until(() => answersTo(0).length > 0);
      send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      send(callOf(5, 'echo', { text: 'x' }));
      await until(() => answersTo(5).length > 0);
      await new Promise((r) => setTimeout(r, 200));
      const answers = answersTo(5);
      expect(answers[0]?.error).toMatchObject({ code: -32042, data: { reason: 'invalid_message' } });
      // One request, one answer.
      expect(answers).toHaveLength(1);
    } finally {
      await wrap.end();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

// --- Finding D (fixed for ids): integers past 2^53 do not survive the gateway's round trip --------

describe('finding D: an id or argument past 2^53 is changed on its way through', () => {
  const setup = useSetup([ECHO]);
  beforeEach(() => setup.upstream.reset());
  // Two ids a client (Python, Go: exact integers) tells apart become one: 2^53 + 1 is sent as 2^53,
  // and the answer comes back under an id the client never used. A numeric id beyond 2^53 - 1 is now
  // refused at parse (-32600) like an id of the wrong type, and dropped when an upstream sends one.
  const call = (id: string): string =>
    `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":{"text":"x","n":${id}}}}`;

  it('reproduced directly: the upstream receives the exact text', async () => {
    await postJson(setup.upstream.url, call('9007199254740993'), setup.session);
    expect(setup.upstream.requests.at(-1)?.text).toContain('"id":9007199254740993');
  });

  it('is refused at parse (or sent as written), never sent as another number', async () => {
    const reply = await postJson(setup.endpoint, call('9007199254740993'), setup.session);
    const sent = setup.upstream.requests.find((request) => request.text.includes('tools/call'));
    expect(sent === undefined ? reply.body : sent.text).not.toContain('9007199254740992');
    expect(sent).toBeUndefined();
    expect(reply.status).toBe(400);
    expect(JSON.parse(reply.body)).toMatchObject({ id: null, error: { code: -32600 } });
  });
});
