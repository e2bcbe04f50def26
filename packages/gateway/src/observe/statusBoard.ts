import { foldCatalog } from '@toolpin/digest';
import { describeUpstream, type OnDriftSetting, type ServerConfig } from '../config/index.js';
import type { DriftSeverity, PathSeverity } from '../explain/driftSeverity.js';
import type { DriftFinding } from '../policy/driftFinding.js';
import type { PinView } from '../policy/pinView.js';
import type { AlertEvent, OtherSurface } from './alerts.js';
import type { UpstreamContact } from './telemetry.js';

/** Where a tool stands in the last observed catalog of its server (`unobserved`: no listing seen yet). */
export type ToolState = 'verified' | 'changed' | 'added' | 'removed' | 'unverifiable' | 'unobserved';

/** One tool of a server's status. */
export interface ToolStatus {
  readonly key: string;
  readonly tool: string | null;
  readonly state: ToolState;
  readonly pinned: string | null;
  readonly observed: string | null;
  readonly members?: readonly string[];
  readonly paths?: readonly string[];
  /** For a tool that drifted: how much it matters (docs/drift-severity.md). */
  readonly severity?: DriftSeverity;
  /** For `changed`: the severity and rule of each path. */
  readonly severities?: readonly PathSeverity[];
  readonly problem?: string;
}

/** The last completed listing of a server, from any session. */
export interface ObservedCatalog {
  readonly at: string;
  readonly session: string;
  readonly result: 'verified' | 'drift';
  /** Catalog digest of what was observed; null when a definition could not be digested, or findings were omitted. */
  readonly catalog: string | null;
  /** The pinned catalog digest in force when it was observed (a reload may have changed it since). */
  readonly againstPin: string;
  readonly wrongSubject: boolean;
}

/** The last contact with a server's upstream. */
export interface ContactStatus {
  readonly at: string;
  readonly via: UpstreamContact['via'];
  /** True when the upstream answered below HTTP 500. */
  readonly ok: boolean;
  readonly status?: number;
  readonly error?: string;
}

/** The last drift event of a server, with its explanation (changed members and JSON Pointer paths). */
export interface DriftStatus {
  readonly at: string;
  readonly session: string;
  readonly mode: string;
  readonly findings: readonly DriftFinding[];
  /** Findings the event left out past its bound (200). */
  readonly findingsOmitted?: number;
}

/**
 * A pinned surface besides tools in `GET /status` (prompts, resource templates, instructions):
 * what the pin holds, the last observation from any session, and the findings of the last drift.
 */
export interface SurfaceStatus {
  /** The surface's catalog digest (the instructions' digest) and how many items it pins. */
  readonly pinned: { readonly catalog: string; readonly items: number };
  readonly observed: {
    readonly at: string;
    readonly session: string;
    readonly result: 'verified' | 'drift';
    /** The observed catalog digest when verified (null after drift). */
    readonly catalog: string | null;
  } | null;
  readonly lastDrift: DriftStatus | null;
}

/** One server in `GET /status`. */
export interface ServerStatus {
  readonly name: string;
  readonly route: string;
  readonly mode: string;
  /** As the pin file says: one action, or one per severity (`{ high, low }`). */
  readonly onDrift: OnDriftSetting;
  /** The upstream URL with its credentials redacted (userinfo, credential parameters), or `stdio:<program>`. */
  readonly upstream: string;
  readonly pinned: { readonly catalog: string; readonly tools: number };
  readonly observed: ObservedCatalog | null;
  readonly tools: readonly ToolStatus[];
  readonly lastDrift: DriftStatus | null;
  readonly lastContact: ContactStatus | null;
  /** The surfaces the pin pins besides tools; a surface it does not pin is absent (not enforced). */
  readonly surfaces: Partial<Record<OtherSurface, SurfaceStatus>>;
  /** The catalog pinned per principal (docs/scopes.md#pins-per-principal); absent when the file pins one for all. */
  readonly principalCatalogs?: Readonly<Record<string, string>>;
}

interface Entry {
  surfaces?: Partial<Record<OtherSurface, { observed?: SurfaceStatus['observed']; lastDrift?: DriftStatus }>>;
  observed?: ObservedCatalog;
  /** What the per-tool states derive from; derived when /status is read, not on every listing. */
  toolsSource?: {
    readonly pin: ServerConfig;
    readonly findings: readonly DriftFinding[];
    /** Findings were left out: a pinned tool without one is not known to be verified. */
    readonly omitted: boolean;
  };
  lastDrift?: DriftStatus;
  /** The last contact as it came and when (ms since the epoch): made a ContactStatus when read. */
  lastContact?: { readonly at: number; readonly contact: UpstreamContact };
}

/** A contact as /status shows it (formatted when read: every proxied request records one). */
function contactStatus({
  at,
  contact,
}: {
  readonly at: number;
  readonly contact: UpstreamContact;
}): ContactStatus {
  return {
    at: new Date(at).toISOString(),
    via: contact.via,
    ok: contact.status !== undefined && contact.status < 500,
    ...(contact.status === undefined ? {} : { status: contact.status }),
    ...(contact.error === undefined ? {} : { error: contact.error }),
  };
}

function pinnedName(pin: ServerConfig, key: string): string | null {
  const name = pin.definitions[key]?.name;
  return typeof name === 'string' ? name : null;
}

function toolsFromFindings(
  pin: ServerConfig,
  findings: readonly DriftFinding[],
  omitted: boolean,
): ToolStatus[] {
  const byKey = new Map<string, ToolStatus>();
  for (const finding of findings) {
    if (finding.kind === 'wrong_subject') continue;
    const { kind, key, tool, pinned, observed, members, paths, severity, severities, problem } = finding;
    byKey.set(key, {
      key,
      tool,
      state: kind,
      pinned,
      observed,
      ...(members && { members }),
      ...(paths && { paths }),
      severity,
      ...(severities && { severities }),
      ...(problem !== undefined && { problem }),
    });
  }
  for (const [key, digest] of Object.entries(pin.pin.tools)) {
    if (!byKey.has(key))
      byKey.set(key, {
        key,
        tool: pinnedName(pin, key),
        state: omitted ? 'unobserved' : 'verified',
        pinned: digest,
        observed: omitted ? null : digest,
      });
  }
  return [...byKey.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

function observedCatalogDigest(pin: ServerConfig, tools: readonly ToolStatus[]): string | null {
  const entries: { key: string; digest: string }[] = [];
  for (const tool of tools) {
    if (tool.state === 'removed') continue;
    if (tool.observed === null) return null;
    entries.push({ key: tool.key, digest: tool.observed });
  }
  return foldCatalog(entries, { profile: pin.profile }).digest;
}

/** Every pinned tool, before any listing of the server was seen. */
function unobservedTools(server: ServerConfig): ToolStatus[] {
  return Object.entries(server.pin.tools)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, digest]): ToolStatus => ({
      key,
      tool: pinnedName(server, key),
      state: 'unobserved',
      pinned: digest,
      observed: null,
    }));
}

/**
 * What `GET /status` reports, fed by alert events and upstream contacts: per server, the last
 * observed catalog and each tool's state in it, the last drift with its explanation, the last contact.
 */
export class StatusBoard {
  readonly #entries = new Map<string, Entry>();
  readonly #pinOf: (server: string) => ServerConfig | undefined;

  /** `pinOf` returns the server's configuration in force (read when an event arrives). */
  constructor(pinOf: (server: string) => ServerConfig | undefined) {
    this.#pinOf = pinOf;
  }

  #entry(server: string): Entry {
    let entry = this.#entries.get(server);
    if (entry === undefined) {
      entry = {};
      this.#entries.set(server, entry);
    }
    return entry;
  }

  /** Alert sink: records completed listings and drift. */
  recordAlert(event: AlertEvent): void {
    if (event.event !== 'catalog.verified' && event.event !== 'catalog.drift') return;
    const pin = this.#pinOf(event.server);
    if (pin === undefined) return;
    const entry = this.#entry(event.server);
    const at = new Date().toISOString();
    if ('surface' in event && event.surface !== undefined) {
      const surfaces = (entry.surfaces ??= {});
      const record = (surfaces[event.surface] ??= {});
      const drift = event.event === 'catalog.drift';
      record.observed = {
        at,
        session: event.session,
        result: drift ? 'drift' : 'verified',
        catalog: drift ? null : event.catalog,
      };
      if (drift) record.lastDrift = { at, session: event.session, mode: event.mode, findings: event.drift };
      return;
    }
    const findings = event.event === 'catalog.drift' ? event.drift : [];
    const omitted = event.event === 'catalog.drift' && (event.findingsOmitted ?? 0) > 0;
    const catalog =
      event.event === 'catalog.verified'
        ? event.catalog
        : omitted
          ? null
          : observedCatalogDigest(pin, toolsFromFindings(pin, findings, false));
    entry.observed = {
      at,
      session: event.session,
      result: event.event === 'catalog.verified' ? 'verified' : 'drift',
      catalog,
      againstPin: pin.pin.catalog,
      wrongSubject: findings.some((finding) => finding.kind === 'wrong_subject'),
    };
    entry.toolsSource = { pin, findings, omitted };
    if (event.event === 'catalog.drift')
      entry.lastDrift = {
        at,
        session: event.session,
        mode: event.mode,
        findings: event.drift,
        ...(omitted ? { findingsOmitted: event.findingsOmitted } : {}),
      };
  }

  /** Records the latest contact with a server's upstream. */
  recordContact(server: string, contact: UpstreamContact): void {
    this.#entry(server).lastContact = { at: Date.now(), contact };
  }

  /** The last contact with a server's upstream, if any. */
  lastContact(server: string): ContactStatus | null {
    const last = this.#entries.get(server)?.lastContact;
    return last === undefined ? null : contactStatus(last);
  }

  /** The status of each of these servers (the ones routed now). */
  snapshot(servers: Iterable<ServerConfig>): ServerStatus[] {
    const out: ServerStatus[] = [];
    for (const server of servers) {
      const entry = this.#entries.get(server.name) ?? {};
      out.push({
        name: server.name,
        route: `/${server.name}/mcp`,
        mode: server.mode,
        onDrift: server.onDrift,
        upstream: describeUpstream(server.upstream),
        pinned: { catalog: server.pin.catalog, tools: Object.keys(server.pin.tools).length },
        observed: entry.observed ?? null,
        tools:
          entry.toolsSource === undefined
            ? unobservedTools(server)
            : toolsFromFindings(entry.toolsSource.pin, entry.toolsSource.findings, entry.toolsSource.omitted),
        lastDrift: entry.lastDrift ?? null,
        lastContact: entry.lastContact === undefined ? null : contactStatus(entry.lastContact),
        surfaces: surfacesOf(server, entry),
        ...(server.principalPins === undefined
          ? {}
          : {
              principalCatalogs: Object.fromEntries(
                Object.entries(server.principalPins).map(([name, entry]) => [name, entry.pin.catalog]),
              ),
            }),
      });
    }
    return out;
  }
}

/** The status of each surface the server's pin pins besides tools. */
function surfacesOf(server: ServerConfig, entry: Entry): ServerStatus['surfaces'] {
  const pin: PinView = server;
  const out: Partial<Record<OtherSurface, SurfaceStatus>> = {};
  const seen = (surface: OtherSurface): Pick<SurfaceStatus, 'observed' | 'lastDrift'> => ({
    observed: entry.surfaces?.[surface]?.observed ?? null,
    lastDrift: entry.surfaces?.[surface]?.lastDrift ?? null,
  });
  for (const surface of ['prompts', 'resourceTemplates'] as const) {
    const section = pin.pin[surface];
    if (section !== undefined)
      out[surface] = {
        pinned: { catalog: section.catalog, items: Object.keys(section.items).length },
        ...seen(surface),
      };
  }
  const instructions = pin.pin.instructions;
  if (instructions !== undefined)
    out.instructions = {
      pinned: { catalog: instructions, items: pin.instructions === undefined ? 0 : 1 },
      ...seen('instructions'),
    };
  return out;
}
