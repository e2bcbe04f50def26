import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { DigestError, HASHED_MEMBERS, TRACE_PROFILE, digestTool, restrictTool } from '../src/index.js';
import { toolArbitrary } from './arbitraries.js';

function sha256(text: string): string {
  return 'sha256:' + createHash('sha256').update(text, 'utf8').digest('hex');
}

describe('digestTool', () => {
  it('hashes the JCS form of {"profile", "tool"} with the tool restricted to six members', () => {
    const tool = { name: 'q', description: 'd', _meta: { x: 1 }, extra: true };
    expect(digestTool(tool)).toBe(
      sha256(`{"profile":"${TRACE_PROFILE}","tool":{"description":"d","name":"q"}}`),
    );
  });

  it('returns sha256: and 64 lowercase hex characters', () => {
    expect(digestTool({ name: 'x' })).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it('does not change when _meta or unknown members change', () => {
    fc.assert(
      fc.property(toolArbitrary, fc.jsonValue(), fc.jsonValue(), (tool, meta, other) => {
        expect(digestTool({ ...tool, _meta: meta, somethingElse: other })).toBe(digestTool(tool));
      }),
    );
  });

  it('treats a member set to null the same as an absent member', () => {
    fc.assert(
      fc.property(toolArbitrary, fc.constantFrom(...HASHED_MEMBERS), (tool, member) => {
        const absent: Record<string, unknown> = { ...tool };
        delete absent[member];
        expect(digestTool({ ...tool, [member]: null })).toBe(digestTool(absent));
      }),
    );
  });

  it.each([
    ['an empty string', ''],
    ['an empty object', {}],
    ['false', false],
  ])('hashes %s, unlike an absent member', (_label, value) => {
    expect(digestTool({ name: 'x', title: value })).not.toBe(digestTool({ name: 'x' }));
  });

  it('differs under another profile label', () => {
    expect(digestTool({ name: 'x' }, { profile: 'other.v1' })).not.toBe(digestTool({ name: 'x' }));
  });

  it('names the tool when a member cannot be canonicalized', () => {
    expect(() => digestTool({ name: 'calc', inputSchema: { max: Infinity } })).toThrow(
      expect.objectContaining({
        code: 'DIGEST_NOT_CANONICAL',
        data: { name: 'calc', reason: 'Infinity is not allowed' },
        message:
          'tool "calc" has no digest: value cannot be canonicalized by RFC 8785: Infinity is not allowed',
      }),
    );
  });

  it.each([null, [], 'tool', 3])('rejects %p with DIGEST_TOOL_NOT_OBJECT', (value) => {
    expect(() => digestTool(value)).toThrow(DigestError);
    expect(() => digestTool(value)).toThrow(expect.objectContaining({ code: 'DIGEST_TOOL_NOT_OBJECT' }));
  });
});

describe('restrictTool', () => {
  it('keeps the six members and drops null, undefined, _meta and unknown members', () => {
    expect(
      restrictTool({ name: 'a', title: null, description: '', annotations: undefined, _meta: {}, x: 1 }),
    ).toEqual({ name: 'a', description: '' });
  });
});
