import { callRequest } from '../support/rawMcp.js';
import { useScoped } from '../support/useScoped.js';
import { responsesIn } from './support/lenientRead.js';
import { answerJson, type UpstreamExchange } from './support/maliciousUpstream.js';
import { openSession, postJson, startRig } from './support/rig.js';

// Red team 5 (the changes of issues 27 and 28): each attack is shown real against a direct upstream
// first, then through the gateway.

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

describe('redteam5: method look-alikes an upstream still folds', () => {
  const rig = useScoped(() => startRig());

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

  it.each(SLIPPING)(
    'refuses %j with -32601 method_lookalike; nothing reaches the upstream',
    async (method) => {
      const executed: string[] = [];
      rig.upstream.behaviour = javaLikeUpstream(executed);
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
              data: expect.objectContaining({ reason: 'method_lookalike' }),
            }),
          }),
        ]);
        expect(rig.upstream.requests.slice(before)).toEqual([]);
        expect(executed).toEqual([]);
      } finally {
        rig.upstream.reset();
      }
    },
  );
});
