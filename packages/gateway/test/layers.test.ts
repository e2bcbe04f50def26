import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { GATEWAY_FLOORS, floorsLine, type Floor } from '../layers.js';

// The layering of docs/architecture.md, enforced by eslint.config.js: these tests lint source
// text in process (ESLint's Node API, the repository's own config) as if it lived in src/.
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../../..');
const SRC = join(ROOT, 'packages/gateway/src');
const RULE = 'no-restricted-imports';

const eslint = new ESLint({ cwd: ROOT, overrideConfigFile: join(ROOT, 'eslint.config.js') });

/** The messages of linting `text` as the file `path` (relative to the repository). */
async function lint(
  path: string,
  text: string,
): Promise<{ line: number; ruleId: string | null; message: string }[]> {
  const [result] = await eslint.lintText(text, { filePath: join(ROOT, path) });
  if (result === undefined) throw new Error(`no lint result for ${path}`);
  return result.messages.map(({ line, ruleId, message }) => ({ line, ruleId, message }));
}

/** An import of `floor` as written from a file of `from` (a folder of src/ or src/errors.ts). */
function importOf(from: Floor, floor: Floor): string {
  const base = from.kind === 'folder' ? '..' : '.';
  return floor.kind === 'folder' ? `${base}/${floor.name}/someModule.js` : `${base}/${floor.name}.js`;
}

function fileOf(floor: Floor): string {
  return floor.kind === 'folder'
    ? `packages/gateway/src/${floor.name}/layeringProbe.ts`
    : `packages/gateway/src/${floor.name}.ts`;
}

describe('the import layering (docs/architecture.md, eslint.config.js)', () => {
  it('fails lint on a wrong-way import from wire/ (type-only too) and passes the right way', async () => {
    const wrong = await lint(
      'packages/gateway/src/wire/layeringProbe.ts',
      [
        "import { watchPinFiles } from '../ingress/pinWatcher.js';",
        "import type { SessionCatalog } from '../state/sessionCatalog.js';",
        'export const probe: unknown[] = [watchPinFiles];',
        'export type Probe = SessionCatalog;',
        '',
      ].join('\n'),
    );
    expect(wrong.map(({ line, ruleId }) => ({ line, ruleId }))).toEqual([
      { line: 1, ruleId: RULE },
      { line: 2, ruleId: RULE },
    ]);
    expect(wrong[0]?.message).toContain('wire/ may import only floors below it');

    const right = await lint(
      'packages/gateway/src/wire/layeringProbe.ts',
      [
        "import { GatewayError } from '../errors.js';",
        "import { isRequest } from './jsonRpc.js';",
        'export const probe: unknown[] = [GatewayError, isRequest];',
        '',
      ].join('\n'),
    );
    expect(right).toEqual([]);
  });

  it('lets each floor import exactly the floors below it and itself', async () => {
    for (const [index, from] of GATEWAY_FLOORS.entries()) {
      if (from.name === 'index') continue; // the barrel may import everything
      const imports = GATEWAY_FLOORS.filter((floor) => floor !== from);
      const text = [
        ...imports.map((floor, n) => `import * as m${n} from '${importOf(from, floor)}';`),
        `export const probe: unknown[] = [${imports.map((_floor, n) => `m${n}`).join(', ')}];`,
        '',
      ].join('\n');
      const flagged = (await lint(fileOf(from), text))
        .filter((message) => message.ruleId === RULE)
        .map((message) => imports[message.line - 1]?.name);
      const above = GATEWAY_FLOORS.slice(index + 1).map((floor) => floor.name);
      expect({ from: from.name, flagged }).toEqual({ from: from.name, flagged: above });
    }
  });

  it('keeps @toolpin/digest free of the gateway', async () => {
    const messages = await lint(
      'packages/digest/src/layeringProbe.ts',
      [
        "import { pinGuard } from '@toolpin/gateway';",
        "import { GatewayError } from '../../gateway/src/errors.js';",
        "import { digestTool } from './toolDigest.js';",
        'export const probe: unknown[] = [pinGuard, GatewayError, digestTool];',
        '',
      ].join('\n'),
    );
    expect(messages.map(({ line, ruleId }) => ({ line, ruleId }))).toEqual([
      { line: 1, ruleId: RULE },
      { line: 2, ruleId: RULE },
    ]);
  });

  it('covers every folder and top-level file of src/ (a new one must take a floor)', () => {
    const names = readdirSync(SRC, { withFileTypes: true }).map((entry) =>
      entry.isDirectory() ? entry.name : entry.name.replace(/\.ts$/, ''),
    );
    expect(names.sort()).toEqual(GATEWAY_FLOORS.map((floor) => floor.name).sort());
  });

  it('is the order docs/architecture.md prints', () => {
    const doc = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
    expect(doc).toContain(floorsLine());
    for (const floor of GATEWAY_FLOORS) expect(doc).toContain(floor.role);
  });
});
