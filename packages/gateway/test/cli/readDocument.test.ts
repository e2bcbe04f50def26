import { CliInputError } from '../../src/cli/cliInputError.js';
import { readDocument } from '../../src/cli/readDocument.js';
import { tempDir, writeIn } from '../config/fixtures.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeAll(async () => {
  ({ dir, cleanup } = await tempDir());
});
afterAll(() => cleanup());

describe("readDocument (the CLI reads catalogs and pins by the config files' YAML rule)", () => {
  it('reads JSON by the JSON grammar, YAML when the text is not JSON', async () => {
    expect(readDocument(await writeIn(dir, 'a.json', '{"tools": [{"name": "x"}]}'))).toEqual({
      tools: [{ name: 'x' }],
    });
    expect(readDocument(await writeIn(dir, 'a.yaml', 'tools:\n  - name: x\n'))).toEqual({
      tools: [{ name: 'x' }],
    });
  });

  it('refuses YAML that could be read two ways (a duplicate key), naming the line', async () => {
    const file = await writeIn(dir, 'dup.yaml', 'tools:\n  - name: x\n    name: y\n');
    expect(() => readDocument(file)).toThrow(CliInputError);
    expect(() => readDocument(file)).toThrow(
      /dup\.yaml: neither JSON nor YAML: .*unique.* at line 3, column 5/,
    );
  });

  it('refuses a file of several YAML documents', async () => {
    const file = await writeIn(dir, 'two.yaml', 'tools: []\n---\ntools: []\n');
    expect(() => readDocument(file)).toThrow(/two\.yaml: neither JSON nor YAML/);
  });
});
