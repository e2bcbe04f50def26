// Signed approvals: `toolpin key --new` makes an Ed25519 pair, `toolpin approve --sign` signs the
// pin's content (a JWS by jose), `toolpin verify` checks it offline, and a gateway file with
// `requireSignature: true` refuses to load, or to reload into, a pin that is unsigned, edited
// after signing, or signed by a key it does not trust: the last good pin stays in force.
import { copyFile, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { GatewayError } from '@toolpin/gateway';
import { parse } from 'yaml';
import { runToolpin } from '../support/runToolpin.js';
import { startGatewayHarness, type GatewayHarness } from '../support/gatewayHarness.js';
import { rejectionOf } from '../support/rejection.js';

const fixtures = fileURLToPath(new URL('../fixtures/', import.meta.url));

describe('signed pins', () => {
  let dir: string;
  let pinFile: string;
  let alice: string;
  let mallory: string;
  let signed: Record<string, unknown>;

  const document = async (): Promise<Record<string, unknown>> =>
    parse(await readFile(pinFile, 'utf8')) as Record<string, unknown>;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'toolpin-signed-'));
    await copyFile(join(fixtures, 'rawStdioServer.mjs'), join(dir, 'server.mjs'));
    await copyFile(join(fixtures, 'stdioLines.mjs'), join(dir, 'stdioLines.mjs'));
    pinFile = join(dir, 'raw.yaml');
    const pinned = await runToolpin([
      'pin',
      '--name',
      'raw',
      '--command',
      `node ${join(dir, 'server.mjs')}`,
      '--out',
      pinFile,
    ]);
    expect(pinned.code).toBe(0);
    alice = join(dir, 'alice');
    mallory = join(dir, 'mallory');
    for (const prefix of [alice, mallory]) expect((await runToolpin(['key', '--new', prefix])).code).toBe(0);
  }, 20_000);

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('toolpin key --new writes a private key only its owner reads, and prints its kid', async () => {
    expect((await stat(`${alice}.private.jwk`)).mode & 0o777).toBe(0o600);
    const publicJwk = JSON.parse(await readFile(`${alice}.public.jwk`, 'utf8')) as Record<string, unknown>;
    expect(publicJwk).toMatchObject({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA' });
    expect(publicJwk.d).toBeUndefined();
    expect((await runToolpin(['key', '--new', alice])).code).toBe(2);
    // The fold key of a tool name is printed as before.
    expect((await runToolpin(['key', 'a b'])).stdout).toBe('tool:a%20b\n');
  });

  it('approve --sign signs the reviewed pin; verify checks it offline against the trusted key only', async () => {
    const run = await runToolpin(['approve', pinFile, '--yes', '--sign', `${alice}.private.jwk`]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`signed ${pinFile} by`);
    signed = await document();
    expect(String(signed.signature)).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    const ok = await runToolpin(['verify', pinFile, '--key', `${alice}.public.jwk`]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain('signed by');
    const other = await runToolpin(['verify', pinFile, '--key', `${mallory}.public.jwk`]);
    expect(other.code).toBe(1);
    expect(other.stdout).toContain('GW_PIN_SIGNATURE');
  });

  it('verify refuses the pin once edited after signing, whatever was edited', async () => {
    const edited = join(dir, 'edited.yaml');
    await writeFile(edited, (await readFile(pinFile, 'utf8')).replace('mode: enforce', 'mode: monitor'));
    const run = await runToolpin(['verify', edited, '--key', `${alice}.public.jwk`]);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('the pin changed since it was signed');
    // Comments and layout are not content: the signature still holds.
    await writeFile(edited, `# reviewed by alice\n${await readFile(pinFile, 'utf8')}`);
    expect((await runToolpin(['verify', edited, '--key', `${alice}.public.jwk`])).code).toBe(0);
  });

  describe('a gateway with requireSignature: true', () => {
    const settings = (): Record<string, unknown> => ({
      requireSignature: true,
      trustedKeys: [`${alice}.public.jwk`],
    });

    it('refuses to start on a pin edited after signing, or signed by an untrusted key', async () => {
      const edited = { ...signed, mode: 'monitor' };
      const refused = await rejectionOf(startGatewayHarness([edited], settings()), GatewayError);
      expect(refused).toMatchObject({ code: 'GW_PIN_SIGNATURE', data: { reason: 'content_changed' } });
      const unsigned = { ...signed };
      delete unsigned.signature;
      expect(await rejectionOf(startGatewayHarness([unsigned], settings()), GatewayError)).toMatchObject({
        code: 'GW_PIN_SIGNATURE',
      });
      const strangers = await rejectionOf(
        startGatewayHarness([signed], { requireSignature: true, trustedKeys: [`${mallory}.public.jwk`] }),
        GatewayError,
      );
      expect(strangers).toMatchObject({ code: 'GW_PIN_SIGNATURE', data: { reason: 'untrusted_key' } });
    });

    describe('on reload', () => {
      let gateway: GatewayHarness;
      let served: string;

      beforeAll(async () => {
        gateway = await startGatewayHarness([signed], settings());
        served = join(gateway.dir, 'servers', 'raw.json');
      });

      afterAll(async () => {
        await gateway?.close();
      });

      const modeInForce = (): string | undefined =>
        gateway.running.gateway.routes.get('raw')?.checkpoint.config.mode;

      it('loads the signed pin', () => {
        expect(modeInForce()).toBe('enforce');
        expect(gateway.running.gateway.routes.get('raw')?.checkpoint.config.signedBy).toBeDefined();
      });

      it('keeps the last good pin when the file is edited after signing', async () => {
        await writeFile(served, JSON.stringify({ ...signed, mode: 'monitor' }));
        const summary = await gateway.running.reload();
        expect(summary.failed).toEqual([served]);
        expect(modeInForce()).toBe('enforce');
        expect(gateway.events('pin.reload_failed').at(-1)).toMatchObject({
          code: 'GW_PIN_SIGNATURE',
          file: served,
          field: 'signature',
        });
      });

      it('keeps it when the new pin is signed by an untrusted key', async () => {
        const changed = join(dir, 'changed.yaml');
        await writeFile(changed, (await readFile(pinFile, 'utf8')).replace('mode: enforce', 'mode: monitor'));
        expect(
          (await runToolpin(['approve', changed, '--yes', '--sign', `${mallory}.private.jwk`])).code,
        ).toBe(0);
        await writeFile(served, JSON.stringify(parse(await readFile(changed, 'utf8'))));
        expect((await gateway.running.reload()).failed).toEqual([served]);
        expect(modeInForce()).toBe('enforce');
        expect(gateway.events('pin.reload_failed').at(-1)).toMatchObject({ code: 'GW_PIN_SIGNATURE' });
        // Signed by the trusted key, the same change is applied.
        expect((await runToolpin(['approve', changed, '--yes', '--sign', `${alice}.private.jwk`])).code).toBe(
          0,
        );
        await writeFile(served, JSON.stringify(parse(await readFile(changed, 'utf8'))));
        expect((await gateway.running.reload()).updated).toEqual([served]);
        expect(modeInForce()).toBe('monitor');
      });
    });
  });
});
