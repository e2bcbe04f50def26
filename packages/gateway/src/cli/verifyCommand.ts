import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { parseServerConfig } from '../config/pinFile.js';
import { pinContentDigest } from '../config/pinSignature.js';
import { parseDocumentText } from '../config/readDocument.js';
import { ExitCodes } from '../defaults.js';
import { GatewayError } from '../errors.js';
import { CliInputError, reportInputError } from './cliInputError.js';
import type { CliIo } from './cliIo.js';
import { collect } from './commonOptions.js';
import { readKeyFiles } from './readKeyFiles.js';

/** Options of {@link runVerify}. */
export interface VerifyCommandOptions {
  /** The pin file. */
  readonly file: string;
  /** Public key files (Ed25519 JWK) to trust; at least one. */
  readonly key?: readonly string[];
}

/**
 * `toolpin verify <pin> --key <public.jwk>…`: checks offline what the gateway checks at load under
 * `requireSignature`: the pin's digests, and a signature by one of the keys over its content.
 * Exit 0 signed and valid, 1 not (unsigned, another key, changed since signed, digests wrong), 2 bad input.
 */
export async function runVerify(options: VerifyCommandOptions, io: CliIo): Promise<number> {
  try {
    const keys = await readKeyFiles(options.key ?? [], '--key');
    const file = resolve(options.file);
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      throw new CliInputError(
        `${options.file}: cannot read it (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
      );
    }
    try {
      const document = parseDocumentText(text, file, 'GW_PIN_FILE_INVALID');
      const server = parseServerConfig(document, file, { requireSignature: true, trustedKeys: keys });
      const signer = keys.find((key) => key.kid === server.signedBy);
      io.stdout.write(
        `${file}: signed by ${server.signedBy ?? '?'} (${signer?.file ?? '?'}); content ${pinContentDigest(document)}\n`,
      );
      return ExitCodes.OK;
    } catch (error) {
      if (!(error instanceof GatewayError)) throw error;
      io.stdout.write(`${file}: not verified: ${error.code}: ${error.message}\n`);
      return ExitCodes.FAILED;
    }
  } catch (error) {
    return reportInputError('verify', error, io);
  }
}

/** Registers `toolpin verify` on the program. */
export function registerVerifyCommand(program: Command, io: CliIo, done: (code: number) => void): void {
  program
    .command('verify')
    .description(
      'check a pin file offline: its digests, and a signature by one of the keys over its content (exit 0 valid, 1 not, 2 bad input)',
    )
    .argument('<pin-file>', 'pin file (YAML or JSON)')
    .option(
      '--key <public-key>',
      'a trusted public key (Ed25519 JWK, toolpin key --new); repeatable',
      collect,
      [],
    )
    .action(async (file: string, options: { key?: string[] }) =>
      done(await runVerify({ ...options, file }, io)),
    );
}
