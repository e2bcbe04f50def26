import {
  DigestError,
  MAX_CANONICAL_DEPTH,
  digestInstructions,
  digestPrompt,
  digestPromptCatalog,
  digestTemplate,
  digestTool,
  encodePromptKey,
  encodeTemplateKey,
  encodeToolKey,
} from '../src/index.js';

// How each profile's preimage is formed where the README's rules are easy to misread: which
// objects the nesting limit counts, and how non-string instructions, null argument members and
// non-string names are hashed. The literal digests were computed when written by Python's json
// (sorted keys, no spaces) and hashlib, independently of this package: for these values (ASCII
// text, small integers, arrays, no floats) that is byte for byte RFC 8785. They are the README's.

/** `n` nested arrays: `[]` is 1, `[[]]` is 2. */
function nested(n: number): unknown[] {
  let value: unknown[] = [];
  for (let level = 1; level < n; level++) value = [value];
  return value;
}

function tooDeep(digest: () => string): unknown {
  try {
    digest();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('the nesting limit counts the whole preimage of the surface profiles', () => {
  it('is 256 levels', () => {
    expect(MAX_CANONICAL_DEPTH).toBe(256);
  });

  it('a prompt object is level 2 (the preimage is 1): 254 levels inside a member fit, 255 do not', () => {
    expect(digestPrompt({ name: 'deep', description: nested(254) })).toBe(
      'sha256:77c0803c4665387cc6e8e7390c0f31f35a13013c2af8ab1b69faff50094d2533',
    );
    const error = tooDeep(() => digestPrompt({ name: 'deep', description: nested(255) }));
    expect(error).toBeInstanceOf(DigestError);
    expect(error).toMatchObject({ code: 'DIGEST_TOO_DEEP', data: { name: 'deep' } });
  });

  it('a resource template object is level 2 as well', () => {
    const at = { uriTemplate: 'deep:///{x}', description: nested(254) };
    expect(digestTemplate(at)).toBe(
      'sha256:eef825b93cf463568be3b9780d25a2eac6c6a4cb280e17ff4691f73275069481',
    );
    expect(tooDeep(() => digestTemplate({ ...at, description: nested(255) }))).toMatchObject({
      code: 'DIGEST_TOO_DEEP',
    });
  });

  it('instructions that are not text are level 2: 255 levels fit, 256 do not', () => {
    expect(digestInstructions(nested(255))).toBe(
      'sha256:5cf724151b7ccb263c39e87ff2304d78675d1109e2ba7161a083d0525b118ffb',
    );
    expect(tooDeep(() => digestInstructions(nested(256)))).toMatchObject({ code: 'DIGEST_TOO_DEEP' });
  });

  it('a tool object is level 1 (the published wrapper is not counted): 255 levels inside a member fit', () => {
    expect(digestTool({ name: 'deep', inputSchema: nested(255) })).toBe(
      'sha256:029fde0e53027eec1b7acdec2b7e1f93a0ae8746c9f635a2d04cf908bd370af4',
    );
    expect(tooDeep(() => digestTool({ name: 'deep', inputSchema: nested(256) }))).toMatchObject({
      code: 'DIGEST_TOO_DEEP',
    });
  });
});

describe('instructions that are not a string are hashed as served', () => {
  it('a number, an object and false each have their own digest, never that of a text or of none', () => {
    expect(digestInstructions(42)).toBe(
      'sha256:52ad38915c01498d7ff15f45393d168ccfb5b21903a935ab9d767573166655d4',
    );
    expect(digestInstructions({ text: 'Use greet.' })).toBe(
      'sha256:22eb9ba88caa2cb5578703458efb297fccbf889572e32e355a8a121a217ec9ea',
    );
    expect(digestInstructions(false)).toBe(
      'sha256:ad5cfb082896192ef11614db61e672c9af83952c04dd783d7bfd216ae0bc49ab',
    );
    expect(digestInstructions(42)).not.toBe(digestInstructions('42'));
    expect(digestInstructions(false)).not.toBe(digestInstructions(undefined));
  });

  it('null is no instructions, as absent is', () => {
    expect(digestInstructions(null)).toBe(digestInstructions(undefined));
  });
});

describe('null members of prompt arguments', () => {
  it('a null member of an argument is absent', () => {
    expect(
      digestPrompt({ name: 'p', arguments: [{ name: 'a', title: null, description: null, required: null }] }),
    ).toBe(digestPrompt({ name: 'p', arguments: [{ name: 'a' }] }));
  });

  it('a null argument is not an object: it stays in the array, hashed as served', () => {
    expect(digestPrompt({ name: 'p', arguments: [null, { name: 'a' }] })).toBe(
      'sha256:0fe4020f0836a90f21c5c91954b856b52247519f5d24fe2c36a235ed65f16903',
    );
    expect(digestPrompt({ name: 'p', arguments: [null, { name: 'a' }] })).not.toBe(
      digestPrompt({ name: 'p', arguments: [{ name: 'a' }] }),
    );
  });

  it('null arguments are absent arguments', () => {
    expect(digestPrompt({ name: 'p', arguments: null })).toBe(digestPrompt({ name: 'p' }));
  });
});

describe('names that are not strings', () => {
  it('key as <prefix>:unnamed, on every surface', () => {
    expect(encodeToolKey(7)).toBe('tool:unnamed');
    expect(encodePromptKey(7)).toBe('prompt:unnamed');
    expect(encodeTemplateKey({ uri: 'x' })).toBe('template:unnamed');
  });

  it('are hashed as served: the name 7 is in the digest, and differs from no name and from "7"', () => {
    expect(digestPrompt({ name: 7 })).toBe(
      'sha256:74fc35e07f962366861195d20f7eff5fb84b2f9ade80434a746b32c449134b7b',
    );
    expect(digestPrompt({ name: 7 })).not.toBe(digestPrompt({}));
    expect(digestPrompt({ name: 7 })).not.toBe(digestPrompt({ name: '7' }));
  });

  it('two unnamed items share their key and fold as duplicates', () => {
    const result = digestPromptCatalog([{ name: 7 }, { name: false }]);
    expect(result.items.map((item) => [item.name, item.key])).toEqual([
      [undefined, 'prompt:unnamed'],
      [undefined, 'prompt:unnamed'],
    ]);
    expect(Object.keys(result.entries)).toEqual(['prompt:unnamed']);
  });
});
