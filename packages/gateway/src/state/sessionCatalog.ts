import type { DriftSeverity } from '../explain/driftSeverity.js';
import { findingIdentity, type DriftFinding } from '../policy/driftFinding.js';
import type { PinView } from '../policy/pinView.js';
import type { PageInspection } from '../policy/inspectToolsPage.js';
import type { ToolObservation } from '../policy/toolObservation.js';
import type { CatalogView } from '../policy/catalogView.js';

/** Bound on the findings of one catalog event (one log line, one webhook body). */
export const MAX_DRIFT_FINDINGS = 200;

/** What a finished listing found, for the catalog event. */
export interface CatalogCompletion {
  /** One per distinct definition, at most MAX_DRIFT_FINDINGS: wrong_subject and pinned tools first. */
  readonly findings: DriftFinding[];
  /** Findings left out past MAX_DRIFT_FINDINGS. */
  readonly findingsOmitted: number;
  readonly wrongSubject: boolean;
  readonly toolCount: number;
}

/**
 * What a whole listing on one page leaves in a catalog, shared read-only by every session the same
 * verified listing is replayed to under the same pin: adopting it costs O(1) where rebuilding the
 * maps of a 5,000-tool listing cost milliseconds and their garbage. Its maps are never written: a
 * catalog that adopted one copies them before a later page adds to them.
 */
export interface SettledCatalog {
  readonly pin: PinView;
  readonly tools: ReadonlyMap<string, ToolObservation>;
  readonly drifted: boolean;
  readonly driftSeverities: ReadonlySet<DriftSeverity>;
  readonly lowDrift: ReadonlyMap<string, string>;
  readonly changedMembers: ReadonlyMap<string, readonly string[]>;
  readonly wrongSubject: boolean;
  readonly completion: CatalogCompletion;
}

/** A catalog's maps while they are its own, writable. */
interface CatalogMaps {
  readonly tools: Map<string, ToolObservation>;
  readonly driftSeverities: Set<DriftSeverity>;
  readonly lowDrift: Map<string, string>;
  readonly changedMembers: Map<string, readonly string[]>;
}

/**
 * The catalog one session (or one server+credential in 2026-07-28) was last served: per tool
 * name, the definition the client saw. Pages of a listing add to it; a first page starts over.
 */
export class SessionCatalog implements CatalogView {
  /** Tool name → the observation the client last saw under that name. */
  tools: ReadonlyMap<string, ToolObservation> = EMPTY_MAP;
  /** True once the last page of a listing arrived. */
  complete = false;
  /** True after notifications/tools/list_changed: the next decision refetches. */
  stale = false;
  /** No observed key is pinned: another server's catalog. Every call is refused. */
  wrongSubject = false;
  /** Any tool of the listing differs from the pin (for onDrift: block-server). */
  drifted = false;
  /** The severities of the listing's drift (for onDrift: block-server per severity). */
  driftSeverities: ReadonlySet<DriftSeverity> = EMPTY_SET;
  /**
   * Key -> `<pinned digest> <observed digest>` of each changed tool whose drift was judged low:
   * a call is allowed flagged (onDrift.low: flag) only while both digests are still these.
   */
  lowDrift: ReadonlyMap<string, string> = EMPTY_MAP;
  /** Key -> the members of each changed tool that differ from the pinned definition. */
  changedMembers: ReadonlyMap<string, readonly string[]> = EMPTY_MAP;
  /** When the last page of the latest listing arrived (ms since the epoch): its age, for revalidation. */
  completedAt = 0;
  /** A fetch-on-miss under way, shared by concurrent calls of the session. */
  refreshing: Promise<void> | undefined;
  // The listing under way (pages before its last): made by its first page, dropped at its last.
  #pending: { findings: DriftFinding[]; reported: Set<string> } | undefined;
  // The maps when they are this catalog's own (a page may add to them); undefined while they are
  // the shared empty ones or a SettledCatalog's.
  #maps: CatalogMaps | undefined;

  /** True when a decision can be made from what the session saw. */
  get usable(): boolean {
    return !this.stale && (this.complete || this.tools.size > 0);
  }

  /**
   * The pin this catalog's verdicts were judged under: after a reload they are not reused (the
   * next call lists upstream first and judges the catalog under the pin in force).
   */
  judgedUnder: PinView | undefined;

  /**
   * Records one page. `first` is a page requested without cursor; `last` a page without
   * nextCursor. Returns the completion summary when the listing is finished.
   */
  addPage(pin: PinView, page: PageInspection, first: boolean, last: boolean): CatalogCompletion | undefined {
    // A listing judged under several pins (a reload between its pages) is judged under none.
    this.judgedUnder = first || this.judgedUnder === pin ? pin : undefined;
    const own = this.#ownMaps(first);
    if (first) {
      this.complete = false;
      this.drifted = false;
      this.wrongSubject = false;
    }
    for (const tool of page.observed) {
      const previous = own.tools.get(tool.name ?? '');
      // The same name on two pages with different definitions is as ambiguous as on one page.
      const ambiguous = previous !== undefined && previous.digest !== tool.digest;
      own.tools.set(
        tool.name ?? '',
        ambiguous
          ? { name: tool.name, key: tool.key, problem: 'two different definitions share this name' }
          : tool,
      );
    }
    this.#addFindings(page);
    if (page.findings.length > 0) this.drifted = true;
    for (const finding of page.findings) {
      own.driftSeverities.add(finding.severity);
      if (finding.kind === 'changed' && finding.members !== undefined)
        own.changedMembers.set(finding.key, finding.members);
    }
    if (page.lowDrift.length > 0) {
      const digests = new Map(page.observed.map((tool) => [tool.key, tool.digest ?? '']));
      for (const key of page.lowDrift)
        own.lowDrift.set(key, `${pin.pin.tools[key] ?? ''} ${digests.get(key) ?? ''}`);
    }
    if (!last) return undefined;
    this.#finish();
    return this.#complete(pin);
  }

  /**
   * What this catalog holds after a whole listing on one page (`addPage(pin, page, true, true)`
   * returned `completion`), to share with the sessions the same listing reaches next under `pin`.
   */
  settle(pin: PinView, completion: CatalogCompletion): SettledCatalog {
    // From now on these maps are shared: a later page of this catalog copies them first.
    this.#maps = undefined;
    Object.freeze(completion.findings);
    return Object.freeze({
      pin,
      tools: this.tools,
      drifted: this.drifted,
      driftSeverities: this.driftSeverities,
      lowDrift: this.lowDrift,
      changedMembers: this.changedMembers,
      wrongSubject: this.wrongSubject,
      completion: Object.freeze(completion),
    });
  }

  /** Takes a settled listing as `addPage(settled.pin, page, true, true)` of its page would: in O(1). */
  adopt(settled: SettledCatalog): CatalogCompletion {
    this.judgedUnder = settled.pin;
    this.tools = settled.tools;
    this.drifted = settled.drifted;
    this.driftSeverities = settled.driftSeverities;
    this.lowDrift = settled.lowDrift;
    this.changedMembers = settled.changedMembers;
    this.wrongSubject = settled.wrongSubject;
    this.#maps = undefined;
    this.#pending = undefined;
    this.#finish();
    return settled.completion;
  }

  #finish(): void {
    this.complete = true;
    this.stale = false;
    this.completedAt = Date.now();
  }

  /** The maps a page adds to: fresh for a first page, else this catalog's own (a shared one copied). */
  #ownMaps(first: boolean): CatalogMaps {
    if (first) this.#pending = undefined;
    if (!first && this.#maps !== undefined) return this.#maps;
    const maps: CatalogMaps = {
      tools: new Map(first ? [] : this.tools),
      driftSeverities: new Set(first ? [] : this.driftSeverities),
      lowDrift: new Map(first ? [] : this.lowDrift),
      changedMembers: new Map(first ? [] : this.changedMembers),
    };
    this.tools = maps.tools;
    this.driftSeverities = maps.driftSeverities;
    this.lowDrift = maps.lowDrift;
    this.changedMembers = maps.changedMembers;
    this.#maps = maps;
    return maps;
  }

  /** A definition repeated on several pages is one finding of the listing. */
  #addFindings(page: PageInspection): void {
    if (page.findings.length === 0) return;
    const pending = (this.#pending ??= { findings: [], reported: new Set() });
    for (const finding of page.findings) {
      const identity = findingIdentity(finding);
      if (pending.reported.has(identity)) continue;
      pending.reported.add(identity);
      pending.findings.push(finding);
    }
  }

  #complete(pin: PinView): CatalogCompletion {
    const observedKeys = new Set<string>();
    for (const tool of this.tools.values()) observedKeys.add(tool.key);
    const findings = this.#pending?.findings ?? [];
    this.#pending = undefined;
    for (const [key, digest] of Object.entries(pin.pin.tools)) {
      if (!observedKeys.has(key))
        findings.push({ kind: 'removed', key, tool: null, pinned: digest, observed: null, severity: 'low' });
    }
    const pinnedKeys = Object.keys(pin.pin.tools);
    this.wrongSubject =
      observedKeys.size > 0 &&
      pinnedKeys.length > 0 &&
      ![...observedKeys].some((key) => key in pin.pin.tools);
    if (this.wrongSubject) {
      findings.unshift({
        kind: 'wrong_subject',
        key: '*',
        tool: null,
        pinned: pin.pin.catalog,
        observed: null,
        severity: 'high',
      });
    }
    return { ...capFindings(findings, pin), wrongSubject: this.wrongSubject, toolCount: this.tools.size };
  }
}

// Shared empty collections of a catalog nothing was listed in yet (never written: see #ownMaps).
const EMPTY_MAP: ReadonlyMap<never, never> = new Map<never, never>();
const EMPTY_SET: ReadonlySet<never> = new Set<never>();

// The tools outside the pin (added, unverifiable) are as many as the upstream likes; the findings
// about the pin's own tools, and wrong_subject, are the ones an operator must see: they go first.
function capFindings(
  findings: DriftFinding[],
  pin: PinView,
): Pick<CatalogCompletion, 'findings' | 'findingsOmitted'> {
  if (findings.length <= MAX_DRIFT_FINDINGS) return { findings, findingsOmitted: 0 };
  const first = (finding: DriftFinding): boolean =>
    finding.kind === 'wrong_subject' || Object.hasOwn(pin.pin.tools, finding.key);
  const ordered = [...findings.filter(first), ...findings.filter((finding) => !first(finding))];
  return {
    findings: ordered.slice(0, MAX_DRIFT_FINDINGS),
    findingsOmitted: ordered.length - MAX_DRIFT_FINDINGS,
  };
}
