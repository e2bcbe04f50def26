import fc from 'fast-check';
import { parseDocument } from 'yaml';
import { duplicateJsonKey } from '../../src/config/duplicateJsonKey.js';
import { parseYamlText, type YamlParse } from '../../src/config/readDocument.js';

type Reading = { value: unknown } | { reason: string; line: number | undefined; column: number | undefined };

/** The YAML library's strict reading of a text, as parseYamlText read every text before its JSON path. */
function yamlReading(text: string): Reading {
  const doc = parseDocument(text, { uniqueKeys: true, prettyErrors: true, version: '1.2', merge: false });
  const problem = doc.errors[0] ?? doc.warnings[0];
  if (problem === undefined) return { value: doc.toJS({ maxAliasCount: 100 }) };
  return { reason: problem.code, line: problem.linePos?.[0].line, column: problem.linePos?.[0].col };
}

function outcome(parsed: YamlParse): Reading {
  return parsed.ok
    ? { value: parsed.value }
    : { reason: parsed.reason, line: parsed.line, column: parsed.column };
}

const indents = fc.constantFrom<string | number>(0, 1, 2, '\t');
/** A member name, sometimes spelled with a \u escape (the same name to JSON and to YAML). */
const spelled = (name: string, escaped: boolean): string =>
  escaped && name.length > 0
    ? `"\\u${name.charCodeAt(0).toString(16).padStart(4, '0')}${JSON.stringify(name.slice(1)).slice(1)}`
    : JSON.stringify(name);

describe('parseYamlText over JSON texts (JSON.parse and a linear duplicate-key check)', () => {
  it('reads any JSON text, at any indentation, exactly as the strict YAML reader does', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), indents, (value, indent) => {
        const text = JSON.stringify(value, null, indent);
        const read = outcome(parseYamlText(text));
        expect(read).toEqual(yamlReading(text));
        expect(read).toEqual({ value: JSON.parse(text) });
      }),
      { numRuns: 150 },
    );
  });

  it('refuses a key written twice in one object, however spelled and nested, as the YAML reader does (reason, line, column)', () => {
    fc.assert(
      fc.property(
        fc.string(),
        fc.boolean(),
        fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }),
        fc.jsonValue({ maxDepth: 2 }),
        fc.constantFrom('object', 'array', 'bare'),
        (name, escaped, others, value, outer) => {
          const members = Object.entries(others)
            .filter(([key]) => key !== name)
            .map(([key, member]) => `${JSON.stringify(key)}: ${JSON.stringify(member)}`);
          const twice = `{\n${[`${JSON.stringify(name)}: 1`, ...members, `${spelled(name, escaped)}: ${JSON.stringify(value)}`].join(',\n')}\n}`;
          const text = outer === 'object' ? `{"a": ${twice}}` : outer === 'array' ? `[0, ${twice}]` : twice;
          expect(duplicateJsonKey(text)).toBe(name);
          const read = outcome(parseYamlText(text));
          expect(read).toMatchObject({ reason: 'DUPLICATE_KEY' });
          expect(read).toEqual(yamlReading(text));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('sees each object apart: the same name in sibling, nested and array objects is no duplicate', () => {
    expect(
      duplicateJsonKey('{"a": {"a": 1}, "b": [{"a": 1}, {"a": 2}], "c": {"b": {"a": [1, {"a": 3}]}}}'),
    ).toBe(undefined);
    expect(duplicateJsonKey('[{"a": 1, "b": 2}, {"b": 1, "a": 2}]')).toBeUndefined();
    expect(duplicateJsonKey('{"a": [1, 2], "b": {}, "a": 3}')).toBe('a');
    expect(duplicateJsonKey('{"x": {"k": 1, "k": 2}}')).toBe('k');
    expect(duplicateJsonKey('{"": 1, "": 2}')).toBe('');
  });

  it('reads names and values holding quotes, backslashes, braces, commas and colons as strings', () => {
    expect(duplicateJsonKey('{"a\\\\": "\\"}", "a": "{\\"a\\": 1, ", "b": "\\\\"}')).toBeUndefined();
    expect(duplicateJsonKey('{"a\\\\": 1, "a\\u005c": 2}')).toBe('a\\');
    expect(duplicateJsonKey('{"k": "a,\\"k\\": 1", "k\\"": 2, "k": 3}')).toBe('k');
  });

  it('reads a pin of 5,000 tools by the JSON path, to the same value', () => {
    const tools = Object.fromEntries(Array.from({ length: 5000 }, (_, n) => [`tool${n}`, `sha256:${n}`]));
    const definitions = Object.fromEntries(
      Array.from({ length: 5000 }, (_, n) => [
        `tool${n}`,
        { name: `tool${n}`, inputSchema: { type: 'object' } },
      ]),
    );
    const text = JSON.stringify({ name: 'big', pin: { tools }, definitions }, null, 2);
    expect(parseYamlText(text)).toEqual({ ok: true, value: JSON.parse(text) });
  });

  it('leaves YAML and JSON with problems to the YAML reader: its values, its reasons and positions', () => {
    for (const text of [
      'name: demo\nmode: enforce\n',
      '{a: 1}',
      '{"a": 1,}',
      '# c\n{"a": 1}',
      '',
      '{"a": 1} {"b": 2}',
    ])
      expect(outcome(parseYamlText(text))).toEqual(yamlReading(text));
  });
});
