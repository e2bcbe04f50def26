import { callRequest } from '../support/rawMcp.js';
import { useScoped } from '../support/useScoped.js';
import { responsesIn } from './support/lenientRead.js';
import { answerJson, type UpstreamBehaviour, type UpstreamExchange } from './support/maliciousUpstream.js';
import { openSession, postJson, startRig } from './support/rig.js';

// A screened method spelled another way (case, full-width letters, spacing) is not the screened method
// to a strict reader, but an upstream that folds it runs the item the gateway never screened.
const LOOKALIKES = [
  'Tools/Call',
  'TOOLS/CALL',
  'tools/call ',
  'ｔｏｏｌｓ/ｃａｌｌ',
  'Prompts/Get',
  'Completion/Complete',
];

/** An upstream that reads methods without regard to case, width or spacing, and runs every call it reads. */
function foldingUpstream(executed: string[]) {
  return ({ res, message }: UpstreamExchange): boolean => {
    const method =
      typeof message.method === 'string' ? message.method.normalize('NFKC').trim().toLowerCase() : '';
    if (method !== 'tools/call') return false;
    const name = String((message.params as { name?: unknown } | undefined)?.name);
    executed.push(name);
    answerJson(res, {
      jsonrpc: '2.0',
      id: message.id,
      result: { content: [{ type: 'text', text: `ran ${name}` }] },
    });
    return true;
  };
}

/**
 * How a Java upstream compares method names with String.equalsIgnoreCase (each char equal, or equal
 * upper-cased, or equal lower-cased: `ı` upper-cases to `I`, `İ` lower-cases to `i`), reading the
 * method as a C string (cut at its first NUL, as a cJSON-style reader hands it on).
 */
function readsAs(method: string, screened: string): boolean {
  const cut = method.split('\0')[0] ?? '';
  if (cut.length !== screened.length) return false;
  for (let at = 0; at < cut.length; at += 1) {
    const a = cut[at]!;
    const b = screened[at]!;
    if (a === b || a.toUpperCase() === b.toUpperCase()) continue;
    const lower = (c: string): string => (c === 'İ' ? 'i' : c.toLowerCase());
    if (lower(a) !== lower(b)) return false;
  }
  return true;
}

/** An upstream that dispatches methods as {@link readsAs} does, and runs every call it reads. */
function javaLikeUpstream(executed: string[]) {
  return ({ res, message }: UpstreamExchange): boolean => {
    const method = typeof message.method === 'string' ? message.method : '';
    const screened = ['tools/call', 'prompts/get', 'completion/complete'].find((m) => readsAs(method, m));
    if (screened === undefined) return false;
    executed.push(`${screened}:${String((message.params as { name?: unknown } | undefined)?.name)}`);
    answerJson(res, { jsonrpc: '2.0', id: message.id, result: { content: [] } });
    return true;
  };
}

// Methods the refusal of 4de8eaa let through: a dotless or dotted capital i (Java's equalsIgnoreCase
// folds both to i), a NUL-terminated method (a C reader stops there), a zero-width space or soft hyphen
// (format characters, not spacing).
const SLIPPING = [
  'completıon/complete',
  'COMPLETİON/COMPLETE',
  'tools/call\u0000',
  'tools/call\u0000/shadow',
  'prompts/get\u0000',
];

/**
 * How the Python JSON-RPC dispatcher of Palantir's python-jsonrpc-server (python-lsp-jsonrpc's
 * MethodDispatcher) names the handler of a method: slashes become double underscores, dollar signs
 * are dropped, camel case becomes snake case; `tools/call` is `m_tools__call`.
 */
function handlerName(method: string): string {
  const snake = method
    .replace(/\//g, '__')
    .replace(/\$/g, '')
    .replace(/(.)([A-Z][a-z]+)/g, '$1_$2')
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase();
  return `m_${snake}`;
}

/** An upstream dispatching as {@link handlerName} does, with one handler: `m_tools__call`, which runs every call. */
function dispatchingUpstream(executed: string[]): UpstreamBehaviour {
  return ({ res, message }) => {
    const method = typeof message.method === 'string' ? message.method : '';
    if (handlerName(method) !== 'm_tools__call') return false;
    executed.push(String((message.params as { name?: unknown } | undefined)?.name));
    answerJson(res, { jsonrpc: '2.0', id: message.id, result: { content: [] } });
    return true;
  };
}

// Methods that dispatcher runs as tools/call.
const DISPATCHED = ['tools__call', '$tools/call', 'tools/$call', 'to$ols__ca$ll'];
// Methods no reader folds into a screened one: an upstream's own methods, forwarded as they are.
const OWN_METHODS = ['tools/calls', 'tools/call_batch', 'tools/callback', 'vendor/tools/call', 'tools_call'];

describe('a method that reads as a screened one but is not it', () => {
  const rig = useScoped(() => startRig());

  it('is real: an upstream that folds case runs an unpinned tool called as Tools/Call', async () => {
    const executed: string[] = [];
    rig.upstream.behaviour = foldingUpstream(executed);
    try {
      const reply = await postJson(rig.upstream.url, { ...callRequest('x1', 'evil'), method: 'Tools/Call' });
      expect(responsesIn(reply.body)).toEqual([expect.objectContaining({ result: expect.anything() })]);
      expect(executed).toEqual(['evil']);
    } finally {
      rig.upstream.reset();
    }
  });

  it.each(SLIPPING)('is real: a Java/C upstream runs %j as a screened method', async (method) => {
    const executed: string[] = [];
    rig.upstream.behaviour = javaLikeUpstream(executed);
    try {
      const reply = await postJson(rig.upstream.url, { ...callRequest('x1', 'evil'), method });
      expect(responsesIn(reply.body)).toEqual([expect.objectContaining({ result: expect.anything() })]);
      expect(executed).toHaveLength(1);
    } finally {
      rig.upstream.reset();
    }
  });

  it.each(DISPATCHED)(
    'is real: a python-jsonrpc-server style upstream runs %j as tools/call',
    async (method) => {
      const executed: string[] = [];
      rig.upstream.behaviour = dispatchingUpstream(executed);
      try {
        const reply = await postJson(rig.upstream.url, { ...callRequest('x1', 'evil'), method });
        expect(reply.status).toBe(200);
        expect(executed).toEqual(['evil']);
      } finally {
        rig.upstream.reset();
      }
    },
  );

  it.each([...LOOKALIKES, ...SLIPPING, ...DISPATCHED])(
    'refuses %j with -32601 and a log line; nothing reaches the upstream',
    async (method) => {
      const executed: string[] = [];
      rig.upstream.behaviour = foldingUpstream(executed);
      try {
        const session = await openSession(rig.endpoint);
        const before = rig.upstream.requests.length;
        const reply = await postJson(
          rig.endpoint,
          { jsonrpc: '2.0', id: 7, method, params: { name: 'evil', arguments: { text: 'x' } } },
          session,
        );
        expect(responsesIn(reply.body)).toEqual([
          expect.objectContaining({
            id: 7,
            error: expect.objectContaining({
              code: -32601,
              data: { reason: 'method_lookalike', server: 'mal', method },
            }),
          }),
        ]);
        expect(rig.upstream.requests.slice(before)).toEqual([]);
        expect(executed).toEqual([]);
        expect(rig.gateway.events('request.rejected')).toContainEqual(
          expect.objectContaining({ reason: 'method_lookalike', method }),
        );
      } finally {
        rig.upstream.reset();
      }
    },
  );

  it('still forwards methods that merely resemble nothing screened (tools/list spelled otherwise is judged as an answer)', async () => {
    const session = await openSession(rig.endpoint);
    const before = rig.upstream.requests.length;
    const reply = await postJson(rig.endpoint, { jsonrpc: '2.0', id: 8, method: 'Tools/List' }, session);
    // Forwarded (not a use of an item); the default upstream does not know it.
    expect(responsesIn(reply.body)).toEqual([
      expect.objectContaining({ id: 8, error: expect.objectContaining({ code: -32601 }) }),
    ]);
    expect(rig.upstream.requests.length).toBe(before + 1);
  });

  it.each(OWN_METHODS)(
    'forwards %j, which reads as no screened method (no false refusal)',
    async (method) => {
      const session = await openSession(rig.endpoint);
      const before = rig.upstream.requests.length;
      const reply = await postJson(rig.endpoint, { ...callRequest(8, 'echo'), method }, session);
      expect(responsesIn(reply.body)).toEqual([
        expect.objectContaining({
          id: 8,
          error: expect.objectContaining({ code: -32601, message: 'Method not found' }),
        }),
      ]);
      expect(rig.upstream.requests.slice(before).map((request) => request.messages[0]?.method)).toEqual([
        method,
      ]);
    },
  );
});
