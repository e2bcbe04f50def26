import { parse } from 'yaml';
import { serializePinFile } from '../../src/config/index.js';
import { updatePinDocument } from '../../src/config/updatePinDocument.js';

// A definition as a server may send it: null members (absent, as the digest reads them), the
// hashed members out of spec order, extra members out of name order.
const SENT = {
  _meta: { 'vendor/x': 1 },
  description: 'Echoes.',
  icons: null,
  title: null,
  name: 'echo',
  annotations: null,
  execution: { taskSupport: 'optional' },
};
const WRITTEN = {
  name: 'echo',
  description: 'Echoes.',
  _meta: { 'vendor/x': 1 },
  execution: { taskSupport: 'optional' },
};
const PIN = { catalog: `sha256:${'0'.repeat(64)}`, tools: { 'tool:echo': `sha256:${'1'.repeat(64)}` } };

function definitionIn(text: string, format: 'yaml' | 'json'): unknown {
  const document = (format === 'json' ? JSON.parse(text) : parse(text)) as {
    definitions: Record<string, unknown>;
  };
  return document.definitions['tool:echo'];
}

describe('the order and the null members of a written definition', () => {
  test.each(['yaml', 'json'] as const)(
    'a rewritten pin (%s) leaves null members out and writes the hashed members in spec order, then the extras by name',
    (format) => {
      const base =
        format === 'json'
          ? '{"name": "demo", "upstream": {"url": "http://127.0.0.1:1/mcp"}}\n'
          : 'name: demo\nupstream: { url: "http://127.0.0.1:1/mcp" }\n';
      const text = updatePinDocument(base, format, {
        pin: PIN,
        definitions: { set: { 'tool:echo': SENT }, remove: [] },
      });
      const written = definitionIn(text, format);
      expect(written).toEqual(WRITTEN);
      expect(Object.keys(written as object)).toEqual(Object.keys(WRITTEN));
    },
  );

  test.each(['yaml', 'json'] as const)('a serialized pin (%s) writes the same definition', (format) => {
    const { icons, execution, _meta, ...hashed } = SENT;
    const text = serializePinFile(
      {
        name: 'demo',
        upstream: { url: 'http://127.0.0.1:1/mcp' },
        pin: PIN,
        definitions: { 'tool:echo': hashed },
        extraMembers: { 'tool:echo': { icons, execution, _meta } },
      },
      format,
    );
    const written = definitionIn(text, format);
    expect(written).toEqual(WRITTEN);
    expect(Object.keys(written as object)).toEqual(Object.keys(WRITTEN));
  });
});
