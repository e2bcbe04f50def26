import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { GatewayError } from '../errors.js';
import { parsePinFile } from './pinFile.js';
import type { ServerConfig } from './types.js';
import { updatePinDocument, type PinDocumentUpdate } from './updatePinDocument.js';
import { writeFileAtomic } from './writeFileAtomic.js';
import { parseDocumentText } from './readDocument.js';
import { pinSignaturePayload, setPinSignature, type PinSigner } from './pinSignature.js';

/** Options of {@link rewritePinFile}. */
export interface RewritePinFileOptions {
  /** The text the update was planned from: when the file no longer holds it, nothing is written. */
  readonly expected?: string;
  /**
   * Signs the rewritten content (`approve --sign`). Without it a rewrite drops the file's
   * `signature`, which could only be stale (it signed the content before).
   */
  readonly sign?: PinSigner;
}

/**
 * Rewrites a pin file with a new pin (approve, trust on first use): the text is updated in place
 * (comments and order kept), parsed and verified as the gateway would load it, then written
 * atomically. Resolves with the new configuration. Rejects with GatewayError
 * GW_PIN_FILE_CHANGED (someone else wrote the file meanwhile) or GW_PIN_FILE_INVALID.
 */
export async function rewritePinFile(
  file: string,
  update: PinDocumentUpdate,
  options: RewritePinFileOptions = {},
): Promise<ServerConfig> {
  const text = await readFile(file, 'utf8');
  if (options.expected !== undefined && text !== options.expected) {
    throw new GatewayError(
      'GW_PIN_FILE_CHANGED',
      `Pin file ${file} changed since it was read; nothing was written`,
      { file },
    );
  }
  const rendered = renderPinRewrite(text, file, update);
  const { text: next, server } =
    options.sign === undefined ? rendered : await signPinText(rendered.text, file, options.sign);
  await writeFileAtomic(file, next);
  return server;
}

/**
 * The text of a pin file signed by `sign` (any signature it had replaced), parsed back as the
 * gateway loads it. Throws GatewayError GW_PIN_FILE_INVALID.
 */
export async function signPinText(
  text: string,
  file: string,
  sign: PinSigner,
): Promise<{ readonly text: string; readonly server: ServerConfig }> {
  const format = extname(file).toLowerCase() === '.json' ? 'json' : 'yaml';
  const unsigned = setPinSignature(text, format, undefined);
  const jws = await sign(pinSignaturePayload(parseDocumentText(unsigned, file, 'GW_PIN_FILE_INVALID')));
  const signed = setPinSignature(unsigned, format, jws);
  return { text: signed, server: parsePinFile(signed, file) };
}

/**
 * The text a pin file holds after an update (comments and order kept), parsed and verified as the
 * gateway would load it: what {@link rewritePinFile} writes, and what a patch shows. Throws
 * GatewayError GW_PIN_FILE_INVALID when the result would not load or is not the planned pin.
 */
export function renderPinRewrite(
  text: string,
  file: string,
  update: PinDocumentUpdate,
): { readonly text: string; readonly server: ServerConfig } {
  const format = extname(file).toLowerCase() === '.json' ? 'json' : 'yaml';
  // The content changes, so a signature of it is stale: gone, unless the caller signs again.
  const next = setPinSignature(updatePinDocument(text, format, update), format, undefined);
  // Never write a pin the gateway would reject, nor one that is not the planned pin.
  const server = parsePinFile(next, file);
  const mismatch = plannedPinMismatch(server, update);
  if (mismatch !== undefined) {
    throw new GatewayError(
      'GW_PIN_FILE_INVALID',
      `Rewriting ${file} did not produce the planned pin ${mismatch.planned} (${mismatch.field})`,
      { file, field: mismatch.field },
    );
  }
  return { text: next, server };
}

/** The first digest of the planned pin the rewritten file does not hold (surfaces the update carries only). */
function plannedPinMismatch(
  server: ServerConfig,
  update: PinDocumentUpdate,
): { field: string; planned: string } | undefined {
  const planned: [string, string | undefined, string | undefined][] = [
    ['pin.catalog', update.pin.catalog, server.pin.catalog],
    ['pin.prompts.catalog', update.pin.prompts?.catalog, server.pin.prompts?.catalog],
    [
      'pin.resourceTemplates.catalog',
      update.pin.resourceTemplates?.catalog,
      server.pin.resourceTemplates?.catalog,
    ],
    ['pin.instructions', update.pin.instructions, server.pin.instructions],
    [
      'pin.artifact',
      update.pin.artifact === undefined ? undefined : JSON.stringify(update.pin.artifact),
      JSON.stringify(server.pin.artifact),
    ],
  ];
  for (const [field, want, got] of planned)
    if (want !== undefined && want !== got) return { field, planned: want };
  return undefined;
}
