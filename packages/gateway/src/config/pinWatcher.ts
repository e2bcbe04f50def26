import { watch, type FSWatcher } from 'node:fs';
import { GatewayError } from '../errors.js';
import type { GatewayLogger } from '../observe/logger.js';
import { invalidField } from './configError.js';
import { parseServerConfig } from './pinFile.js';
import { parseDocumentText } from './readDocument.js';
import { readSettledFiles } from './readSettledFiles.js';
import { listPinFiles } from './serversDir.js';
import { findSilentWeakening } from './silentWeakening.js';
import type { ServerConfig } from './types.js';

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
  readonly gateway: PinWatcherTarget;
  readonly logger: GatewayLogger;
  /** The servers the gateway started with (each with its `file`). */
  readonly initial: readonly ServerConfig[];
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

/** A running watcher of the servers folder. */
export interface PinWatcher {
  /** Reloads the folder now (what SIGHUP does); reloads never overlap. */
  reload(): Promise<ReloadSummary>;
  /** Stops watching; a reload under way applies nothing more. */
  close(): void;
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
 */
export function watchPinFiles(options: PinWatcherOptions): PinWatcher {
  const { dir, gateway, logger } = options;
  const debounceMs = options.debounceMs ?? 100;
  const settleMs = options.settleMs ?? DEFAULT_SETTLE_MS;
  // The pin in force per file, and its serialized form to tell a real change from a rewrite.
  const inForce = new Map<string, { server: ServerConfig; shape: string }>();
  for (const server of options.initial) inForce.set(server.file, { server, shape: JSON.stringify(server) });
  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  let chain: Promise<unknown> = Promise.resolve();
  const stopping = new AbortController();
  // Consecutive checks that found a file still changing, per file.
  const deferrals = new Map<string, number>();

  async function reloadOnce(): Promise<ReloadSummary> {
    const summary: ReloadSummary = { added: [], updated: [], removed: [], failed: [], deferred: [] };
    let files: string[];
    try {
      files = await listPinFiles(dir);
    } catch (error) {
      logger.error(
        { event: 'pin.reload_failed', ...describeError(error), file: dir },
        'cannot read the servers folder; every pin stays in force',
      );
      return summary;
    }
    const reads = await readSettledFiles(files, settleMs, stopping.signal, () =>
      logger.debug(
        { event: 'pin.reload_settling', file: dir, files: files.length, settleMs },
        'reading the pin files again',
      ),
    );
    if (closed || reads === undefined) return summary;
    for (const [file, { server }] of inForce) {
      if (files.includes(file)) continue;
      inForce.delete(file);
      gateway.removeServer(server.name);
      summary.removed.push(file);
      logger.warn(
        { event: 'pin.removed', server: server.name, file },
        `pin file removed: route /${server.name}/mcp is gone`,
      );
    }
    for (const read of reads) {
      if ('changing' in read) {
        defer(read.file, summary);
        continue;
      }
      deferrals.delete(read.file);
      if ('error' in read) {
        reject(read.file, read.error, summary);
        continue;
      }
      let document: unknown;
      let server: ServerConfig;
      try {
        document = parseDocumentText(read.text, read.file, 'GW_PIN_FILE_INVALID');
        server = parseServerConfig(document, read.file);
        refuseSilentWeakening(read.file, document, server);
      } catch (error) {
        reject(read.file, error, summary);
        continue;
      }
      apply(read.file, server, summary);
    }
    // Checked again without waiting for the watcher (which may miss events, or be off), for a bounded
    // number of checks in a row; a change the watcher sees still triggers a reload after that.
    if (summary.deferred.some((file) => (deferrals.get(file) ?? 0) < MAX_DEFERRALS)) schedule(settleMs);
    return summary;
  }

  function refuseSilentWeakening(file: string, document: unknown, server: ServerConfig): void {
    const current = inForce.get(file)?.server;
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

  function defer(file: string, summary: ReloadSummary): void {
    const count = (deferrals.get(file) ?? 0) + 1;
    deferrals.set(file, count);
    summary.deferred.push(file);
    logger.info(
      { event: 'pin.reload_deferred', server: inForce.get(file)?.server.name ?? null, file, checks: count },
      'pin file is still being written; it is read again once it stops changing',
    );
    if (count === MAX_DEFERRALS)
      logger.error(
        {
          event: 'pin.reload_failed',
          code: 'GW_PIN_FILE_INVALID',
          server: inForce.get(file)?.server.name ?? null,
          file,
          field: '',
          expected: `content that stops changing (it changed in ${count} checks in a row)`,
        },
        'pin file keeps changing; the last good pin stays in force',
      );
  }

  function reject(file: string, error: unknown, summary: ReloadSummary): void {
    summary.failed.push(file);
    const kept = inForce.get(file);
    logger.error(
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

  function apply(file: string, server: ServerConfig, summary: ReloadSummary): void {
    const previous = inForce.get(file);
    const shape = JSON.stringify(server);
    if (previous?.shape === shape) return;
    const owner = [...inForce.entries()].find(
      ([other, entry]) => other !== file && entry.server.name === server.name,
    );
    if (owner !== undefined) {
      summary.failed.push(file);
      const message = `Duplicate server name ${JSON.stringify(server.name)} in pin files ${owner[0]} and ${file}`;
      logger.error(
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
      return;
    }
    if (previous !== undefined && previous.server.name !== server.name)
      gateway.removeServer(previous.server.name);
    gateway.upsertServer(server);
    inForce.set(file, { server, shape });
    (previous === undefined ? summary.added : summary.updated).push(file);
    const fields = {
      server: server.name,
      file,
      mode: server.mode,
      catalog: server.pin.catalog,
      tools: Object.keys(server.pin.tools).length,
    };
    if (previous === undefined)
      logger.info({ event: 'pin.added', ...fields }, `pin file added: route /${server.name}/mcp`);
    else
      logger.info(
        { event: 'pin.reloaded', previous: previous.server.pin.catalog, ...fields },
        'pin reloaded: in force for the next decision',
      );
  }

  function reload(): Promise<ReloadSummary> {
    const next = chain.then(reloadOnce);
    chain = next.catch(() => undefined);
    return next;
  }

  /** Reloads after `delayMs` of quiet; a later call restarts the wait. */
  function schedule(delayMs: number): void {
    if (closed) return;
    clearTimeout(timer);
    timer = setTimeout(() => {
      reload().catch((error: unknown) =>
        logger.error({ event: 'pin.reload_failed', err: error }, 'reload failed'),
      );
    }, delayMs);
    timer.unref();
  }

  let watcher: FSWatcher | undefined;
  if (options.watch !== false) startWatching();
  function startWatching(): void {
    try {
      // Watching the folder (not each file) sees editors' rename-over writes, new files and deletions.
      watcher = watch(dir, { persistent: false }, () => {
        if (closed) return;
        schedule(debounceMs);
      });
      watcher.on('error', (error) =>
        logger.error(
          { event: 'pin.watch_failed', file: dir, err: error },
          'watching the servers folder failed; SIGHUP still reloads',
        ),
      );
    } catch (error) {
      logger.error(
        { event: 'pin.watch_failed', file: dir, err: error },
        'cannot watch the servers folder; SIGHUP still reloads',
      );
    }
  }

  return {
    reload,
    close() {
      closed = true;
      stopping.abort();
      clearTimeout(timer);
      watcher?.close();
    },
  };
}
