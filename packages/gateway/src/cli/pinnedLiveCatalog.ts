import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { isStdioUpstream, parsePinFile, type ServerConfig } from '../config/index.js';
import type { DriftExplanation } from '../explain/explainDrift.js';
import { explainPinDrift } from '../config/planPinUpdate.js';
import { GatewayError } from '../errors.js';
import { CliInputError } from './cliInputError.js';
import { fetchLiveCatalog, type LiveTarget } from '../transports/fetchLiveCatalog.js';
import { observeCatalog, type ObservedCatalog } from './observeCatalog.js';

/** A pin file, the live catalog of its server, and how they differ. */
export interface PinnedLiveCatalog {
  readonly file: string;
  /** The text the pin was read from (approve writes only if the file still holds it). */
  readonly text: string;
  readonly server: ServerConfig;
  readonly observed: ObservedCatalog;
  readonly explanation: DriftExplanation;
  readonly pages: number;
}

/** Reads and validates a pin file as the gateway would. Throws CliInputError naming file and field. */
export async function readPinFileForCli(
  path: string,
): Promise<{ file: string; text: string; server: ServerConfig }> {
  const file = resolve(path);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new CliInputError(`${file}: cannot read the file: ${(error as Error).message}`, { cause: error });
  }
  try {
    return { file, text, server: parsePinFile(text, file) };
  } catch (error) {
    if (error instanceof GatewayError) throw new CliInputError(error.message, { cause: error });
    throw error;
  }
}

function targetOf(server: ServerConfig, headers: Readonly<Record<string, string>>): LiveTarget {
  const { upstream } = server;
  if (isStdioUpstream(upstream)) return upstream;
  // The pin's recorded transport, never 'auto': the catalog is compared over what was approved.
  return { ...upstream, headers: { ...upstream.headers, ...headers } };
}

/**
 * Lists the live catalog of a pin file's server (pin headers plus `headers`) and explains how it
 * differs from the pin. Rejects with GatewayError GW_CATALOG_UNAVAILABLE
 * (server down, listing incomplete: nothing can be told).
 */
export async function comparePinWithLive(
  pinFile: { readonly file: string; readonly text: string; readonly server: ServerConfig },
  headers: Readonly<Record<string, string>>,
  options: { readonly timeoutMs: number; readonly capabilities?: Record<string, unknown> | undefined },
): Promise<PinnedLiveCatalog> {
  const { file, text, server } = pinFile;
  // Listed as it was pinned: with the capabilities the pin records, unless others are given.
  const capabilities = options.capabilities ?? server.clientCapabilities;
  const live = await fetchLiveCatalog(targetOf(server, headers), {
    timeoutMs: options.timeoutMs,
    baseDir: dirname(file),
    ...(capabilities === undefined ? {} : { capabilities: { ...capabilities } }),
  });
  const observed = observeCatalog(live.tools, server.profile);
  const explanation = explainPinDrift(server, observed);
  return { file, text, server, observed, explanation, pages: live.pages };
}
