import { readFile } from 'node:fs/promises';
import { loadServersDir, parsePinFile, type ServerConfig } from '../config/index.js';
import type { DriftExplanation, ToolDrift } from '../explain/explainDrift.js';
import type { InstructionsDrift } from '../explain/explainInstructions.js';
import { GatewayError } from '../errors.js';
import type { DriftFinding } from '../policy/driftFinding.js';
import type { AlertEvent, OtherSurface } from '../observe/alerts.js';
import { DriftAcknowledgements } from '../observe/driftAcknowledgements.js';
import { ItemActivity } from '../observe/itemActivity.js';
import type { GatewayLogger } from '../observe/logger.js';
import { StatusBoard } from '../observe/statusBoard.js';
import { comparePinWithLive, type PinnedLiveCatalog } from '../transports/pinnedLiveCatalog.js';

/** The session label of the listings `toolpin review` makes itself. */
const SESSION = 'toolpin-review';

/** A drift explained as `check` and `approve` explain it, as the gateway's findings: a rename is a removal and an addition. */
function findingsOf(entry: ToolDrift): DriftFinding[] {
  const { key, tool, pinned, observed, severity } = entry;
  const explained = {
    ...(entry.members === undefined ? {} : { members: entry.members }),
    ...(entry.paths === undefined ? {} : { paths: entry.paths }),
    ...(entry.text === undefined ? {} : { text: entry.text }),
  };
  if (entry.kind === 'renamed' && entry.from !== undefined)
    return [
      {
        kind: 'removed',
        key: entry.from.key,
        tool: entry.from.tool,
        pinned,
        observed: null,
        severity: 'low',
      },
      // Approving the new name (the page's Approve) approves the rename, as `approve --tool <name>` does.
      { kind: 'added', key, tool, pinned: null, observed, severity, ...explained },
    ];
  const kind = entry.kind === 'renamed' ? 'added' : entry.kind;
  return [
    {
      kind,
      key,
      tool,
      pinned,
      observed,
      severity,
      ...explained,
      ...(entry.severities === undefined ? {} : { severities: entry.severities }),
    },
  ];
}

function instructionsFindings(drift: InstructionsDrift): DriftFinding[] {
  if (drift.equal) return [];
  const base = { key: 'instructions', tool: null, pinned: drift.pinned, observed: drift.observed };
  return [
    {
      kind: 'changed',
      ...base,
      severity: 'high',
      members: ['instructions'],
      paths: ['/instructions'],
      ...(drift.text.length > 0 ? { text: drift.text } : {}),
    },
  ];
}

/** One surface's listing as the event the gateway emits when a client lists it. */
function surfaceEvent(
  server: ServerConfig,
  findings: readonly DriftFinding[],
  catalog: string | null,
  items: number,
  surface?: OtherSurface,
): AlertEvent {
  const common = { server: server.name, session: SESSION, ...(surface === undefined ? {} : { surface }) };
  if (findings.length > 0) return { event: 'catalog.drift', ...common, mode: server.mode, drift: findings };
  return surface === undefined
    ? { event: 'catalog.verified', ...common, catalog, tools: items }
    : { event: 'catalog.verified', ...common, surface, catalog, items };
}

function driftFindings(explanation: DriftExplanation): DriftFinding[] {
  return explanation.drift.flatMap(findingsOf);
}

/**
 * A live listing (`comparePinWithLive`, what `toolpin approve` lists) as the alert events the
 * gateway emits when a client lists the server through it: one for tools, one per other pinned
 * surface. Items without a digest are `unverifiable` findings, as the gateway reports them.
 */
export function listingEvents(live: PinnedLiveCatalog): AlertEvent[] {
  const { server, observed } = live;
  const unverifiable = (surface: string | undefined): DriftFinding[] =>
    observed.unverifiable
      .filter((item) => item.surface === surface)
      .map((item) => ({
        kind: 'unverifiable',
        key: item.name ?? `${surface ?? 'tools'}[${item.index}]`,
        tool: item.name,
        pinned: null,
        observed: null,
        severity: 'high',
        problem: item.problem,
      }));
  const events = [
    surfaceEvent(
      server,
      [...driftFindings(live.explanation), ...unverifiable(undefined)],
      observed.pin.catalog,
      Object.keys(observed.pin.tools).length,
    ),
  ];
  for (const surface of ['prompts', 'resourceTemplates'] as const) {
    const explanation = live.surfaces[surface];
    if (explanation === undefined) continue;
    const section = observed.pin[surface];
    events.push(
      surfaceEvent(
        server,
        [...driftFindings(explanation), ...unverifiable(surface)],
        section?.catalog ?? null,
        Object.keys(section?.items ?? {}).length,
        surface,
      ),
    );
  }
  const instructions = live.surfaces.instructions;
  if (instructions !== undefined)
    events.push(
      surfaceEvent(server, instructionsFindings(instructions), instructions.observed, 1, 'instructions'),
    );
  return events;
}

/** Options of {@link LiveListings}. */
export interface LiveListingsOptions {
  /** The folder of pin files (`~/.toolpin`, or `toolpin review --dir`). */
  readonly dir: string;
  /** Bound of each request of a listing. */
  readonly timeoutMs: number;
  readonly logger: GatewayLogger;
}

/**
 * The review page's source for `toolpin review`, where no gateway sees the clients' listings (they
 * run their servers through `toolpin wrap`): it lists every server of a folder of pin files itself,
 * as `toolpin approve` does, and records each listing as the gateway's status board records a
 * client's. {@link refresh} lists them all again (at start, and after each approval).
 */
export class LiveListings {
  readonly status: StatusBoard;
  readonly activity = new ItemActivity();
  readonly acknowledgements = new DriftAcknowledgements();
  readonly #options: LiveListingsOptions;
  readonly #listeners = new Set<() => void>();
  #servers: readonly ServerConfig[] = [];

  constructor(options: LiveListingsOptions) {
    this.#options = options;
    this.status = new StatusBoard((name) => this.#servers.find((server) => server.name === name));
  }

  /** The servers of the folder, as last loaded. */
  get servers(): readonly ServerConfig[] {
    return this.#servers;
  }

  /** Calls `listener` after every change; returns the function that stops it. */
  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Something the page shows changed (an acknowledgement). */
  noteChange(): void {
    for (const listener of this.#listeners) listener();
  }

  /**
   * Loads the folder's pin files again and lists every server (together); a server that cannot be
   * listed is logged (`review.list_failed`) and stays as it was. Rejects when the folder cannot be
   * loaded (GW_CONFIG_INVALID, GW_PIN_FILE_INVALID, GW_PIN_DUPLICATE_NAME).
   */
  async refresh(): Promise<void> {
    this.#servers = await loadServersDir(this.#options.dir);
    await Promise.all(this.#servers.map((server) => this.#list(server)));
    this.noteChange();
  }

  async #list(server: ServerConfig): Promise<void> {
    const { logger, timeoutMs } = this.#options;
    try {
      const text = await readFile(server.file, 'utf8');
      const pinFile = { file: server.file, text, server: parsePinFile(text, server.file) };
      const live = await comparePinWithLive(pinFile, {}, { timeoutMs });
      for (const event of listingEvents(live)) {
        this.status.recordAlert(event);
        this.activity.recordAlert(event);
      }
    } catch (error) {
      if (!(error instanceof GatewayError)) throw error;
      logger.warn(
        { event: 'review.list_failed', server: server.name, code: error.code, err: error.message },
        `cannot list ${server.name}: ${error.message}`,
      );
    }
  }
}
