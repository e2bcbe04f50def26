import { encodeToolKey } from '@toolpin/digest';
import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { writeFileAtomic } from '../config/writeFileAtomic.js';
import { ExitCodes } from '../defaults.js';
import { CliInputError, reportInputError } from './cliInputError.js';
import type { CliIo } from './cliIo.js';
import { newSigningKeyPair } from './pinSigner.js';

/** Options of {@link runKey}. */
export interface KeyCommandOptions {
  /** The tool name whose fold key is printed. */
  readonly name?: string;
  /** Make a signing key pair: `<prefix>.private.jwk` (0600) and `<prefix>.public.jwk`. */
  readonly new?: string;
}

/**
 * `toolpin key <name>`: prints the fold key of a tool name. `toolpin key --new <prefix>`: makes an
 * Ed25519 key pair for signed approvals (docs/pin-lifecycle.md#signed-approvals) and prints its kid.
 */
export async function runKey(options: KeyCommandOptions, io: CliIo): Promise<number> {
  try {
    if (options.new !== undefined) {
      if (options.name !== undefined) throw new CliInputError('give a tool name or --new <prefix>, not both');
      const { privateJwk, publicJwk, kid } = await newSigningKeyPair();
      const privateFile = `${options.new}.private.jwk`;
      const publicFile = `${options.new}.public.jwk`;
      // Never over a key: a new pair replaces nothing (rotation is a new prefix, docs/pin-lifecycle.md).
      for (const file of [privateFile, publicFile])
        if (existsSync(file)) throw new CliInputError(`${file} exists: choose another prefix`);
      await writeFileAtomic(privateFile, `${JSON.stringify(privateJwk, null, 2)}\n`, 0o600);
      await writeFileAtomic(publicFile, `${JSON.stringify(publicJwk, null, 2)}\n`, 0o644);
      io.stderr.write(
        `wrote ${privateFile} (keep it private: it signs approvals) and ${publicFile} (list it in the gateway file's trustedKeys)\n`,
      );
      io.stdout.write(`${kid}\n`);
      return ExitCodes.OK;
    }
    if (options.name === undefined)
      throw new CliInputError('give a tool name, or --new <prefix> to make a signing key pair');
    io.stdout.write(`${encodeToolKey(options.name)}\n`);
    return ExitCodes.OK;
  } catch (error) {
    return reportInputError('key', error, io);
  }
}

/** Registers `toolpin key` on the program: parses the arguments and hands them to {@link runKey}. */
export function registerKeyCommand(program: Command, io: CliIo, done: (code: number) => void): void {
  program
    .command('key')
    .description(
      'print the fold key (tool:…) of a tool name; or, with --new <prefix>, make an Ed25519 key pair that signs approvals',
    )
    .argument('[name]', 'the tool name')
    .option('--new <prefix>', 'write <prefix>.private.jwk (0600) and <prefix>.public.jwk; print the key id')
    .action(async (name: string | undefined, options: { new?: string }) =>
      done(await runKey({ ...(name === undefined ? {} : { name }), ...options }, io)),
    );
}
