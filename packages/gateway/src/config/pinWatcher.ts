import { watch, type FSWatcher } from 'node:fs';
import { GatewayError } from '../errors.js';
import type { GatewayLogger } from '../observe/logger.js';
import { loadPinFile } from './pinFile.js';
import { listPinFiles } from './serversDir.js';
import type { ServerConfig } from './types.js';

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
  // The pin in force per file, and its serialized form to tell a real change from a rewrite.
  const inForce = new Map<string, { server: ServerConfig; shape: string }>();
  for (const server of options.initial) inForce.set(server.file, { server, shape: JSON.stringify(server) });
  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  let chain: Promise<unknown> = Promise.resolve();

  async function reloadOnce(): Promise<ReloadSummary> {
    const summary: ReloadSummary = { added: [], updated: [], removed: [], failed: [] };
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
    const loaded = await Promise.all(
      files.map((file) =>
        loadPinFile(file).then(
          (server) => ({ file, server }),
          (error: unknown) => ({ file, error }),
        ),
      ),
    );
    if (closed) return summary;
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
    for (const result of loaded) {
      if ('error' in result) {
        summary.failed.push(result.file);
        const kept = inForce.get(result.file);
        logger.error(
          {
            event: 'pin.reload_failed',
            server: kept?.server.name ?? null,
            ...describeError(result.error),
            file: result.file,
          },
          kept === undefined
            ? 'pin file rejected; no route for it'
            : 'pin file rejected; the last good pin stays in force',
        );
        continue;
      }
      apply(result.file, result.server, summary);
    }
    return summary;
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

  let watcher: FSWatcher | undefined;
  if (options.watch !== false) startWatching();
  function startWatching(): void {
    try {
      // Watching the folder (not each file) sees editors' rename-over writes, new files and deletions.
      watcher = watch(dir, { persistent: false }, () => {
        if (closed) return;
        clearTimeout(timer);
        timer = setTimeout(() => {
          reload().catch((error: unknown) =>
            logger.error({ event: 'pin.reload_failed', err: error }, 'reload failed'),
          );
        }, debounceMs);
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
      clearTimeout(timer);
      watcher?.close();
    },
  };
}
