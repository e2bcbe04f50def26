import { watch, type FSWatcher } from 'node:fs';
import { stat } from 'node:fs/promises';
import { invalidField } from '../config/configError.js';
import { parseServerConfig } from '../config/pinFile.js';
import { parseDocumentText } from '../config/readDocument.js';
import { readSettledFiles, type SettledRead } from '../config/readSettledFiles.js';
import { listPinFiles } from '../config/serversDir.js';
import { findSilentWeakening } from '../config/silentWeakening.js';
import type { ServerConfig } from '../config/types.js';
import type { SignaturePolicy } from '../config/pinSignature.js';
import { GatewayError } from '../errors.js';
import type { GatewayLogger } from '../observe/logger.js';

/** Default of {@link PinWatcherOptions.settleMs}. */
export const DEFAULT_SETTLE_MS = 200;
// A file still changing after this many checks in a row is reported; watching goes on.
const MAX_DEFERRALS = 50;

/** What the watcher drives: the gateway's routes (createGateway's upsertServer / removeServer). */
export interface PinWatcherTarget {
  upsertServer(server: ServerConfig): void;
  removeServer(name: string): void;
}

/** Options of {@link watchPinFiles}. */
export interface PinWatcherOptions {
  /** The servers folder. */
  readonly dir: string;
  /**
   * The one pin file of `dir` to serve (`toolpin serve --pin`): the other files of the folder are
   * not read. @default every pin file of the folder
   */
  readonly file?: string;
  readonly gateway: PinWatcherTarget;
  readonly logger: GatewayLogger;
  /** The servers the gateway started with (each with its `file`). */
  readonly initial: readonly ServerConfig[];
  /** The gateway file's signature rule: a reloaded pin not signed as it requires is refused (the last good pin stays). */
  readonly signatures?: SignaturePolicy;
  /**
   * Quiet time after the last change before reloading: editors and `git checkout` write in bursts.
   * @default 100
   */
  readonly debounceMs?: number;
  /**
   * A file is applied only when it reads the same bytes twice this far apart: a write still under
   * way (an editor saving in place, a copy) is not read as a pin. @default 200
   */
  readonly settleMs?: number;
  /** Watch the folder; when false, only {@link PinWatcher.reload} (SIGHUP) reloads. @default true */
  readonly watch?: boolean;
}

/** What one reload did, by file. */
export interface ReloadSummary {
  readonly added: string[];
  readonly updated: string[];
  readonly removed: string[];
  /** Files rejected; the last good pin of each stays in force. */
  readonly failed: string[];
  /** Files still being written (their bytes changed while read); checked again after `settleMs`. */
  readonly deferred: string[];
}

function describeError(error: unknown): Record<string, unknown> {
  if (error instanceof GatewayError) {
    const { file, field, expected, files } = error.data;
    return {
      code: error.code,
      file,
      field,
      expected,
      ...(files === undefined ? {} : { files }),
      reason: error.message,
    };
  }
  return { code: 'GW_PIN_FILE_INVALID', reason: error instanceof Error ? error.message : String(error) };
}

/**
 * Watches the servers folder and keeps the gateway's routes in step with its pin files: a changed
 * pin is put in force for the next decision (same upstream: same route, streams stay open), a
 * new file adds a route, a deleted one removes it. A file that fails validation is logged
 * (`pin.reload_failed`, naming file and field) and its last good pin stays in force.
 * {@link watchPinFiles} creates and starts one.
 */
export class PinWatcher {
  readonly #dir: string;
  readonly #only: string | undefined;
  readonly #gateway: PinWatcherTarget;
  readonly #logger: GatewayLogger;
  readonly #debounceMs: number;
  readonly #settleMs: number;
  readonly #signatures: SignaturePolicy | undefined;
  // The pin in force per file, and its serialized form to tell a real change from a rewrite.
  readonly #inForce = new Map<string, { server: ServerConfig; shape: string }>();
  // Consecutive checks that found a file still changing, per file.
  readonly #deferrals = new Map<string, number>();
  readonly #stopping = new AbortController();
  #closed = false;
  #timer: NodeJS.Timeout | undefined;
  #chain: Promise<unknown> = Promise.resolve();
  #watcher: FSWatcher | undefined;

  constructor(options: PinWatcherOptions) {
    this.#dir = options.dir;
    this.#only = options.file;
    this.#gateway = options.gateway;
    this.#logger = options.logger;
    this.#debounceMs = options.debounceMs ?? 100;
    this.#settleMs = options.settleMs ?? DEFAULT_SETTLE_MS;
    this.#signatures = options.signatures;
    for (const server of options.initial)
      this.#inForce.set(server.file, { server, shape: JSON.stringify(server) });
  }

  /** Reloads the folder now (what SIGHUP does); reloads never overlap. */
  reload(): Promise<ReloadSummary> {
    const next = this.#chain.then(() => this.#reloadOnce());
    this.#chain = next.catch(() => undefined);
    return next;
  }

  /** Stops watching; a reload under way applies nothing more. */
  close(): void {
    this.#closed = true;
    this.#stopping.abort();
    clearTimeout(this.#timer);
    this.#watcher?.close();
  }

  /** Starts watching the folder: a change reloads after `debounceMs` of quiet. */
  startWatching(): void {
    const dir = this.#dir;
    try {
      // Watching the folder (not each file) sees editors' rename-over writes, new files and deletions.
      this.#watcher = watch(dir, { persistent: false }, () => {
        if (this.#closed) return;
        this.#schedule(this.#debounceMs);
      });
      this.#watcher.on('error', (error) =>
        this.#logger.error(
          { event: 'pin.watch_failed', file: dir, err: error },
          'watching the servers folder failed; SIGHUP still reloads',
        ),
      );
    } catch (error) {
      this.#logger.error(
        { event: 'pin.watch_failed', file: dir, err: error },
        'cannot watch the servers folder; SIGHUP still reloads',
      );
    }
  }

  async #reloadOnce(): Promise<ReloadSummary> {
    const summary: ReloadSummary = { added: [], updated: [], removed: [], failed: [], deferred: [] };
    const reads = await this.#readFolder();
    if (this.#closed || reads === undefined) return summary;
    this.#removeGone(reads.files, summary);
    for (const read of reads.settled) this.#applyRead(read, summary);
    // Checked again without waiting for the watcher (which may miss events, or be off), for a bounded
    // number of checks in a row; a change the watcher sees still triggers a reload after that.
    if (summary.deferred.some((file) => (this.#deferrals.get(file) ?? 0) < MAX_DEFERRALS))
      this.#schedule(this.#settleMs);
    return summary;
  }

  /** The pin files of the folder and their settled reads; undefined when the folder cannot be read. */
  async #readFolder(): Promise<{ files: string[]; settled: readonly SettledRead[] } | undefined> {
    const dir = this.#dir;
    let files: string[];
    try {
      files = this.#only === undefined ? await listPinFiles(dir) : await presentFile(this.#only);
    } catch (error) {
      this.#logger.error(
        { event: 'pin.reload_failed', ...describeError(error), file: dir },
        'cannot read the servers folder; every pin stays in force',
      );
      return undefined;
    }
    const settleMs = this.#settleMs;
    const settled = await readSettledFiles(files, settleMs, this.#stopping.signal, () =>
      this.#logger.debug(
        { event: 'pin.reload_settling', file: dir, files: files.length, settleMs },
        'reading the pin files again',
      ),
    );
    return settled === undefined ? undefined : { files, settled };
  }

  #removeGone(files: readonly string[], summary: ReloadSummary): void {
    for (const [file, { server }] of this.#inForce) {
      if (files.includes(file)) continue;
      this.#inForce.delete(file);
      this.#gateway.removeServer(server.name);
      summary.removed.push(file);
      this.#logger.warn(
        { event: 'pin.removed', server: server.name, file },
        `pin file removed: route /${server.name}/mcp is gone`,
      );
    }
  }

  #applyRead(read: SettledRead, summary: ReloadSummary): void {
    if ('changing' in read) {
      this.#defer(read.file, summary);
      return;
    }
    this.#deferrals.delete(read.file);
    if ('error' in read) {
      this.#reject(read.file, read.error, summary);
      return;
    }
    let server: ServerConfig;
    try {
      const document = parseDocumentText(read.text, read.file, 'GW_PIN_FILE_INVALID');
      server = parseServerConfig(document, read.file, this.#signatures);
      this.#refuseSilentWeakening(read.file, document, server);
    } catch (error) {
      this.#reject(read.file, error, summary);
      return;
    }
    this.#apply(read.file, server, summary);
  }

  #refuseSilentWeakening(file: string, document: unknown, server: ServerConfig): void {
    const current = this.#inForce.get(file)?.server;
    const weakening = current && findSilentWeakening(current, document, server);
    if (weakening === undefined) return;
    const { field, inForce: value, defaulted } = weakening;
    throw invalidField(
      'GW_PIN_FILE_INVALID',
      file,
      field,
      `an explicit ${field} (the pin in force has ${value}; left out, it would default to ${defaulted})`,
      { data: { inForce: value, defaulted }, note: '(a reload never weakens a policy by omission)' },
    );
  }

  #defer(file: string, summary: ReloadSummary): void {
    const count = (this.#deferrals.get(file) ?? 0) + 1;
    this.#deferrals.set(file, count);
    summary.deferred.push(file);
    const server = this.#inForce.get(file)?.server.name ?? null;
    this.#logger.info(
      { event: 'pin.reload_deferred', server, file, checks: count },
      'pin file is still being written; it is read again once it stops changing',
    );
    if (count === MAX_DEFERRALS)
      this.#logger.error(
        {
          event: 'pin.reload_failed',
          code: 'GW_PIN_FILE_INVALID',
          server,
          file,
          field: '',
          expected: `content that stops changing (it changed in ${count} checks in a row)`,
        },
        'pin file keeps changing; the last good pin stays in force',
      );
  }

  #reject(file: string, error: unknown, summary: ReloadSummary): void {
    summary.failed.push(file);
    const kept = this.#inForce.get(file);
    this.#logger.error(
      {
        event: 'pin.reload_failed',
        server: kept?.server.name ?? null,
        ...describeError(error),
        file,
      },
      kept === undefined
        ? 'pin file rejected; no route for it'
        : 'pin file rejected; the last good pin stays in force',
    );
  }

  #apply(file: string, server: ServerConfig, summary: ReloadSummary): void {
    const previous = this.#inForce.get(file);
    const shape = JSON.stringify(server);
    if (previous?.shape === shape) return;
    if (this.#refuseDuplicateName(file, server, summary)) return;
    if (previous !== undefined && previous.server.name !== server.name)
      this.#gateway.removeServer(previous.server.name);
    this.#gateway.upsertServer(server);
    this.#inForce.set(file, { server, shape });
    (previous === undefined ? summary.added : summary.updated).push(file);
    const fields = {
      server: server.name,
      file,
      mode: server.mode,
      catalog: server.pin.catalog,
      tools: Object.keys(server.pin.tools).length,
    };
    if (previous === undefined)
      this.#logger.info({ event: 'pin.added', ...fields }, `pin file added: route /${server.name}/mcp`);
    else
      this.#logger.info(
        { event: 'pin.reloaded', previous: previous.server.pin.catalog, ...fields },
        'pin reloaded: in force for the next decision',
      );
  }

  /** True (and logged) when another pin file already routes `server.name`. */
  #refuseDuplicateName(file: string, server: ServerConfig, summary: ReloadSummary): boolean {
    const owner = [...this.#inForce.entries()].find(
      ([other, entry]) => other !== file && entry.server.name === server.name,
    );
    if (owner === undefined) return false;
    summary.failed.push(file);
    const message = `Duplicate server name ${JSON.stringify(server.name)} in pin files ${owner[0]} and ${file}`;
    this.#logger.error(
      {
        event: 'pin.reload_failed',
        code: 'GW_PIN_DUPLICATE_NAME',
        server: server.name,
        file,
        field: 'name',
        files: [owner[0], file],
        reason: message,
      },
      'pin file rejected: its name is already routed by another pin file',
    );
    return true;
  }

  /** Reloads after `delayMs` of quiet; a later call restarts the wait. */
  #schedule(delayMs: number): void {
    if (this.#closed) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      this.reload().catch((error: unknown) =>
        this.#logger.error({ event: 'pin.reload_failed', err: error }, 'reload failed'),
      );
    }, delayMs);
    this.#timer.unref();
  }
}

// The one pin file served, while it is there: removing it removes its route, as in a folder.
async function presentFile(file: string): Promise<string[]> {
  const stats = await stat(file).catch(() => undefined);
  return stats?.isFile() === true ? [file] : [];
}

/**
 * Starts a {@link PinWatcher} over the servers folder: watching it unless `watch` is false (then
 * only {@link PinWatcher.reload}, i.e. SIGHUP, reloads).
 */
export function watchPinFiles(options: PinWatcherOptions): PinWatcher {
  const watcher = new PinWatcher(options);
  if (options.watch !== false) watcher.startWatching();
  return watcher;
}
