import { writeFileSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { digestCatalog } from '@toolpin/digest';
import { loadPinFile, type ServerConfig } from '../../src/config/index.js';
import { watchPinFiles, type PinWatcher } from '../../src/ingress/pinWatcher.js';
import { createLogger } from '../../src/observe/logger.js';
import { TOOLS, tempDir, validPin } from '../config/fixtures.js';

type Line = Record<string, unknown>;

/** Records what the watcher asks of the gateway. */
class RouteLog {
  readonly upserts: ServerConfig[] = [];
  readonly removals: string[] = [];
  upsertServer(server: ServerConfig): void {
    this.upserts.push(server);
  }
  removeServer(name: string): void {
    this.removals.push(name);
  }
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (check()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
}

function pinText(tools: object[], extra: Record<string, unknown> = {}): string {
  const digest = digestCatalog(tools);
  return JSON.stringify({
    ...validPin(),
    definitions: {},
    pin: { catalog: digest.catalog, tools: digest.entries },
    ...extra,
  });
}

describe('watching the servers folder', () => {
  let dir: string;
  let cleanup: () => Promise<void>;
  let routes: RouteLog;
  let lines: Line[];
  let watcher: Pick<PinWatcher, 'reload' | 'close'>;
  let file: string;
  /** Runs on each log line as it is written (synchronously, inside the watcher). */
  let onLine: (line: Line) => void;

  async function start(text: string): Promise<void> {
    await writeFile(file, text);
    watcher.close();
    routes = new RouteLog();
    lines = [];
    const logger = createLogger({
      level: 'debug',
      destination: {
        write: (text: string) => {
          const line = JSON.parse(text) as Line;
          lines.push(line);
          onLine(line);
        },
      },
    });
    watcher = watchPinFiles({
      dir,
      gateway: routes,
      logger,
      initial: [await loadPinFile(file)],
      debounceMs: 20,
      settleMs: 20,
    });
  }

  beforeEach(async () => {
    ({ dir, cleanup } = await tempDir());
    file = join(dir, 'demo.json');
    onLine = () => undefined;
    watcher = { reload: () => Promise.reject(new Error('not started')), close: () => undefined };
    await start(pinText(TOOLS));
  });

  afterEach(async () => {
    watcher.close();
    await cleanup();
  });

  const events = (event: string): Line[] => lines.filter((line) => line.event === event);

  it('puts a changed pin file in force without being asked', async () => {
    await writeFile(file, pinText([TOOLS[0] as object]));
    await until(() => routes.upserts.length > 0, 'the upsert');
    expect(routes.upserts[0]?.pin.catalog).toBe(digestCatalog([TOOLS[0]]).catalog);
    expect(events('pin.reloaded')).toEqual([expect.objectContaining({ server: 'demo', file, tools: 1 })]);
  });

  it('rejects a broken file naming file and field, keeps the last good pin, and takes the fixed file', async () => {
    await writeFile(file, pinText(TOOLS, { mode: 'sometimes' }));
    await until(() => events('pin.reload_failed').length > 0, 'the rejection');
    expect(events('pin.reload_failed')[0]).toMatchObject({
      level: 50,
      file,
      field: 'mode',
      code: 'GW_PIN_FILE_INVALID',
      server: 'demo',
    });
    expect(routes.upserts).toEqual([]);
    expect(routes.removals).toEqual([]);
    await writeFile(file, pinText(TOOLS, { mode: 'monitor' }));
    await until(() => routes.upserts.length > 0, 'the fixed file');
    expect(routes.upserts[0]?.mode).toBe('monitor');
  });

  it('adds a route for a new file and removes the route of a deleted one', async () => {
    const other = join(dir, 'other.json');
    await writeFile(other, pinText(TOOLS, { name: 'other' }));
    await until(() => routes.upserts.some((server) => server.name === 'other'), 'the new route');
    expect(events('pin.added')).toEqual([expect.objectContaining({ server: 'other', file: other })]);
    await rm(file);
    await until(() => routes.removals.includes('demo'), 'the removal');
    expect(events('pin.removed')).toEqual([expect.objectContaining({ server: 'demo', file })]);
  });

  it('rejects a second file that claims a routed name', async () => {
    const twin = join(dir, 'twin.json');
    await writeFile(twin, pinText([TOOLS[1] as object]));
    await until(() => events('pin.reload_failed').length > 0, 'the rejection');
    expect(events('pin.reload_failed')[0]).toMatchObject({
      code: 'GW_PIN_DUPLICATE_NAME',
      file: twin,
      field: 'name',
      files: [file, twin],
    });
    expect(routes.upserts).toEqual([]);
  });

  it('reloads on demand, ignoring dotfiles and files that did not change', async () => {
    await writeFile(join(dir, '.demo.json.swp'), 'not a pin');
    expect(await watcher.reload()).toEqual({
      added: [],
      updated: [],
      removed: [],
      failed: [],
      deferred: [],
    });
    expect(routes.upserts).toEqual([]);
  });

  it('never applies a file whose bytes change while it is read, and applies it once they stop', async () => {
    // Between the watcher's two reads the file is written again: the first bytes are never applied.
    let rewritten = false;
    onLine = (line) => {
      if (line.event !== 'pin.reload_settling' || rewritten) return;
      rewritten = true;
      writeFileSync(file, pinText([TOOLS[1] as object], { mode: 'enforce' }));
    };
    await writeFile(file, pinText([TOOLS[0] as object], { mode: 'monitor' }));
    await until(() => routes.upserts.length > 0, 'the settled file');
    expect(rewritten).toBe(true);
    expect(events('pin.reload_deferred')[0]).toMatchObject({ file, server: 'demo', checks: 1 });
    expect(routes.upserts.map((server) => [server.mode, server.pin.catalog])).toEqual([
      ['enforce', digestCatalog([TOOLS[1]]).catalog],
    ]);
  });

  it('refuses a reload that leaves out onDrift while the pin in force blocks the server, and takes an explicit one', async () => {
    await start(pinText(TOOLS, { onDrift: 'block-server' }));
    // A file cut off before its last field: valid, and it would default onDrift to filter.
    await writeFile(file, pinText([TOOLS[0] as object]));
    await until(() => events('pin.reload_failed').length > 0, 'the refusal');
    expect(events('pin.reload_failed')[0]).toMatchObject({
      code: 'GW_PIN_FILE_INVALID',
      file,
      field: 'onDrift',
      server: 'demo',
      expected: expect.stringContaining('block-server'),
    });
    expect(routes.upserts).toEqual([]);
    await writeFile(file, pinText([TOOLS[0] as object], { onDrift: 'block-server' }));
    await until(() => routes.upserts.length > 0, 'the complete file');
    expect(routes.upserts.map((server) => server.onDrift)).toEqual(['block-server']);
    // Weakening is allowed when it is written out.
    await writeFile(file, pinText([TOOLS[0] as object], { onDrift: 'filter' }));
    await until(() => routes.upserts.length > 1, 'the explicit filter');
    expect(routes.upserts.map((server) => server.onDrift)).toEqual(['block-server', 'filter']);
  });

  it("refuses a reload that leaves out alerts while the server's own webhooks are in force", async () => {
    const alerts = { webhooks: [{ url: 'https://hooks.example/t', secret: 'a-secret-of-16-chars' }] };
    await start(pinText(TOOLS, { alerts }));
    await writeFile(file, pinText([TOOLS[0] as object]));
    await until(() => events('pin.reload_failed').length > 0, 'the refusal');
    expect(events('pin.reload_failed')[0]).toMatchObject({ field: 'alerts', file });
    expect(routes.upserts).toEqual([]);
    await writeFile(file, pinText([TOOLS[0] as object], { alerts: { webhooks: [] } }));
    await until(() => routes.upserts.length > 0, 'the explicit empty alerts');
    expect(routes.upserts[0]?.alerts).toEqual({ webhooks: [] });
  });
});

describe('watching one pin file (serve --pin)', () => {
  it('reads only that file of its folder: another pin file there is never added, removing it removes its route', async () => {
    const { dir, cleanup } = await tempDir();
    try {
      const file = join(dir, 'demo.json');
      await writeFile(file, pinText(TOOLS));
      await writeFile(join(dir, 'other.json'), pinText(TOOLS, { name: 'other' }));
      const routes = new RouteLog();
      const watcher = watchPinFiles({
        dir,
        file,
        gateway: routes,
        logger: createLogger({ level: 'silent' }),
        initial: [await loadPinFile(file)],
        settleMs: 1,
        watch: false,
      });
      try {
        await writeFile(file, pinText([TOOLS[0] as object]));
        expect(await watcher.reload()).toEqual({
          added: [],
          updated: [file],
          removed: [],
          failed: [],
          deferred: [],
        });
        expect(routes.upserts.map((server) => server.name)).toEqual(['demo']);
        await rm(file);
        expect((await watcher.reload()).removed).toEqual([file]);
        expect(routes.removals).toEqual(['demo']);
      } finally {
        watcher.close();
      }
    } finally {
      await cleanup();
    }
  });
});
