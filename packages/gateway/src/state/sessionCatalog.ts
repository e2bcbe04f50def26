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
 * The catalog one session (or one server+credential in 2026-07-28) was last served: per tool
 * name, the definition the client saw. Pages of a listing add to it; a first page starts over.
 */
export class SessionCatalog implements CatalogView {
  /** Tool name → the observation the client last saw under that name (see {@link tools}). */
  #tools: Map<string, ToolObservation> = new Map();
  /** `#tools` is a whole one-page catalog's map, shared with every session served it: never changed. */
  #toolsShared = false;
  /** True once the last page of a listing arrived. */
  complete = false;
  /** True after notifications/tools/list_changed: the next decision refetches. */
  stale = false;
  /** No observed key is pinned: another server's catalog. Every call is refused. */
  wrongSubject = false;
  /** Any tool of the listing differs from the pin (for onDrift: block-server). */
  drifted = false;
  /** The severities of the listing's drift (for onDrift: block-server per severity). */
  driftSeverities = new Set<DriftSeverity>();
  /**
   * Key -> `<pinned digest> <observed digest>` of each changed tool whose drift was judged low:
   * a call is allowed flagged (onDrift.low: flag) only while both digests are still these.
   */
  lowDrift = new Map<string, string>();
  /** Key -> the members of each changed tool that differ from the pinned definition. */
  changedMembers = new Map<string, readonly string[]>();
  /** When the last page of the latest listing arrived (ms since the epoch): its age, for revalidation. */
  completedAt = 0;
  /** A fetch-on-miss under way, shared by concurrent calls of the session. */
  refreshing: Promise<void> | undefined;
  #findings: DriftFinding[] = [];
  #reported = new Set<string>();

  /** Tool name → the observation the client last saw under that name. */
  get tools(): ReadonlyMap<string, ToolObservation> {
    return this.#tools;
  }

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
    if (first) {
      this.#findings = [];
      this.#reported = new Set();
      this.complete = false;
      this.drifted = false;
      this.driftSeverities = new Set();
      this.lowDrift = new Map();
      this.changedMembers = new Map();
      this.wrongSubject = false;
    }
    this.#addTools(page, first, last);
    // A definition repeated on several pages is one finding of the listing.
    for (const finding of page.findings) {
      const identity = findingIdentity(finding);
      if (this.#reported.has(identity)) continue;
      this.#reported.add(identity);
      this.#findings.push(finding);
    }
    if (page.findings.length > 0) this.drifted = true;
    for (const finding of page.findings) {
      this.driftSeverities.add(finding.severity);
      if (finding.kind === 'changed' && finding.members !== undefined)
        this.changedMembers.set(finding.key, finding.members);
    }
    if (page.lowDrift.length > 0) {
      const digests = new Map(page.observed.map((tool) => [tool.key, tool.digest ?? '']));
      for (const key of page.lowDrift)
        this.lowDrift.set(key, `${pin.pin.tools[key] ?? ''} ${digests.get(key) ?? ''}`);
    }
    if (!last) return undefined;
    this.complete = true;
    this.stale = false;
    this.completedAt = Date.now();
    return this.#complete(pin, first ? page : undefined);
  }

  /**
   * The page's tools by name. A whole catalog on one page (first and last) is its inspection's
   * map, built once and shared: a listing verified before is replayed to every session as the
   * same inspection, and a map of its thousands of tools per listing was most of what a replayed
   * listing allocated (its larger tables straight in V8's old generation: docs/benchmark.md, run I).
   */
  #addTools(page: PageInspection, first: boolean, last: boolean): void {
    if (first && last) {
      this.#tools = toolsOfWholePage(page);
      this.#toolsShared = true;
      return;
    }
    if (first || this.#toolsShared) {
      this.#tools = first ? new Map() : new Map(this.#tools);
      this.#toolsShared = false;
    }
    addObserved(this.#tools, page.observed);
  }

  /** The listing's completion; `page`: the listing's only page (first and last), else undefined. */
  #complete(pin: PinView, page: PageInspection | undefined): CatalogCompletion {
    // A listing of one page is judged against the pin once per inspection (a verified listing is
    // replayed to every session as the same inspection); a listing of several pages each time.
    const { removed, wrongSubject } =
      page === undefined ? judgeKeys(observedKeysOf(this.tools.values()), pin) : judgedPage(page, pin);
    const findings = [...this.#findings];
    const pinned = pin.pin.tools;
    for (const key of removed)
      findings.push({
        kind: 'removed',
        key,
        tool: null,
        pinned: pinned[key] ?? '',
        observed: null,
        severity: 'low',
      });
    this.wrongSubject = wrongSubject;
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
    this.#findings = [];
    this.#reported = new Set();
    return { ...capFindings(findings, pin), wrongSubject: this.wrongSubject, toolCount: this.tools.size };
  }
}

// A loaded pin's tools never change (a reload brings a new object): their keys are listed once per pin.
// A pin of thousands of tools is a dictionary-mode object, whose keys V8 sorts on every listing.
const pinnedKeysOf = new WeakMap<object, readonly string[]>();

function keysOf(tools: Readonly<Record<string, string>>): readonly string[] {
  let keys = pinnedKeysOf.get(tools);
  if (keys === undefined) {
    keys = Object.keys(tools);
    // Only a frozen pin (every pin the gateway loads is) is known never to change under its keys.
    if (Object.isFrozen(tools)) pinnedKeysOf.set(tools, keys);
  }
  return keys;
}

/** The observed keys against the pin: the pinned keys not observed, and whether none observed is pinned. */
interface KeysJudged {
  readonly removed: readonly string[];
  readonly wrongSubject: boolean;
}

function observedKeysOf(tools: Iterable<ToolObservation>): Set<string> {
  const keys = new Set<string>();
  for (const tool of tools) keys.add(tool.key);
  return keys;
}

function judgeKeys(observedKeys: ReadonlySet<string>, pin: PinView): KeysJudged {
  const pinned = pin.pin.tools;
  const pinnedKeys = keysOf(pinned);
  const removed = pinnedKeys.filter((key) => !observedKeys.has(key));
  const wrongSubject = observedKeys.size > 0 && pinnedKeys.length > 0 && !anyPinned(observedKeys, pinned);
  return { removed, wrongSubject };
}

// An inspection never changes (it is made once per listing's bytes): a one-page listing's keys are
// judged once per inspection and pin, not once per session that is served it.
const judgedPages = new WeakMap<PageInspection, { readonly pin: PinView; readonly judged: KeysJudged }>();

/** {@link judgeKeys} for a listing of this page alone (the catalog holds the keys of its tools, no others). */
function judgedPage(page: PageInspection, pin: PinView): KeysJudged {
  const seen = judgedPages.get(page);
  if (seen?.pin === pin) return seen.judged;
  const judged = judgeKeys(observedKeysOf(page.observed), pin);
  // Only a frozen pin (see keysOf) keeps the keys it was judged against.
  if (Object.isFrozen(pin.pin.tools)) judgedPages.set(page, { pin, judged });
  return judged;
}

/** True when one observed key is pinned (a listing of the pinned server names at least one). */
function anyPinned(observedKeys: ReadonlySet<string>, tools: Readonly<Record<string, string>>): boolean {
  for (const key of observedKeys) if (Object.hasOwn(tools, key)) return true;
  return false;
}

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

/** Adds tools by name; the same name with two different definitions is ambiguous, also across pages. */
function addObserved(tools: Map<string, ToolObservation>, observed: readonly ToolObservation[]): void {
  for (const tool of observed) {
    const previous = tools.get(tool.name ?? '');
    const ambiguous = previous !== undefined && previous.digest !== tool.digest;
    tools.set(
      tool.name ?? '',
      ambiguous
        ? { name: tool.name, key: tool.key, problem: 'two different definitions share this name' }
        : tool,
    );
  }
}

/** The tools of a whole catalog served on one page, by name: one map per inspection, never changed. */
const WHOLE_PAGE_TOOLS = new WeakMap<PageInspection, Map<string, ToolObservation>>();

function toolsOfWholePage(page: PageInspection): Map<string, ToolObservation> {
  let tools = WHOLE_PAGE_TOOLS.get(page);
  if (tools === undefined) {
    tools = new Map();
    addObserved(tools, page.observed);
    WHOLE_PAGE_TOOLS.set(page, tools);
  }
  return tools;
}
