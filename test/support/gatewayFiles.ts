import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A temp folder holding a gateway file (`gateway.json`) and its `servers/` folder of pin files. */
export interface GatewayFiles {
  readonly dir: string;
  /** The gateway file. */
  readonly file: string;
  remove(): Promise<void>;
}

/**
 * Writes a gateway file listening on 127.0.0.1 port 0 (MCP and admin) with `extra` merged in, and
 * one pin file per server (`<name>.json`, or `<name>.yaml` written by toolpin's own serializer with
 * `format: 'yaml'`), into a new temp folder: what the in-process harness and `toolpin serve` start from.
 */
export async function writeGatewayFiles(
  pins: readonly Record<string, unknown>[],
  extra: Record<string, unknown> = {},
  options: { readonly format?: 'json' | 'yaml' } = {},
): Promise<GatewayFiles> {
  const dir = await mkdtemp(join(tmpdir(), 'toolpin-e2e-'));
  await mkdir(join(dir, 'servers'));
  const yaml = options.format === 'yaml';
  // Imported only when asked: a test that spawns `toolpin serve` need not load the gateway itself.
  const { serializePinFile } = yaml ? await import('@toolpin/gateway') : { serializePinFile: undefined };
  for (const pin of pins) {
    const text =
      serializePinFile === undefined
        ? JSON.stringify(pin, null, 2)
        : serializePinFile(pin as unknown as Parameters<typeof serializePinFile>[0], 'yaml');
    await writeFile(join(dir, 'servers', `${String(pin.name)}.${yaml ? 'yaml' : 'json'}`), text);
  }
  const file = join(dir, 'gateway.json');
  await writeFile(
    file,
    JSON.stringify({
      listen: { host: '127.0.0.1', port: 0 },
      admin: { host: '127.0.0.1', port: 0 },
      servers: './servers',
      ...extra,
    }),
  );
  return { dir, file, remove: () => rm(dir, { recursive: true, force: true }) };
}
