import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { loadServersDir } from '../../src/config/index.js';
import { tempDir, validPin, writeIn } from './fixtures.js';

describe('loading a folder of pin files', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  beforeEach(async () => ({ dir, cleanup } = await tempDir()));
  afterEach(() => cleanup());

  test('loads every .yaml, .yml and .json file, sorted by file name, and ignores other files', async () => {
    await writeIn(dir, 'c.json', JSON.stringify({ ...validPin(), name: 'gamma' }));
    await writeIn(dir, 'a.yaml', stringify({ ...validPin(), name: 'alpha' }));
    await writeIn(dir, 'b.yml', stringify({ ...validPin(), name: 'beta' }));
    await writeIn(dir, 'README.md', '# not a pin');
    await writeIn(dir, '.a.yaml.swp', 'garbage: [');
    await mkdir(join(dir, 'nested.yaml'));
    const servers = await loadServersDir(dir);
    expect(servers.map((s) => s.name)).toEqual(['alpha', 'beta', 'gamma']);
    expect(servers.map((s) => s.file)).toEqual(['a.yaml', 'b.yml', 'c.json'].map((name) => join(dir, name)));
  });

  test('rejects two pin files with the same name, naming both files', async () => {
    const first = await writeIn(dir, 'one.yaml', stringify(validPin()));
    const second = await writeIn(dir, 'two.json', JSON.stringify(validPin()));
    const error = await loadServersDir(dir).catch((e: unknown) => e);
    expect(error).toMatchObject({
      code: 'GW_PIN_DUPLICATE_NAME',
      data: { file: second, field: 'name', files: [first, second] },
    });
    expect((error as Error).message).toContain(first);
    expect((error as Error).message).toContain(second);
    expect((error as Error).message).toContain('"demo"');
  });

  test('reports the first broken pin file in file-name order', async () => {
    await writeIn(dir, 'a.yaml', stringify(validPin()));
    const broken = await writeIn(dir, 'b.yaml', 'name: [');
    await writeIn(dir, 'c.yaml', 'name: demo\nname: again\n');
    await expect(loadServersDir(dir)).rejects.toMatchObject({
      code: 'GW_PIN_FILE_INVALID',
      data: { file: broken },
    });
  });

  test('loads an empty folder as no servers', async () => {
    await expect(loadServersDir(dir)).resolves.toEqual([]);
  });

  test('rejects a folder that does not exist', async () => {
    await expect(loadServersDir(join(dir, 'missing'))).rejects.toMatchObject({
      code: 'GW_CONFIG_INVALID',
      data: { reason: 'ENOENT' },
    });
  });
});
