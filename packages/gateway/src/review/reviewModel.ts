import type { GatewayObserver } from '../observe/gatewayObserver.js';
import type { ServerConfig } from '../config/index.js';
import { describeApprovedBy } from '../config/manifestDigests.js';
import type { DriftFinding } from '../policy/driftFinding.js';
import type { OtherSurface } from '../observe/alerts.js';
import type { DriftAcknowledgements } from '../observe/driftAcknowledgements.js';
import type { ItemActivity, ItemCalls } from '../observe/itemActivity.js';
import type { ServerStatus, ToolState, ToolStatus } from '../observe/statusBoard.js';

/** An item's state as the review page names it (docs/review-ui.md). */
export type ItemState = 'verified' | 'drifted' | 'unpinned' | 'unverifiable' | 'not seen yet';

/** One pinned (or observed but unpinned) item of a server, as the page shows it. */
export interface ReviewItem {
  readonly surface: 'tools' | OtherSurface;
  readonly key: string;
  readonly name: string;
  readonly state: ItemState;
  /** When the last listing that held it was seen (null: not seen, or gone from the listing). */
  readonly lastSeen: string | null;
  readonly calls: ItemCalls;
  /** The drift finding, for every state but verified and not seen yet. */
  readonly finding?: DriftFinding;
  readonly firstSeen?: string;
  /** Kept blocked by a reviewer: its alert is not sent again until the definition changes. */
  readonly acknowledged: boolean;
  /**
   * The pin in force approves what the finding observed (an approval since that listing): the page
   * says "approved, waiting for the next listing" and offers no action until a client lists again.
   */
  readonly approved: boolean;
}

/** One server of the page. */
export interface ReviewServer {
  readonly name: string;
  readonly mode: string;
  /** Redacted (observe/statusBoard: describeUpstream). */
  readonly upstream: string;
  readonly file: string;
  readonly pinnedCatalog: string;
  /** Where the pin's first approval came from, when a signed catalog manifest gave it (docs/manifests.md). */
  readonly approvedBy?: string;
  readonly state: 'verified' | 'drifted' | 'not seen yet';
  readonly observedAt: string | null;
  readonly items: readonly ReviewItem[];
  /** Who may see what of this server (docs/scopes.md), one line per principal; absent without scopes. */
  readonly scope?: readonly string[];
  /** The catalog pinned per principal; absent when the pin file pins one for all. */
  readonly principalCatalogs?: Readonly<Record<string, string>>;
}

/** What the model reads. */
export interface ReviewSources {
  readonly activity: ItemActivity;
  readonly acknowledgements: DriftAcknowledgements;
  /** Who may see what of a server (a gateway's observer; `toolpin review` has no scopes). */
  readonly scopesOn?: GatewayObserver['scopesOn'];
}

/** One line per principal that may see something of `server`: its items per surface. */
function scopeLines(sources: ReviewSources, server: string): { scope?: readonly string[] } {
  const scopes = sources.scopesOn?.(server);
  if (scopes === undefined) return {};
  const show = (items: '*' | readonly string[]): string =>
    items === '*' ? 'every one' : items.length === 0 ? 'none' : items.join(', ');
  return {
    scope: scopes.map(
      ({ principal, items }) =>
        `${principal}: tools ${show(items.tools)}; prompts ${show(items.prompts)}; templates ${show(items.resourceTemplates)}`,
    ),
  };
}

const STATES: Readonly<Record<ToolState, ItemState>> = {
  verified: 'verified',
  changed: 'drifted',
  removed: 'drifted',
  added: 'unpinned',
  unverifiable: 'unverifiable',
  unobserved: 'not seen yet',
};

/** True when the pin in force approves what a finding observed (its digest is pinned now, or its removal). */
function approvedSince(
  config: ServerConfig,
  surface: ReviewItem['surface'],
  finding: DriftFinding | undefined,
): boolean {
  if (
    finding === undefined ||
    (finding.kind !== 'changed' && finding.kind !== 'added' && finding.kind !== 'removed')
  )
    return false;
  if (surface === 'instructions')
    return finding.observed !== null && config.pin.instructions === finding.observed;
  const pinned = surface === 'tools' ? config.pin.tools : (config.pin[surface]?.items ?? {});
  const now = Object.hasOwn(pinned, finding.key) ? pinned[finding.key] : undefined;
  return finding.kind === 'removed' ? now === undefined : now !== undefined && now === finding.observed;
}

function toolItem(
  config: ServerConfig,
  server: ServerStatus,
  tool: ToolStatus,
  sources: ReviewSources,
): ReviewItem {
  const state = STATES[tool.state];
  const finding: DriftFinding | undefined =
    tool.state === 'verified' || tool.state === 'unobserved'
      ? undefined
      : server.lastDrift?.findings.find(
          (entry) => entry.key === tool.key && entry.observed === tool.observed,
        );
  const name = tool.tool ?? tool.key;
  const seen = tool.state !== 'removed' && tool.state !== 'unobserved';
  return {
    surface: 'tools',
    key: tool.key,
    name,
    state,
    lastSeen: seen ? (server.observed?.at ?? null) : null,
    calls: sources.activity.callsOf(server.name, name),
    ...itemFinding(server.name, finding, sources),
    approved: approvedSince(config, 'tools', finding),
  };
}

function itemFinding(
  server: string,
  finding: DriftFinding | undefined,
  sources: ReviewSources,
): Pick<ReviewItem, 'finding' | 'firstSeen' | 'acknowledged'> {
  if (finding === undefined) return { acknowledged: false };
  const firstSeen = sources.activity.firstSeen(server, finding);
  return {
    finding,
    ...(firstSeen === undefined ? {} : { firstSeen }),
    acknowledged: sources.acknowledgements.isAcknowledged(server, finding),
  };
}

const FINDING_STATES: Readonly<Record<DriftFinding['kind'], ItemState>> = {
  changed: 'drifted',
  removed: 'drifted',
  wrong_subject: 'drifted',
  added: 'unpinned',
  unverifiable: 'unverifiable',
};

/** The items of a surface beside tools: each pinned key, then what its last drift added. */
function surfaceItems(
  config: ServerConfig,
  status: ServerStatus,
  surface: OtherSurface,
  sources: ReviewSources,
): ReviewItem[] {
  const seen = status.surfaces[surface];
  if (seen === undefined) return [];
  const drift = seen.observed?.result === 'drift' ? (seen.lastDrift?.findings ?? []) : [];
  const keys =
    surface === 'instructions' ? ['instructions'] : Object.keys(config.pin[surface]?.items ?? {}).sort();
  const byKey = new Map(drift.map((finding) => [finding.key, finding]));
  for (const finding of drift) if (!keys.includes(finding.key)) keys.push(finding.key);
  return keys.map((key) => {
    const finding = byKey.get(key);
    const state: ItemState =
      finding !== undefined
        ? FINDING_STATES[finding.kind]
        : seen.observed === null
          ? 'not seen yet'
          : 'verified';
    const name = finding?.tool ?? config.definitions[key]?.name ?? key;
    return {
      surface,
      key,
      name: typeof name === 'string' ? name : key,
      state,
      lastSeen: seen.observed?.at ?? null,
      calls: sources.activity.callsOf(config.name, typeof name === 'string' ? name : key),
      ...itemFinding(config.name, finding, sources),
      approved: approvedSince(config, surface, finding),
    };
  });
}

/** The page's servers: the status board's view, joined with calls, first sightings and acknowledgements. */
export function reviewServers(
  configs: readonly ServerConfig[],
  statuses: readonly ServerStatus[],
  sources: ReviewSources,
): ReviewServer[] {
  return statuses.flatMap((status) => {
    const config = configs.find((candidate) => candidate.name === status.name);
    if (config === undefined) return [];
    const items = [
      ...status.tools.map((tool) => toolItem(config, status, tool, sources)),
      ...(['prompts', 'resourceTemplates', 'instructions'] as const).flatMap((surface) =>
        surfaceItems(config, status, surface, sources),
      ),
    ];
    const drifted = items.some((item) => item.state !== 'verified' && item.state !== 'not seen yet');
    return [
      {
        name: status.name,
        mode: status.mode,
        upstream: status.upstream,
        file: config.file,
        pinnedCatalog: status.pinned.catalog,
        ...(config.approvedBy === undefined ? {} : { approvedBy: describeApprovedBy(config.approvedBy) }),
        state: status.observed === null ? 'not seen yet' : drifted ? 'drifted' : 'verified',
        observedAt: status.observed?.at ?? null,
        items,
        ...scopeLines(sources, status.name),
        ...(status.principalCatalogs === undefined ? {} : { principalCatalogs: status.principalCatalogs }),
      },
    ];
  });
}
