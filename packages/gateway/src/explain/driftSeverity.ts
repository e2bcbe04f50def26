import { HASHED_MEMBERS, type RestrictedTool } from '@toolpin/digest';
import { isObject } from '../wire/isObject.js';
import type { DriftSeverity, PathSeverity, SeverityRule } from './driftSeverityTypes.js';
import { sameJsonValue as same } from './extraMembers.js';
import { judgeSchemaChange } from './schemaNarrowing.js';
import { pointerToken } from './schemaTexts.js';

export type { DriftSeverity, PathSeverity, SeverityRule } from './driftSeverityTypes.js';
export { highestSeverity } from './driftSeverityTypes.js';

/** The severity of one drifted definition: the highest of its paths', and each path's. */
export interface SeverityJudgment {
  readonly severity: DriftSeverity;
  /** One entry per changed path, in the order of the paths judged. */
  readonly severities: readonly PathSeverity[];
}

// MCP annotation hints, their defaults when absent (MCP 2025-06-18 ToolAnnotations), and the value
// that claims less risk: a server that moves a hint towards it asks to be trusted more.
const HINTS: Readonly<Record<string, { readonly absent: boolean; readonly safer: boolean }>> = {
  readOnlyHint: { absent: false, safer: true },
  destructiveHint: { absent: true, safer: false },
  idempotentHint: { absent: false, safer: true },
  openWorldHint: { absent: true, safer: false },
};

const HASHED = new Set<string>(HASHED_MEMBERS);

function judged(path: string, rule: SeverityRule): PathSeverity {
  const low = rule === 'schema-narrowed' || rule === 'annotation-more-risk' || rule === 'equivalent';
  return { path, severity: low ? 'low' : 'high', rule };
}

function hintRule(hint: { absent: boolean; safer: boolean }, before: unknown, after: unknown): SeverityRule {
  const pinned = before ?? hint.absent;
  const observed = after ?? hint.absent;
  if (typeof pinned !== 'boolean' || typeof observed !== 'boolean') return 'annotation-unproven';
  if (pinned === observed) return 'equivalent';
  return observed === hint.safer ? 'annotation-less-risk' : 'annotation-more-risk';
}

/** Judges changed annotations: a hint that claims less risk is high, one that claims more is low. */
export function judgeAnnotationsChange(pinned: unknown, observed: unknown): PathSeverity[] {
  if (same(pinned, observed)) return [];
  const before = pinned ?? {};
  const after = observed ?? {};
  if (!isObject(before) || !isObject(after)) return [judged('/annotations', 'annotation-unproven')];
  const out: PathSeverity[] = [];
  for (const name of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (same(before[name], after[name])) continue;
    const path = `/annotations/${pointerToken(name)}`;
    const hint = Object.hasOwn(HINTS, name) ? HINTS[name] : undefined;
    if (name === 'title') out.push(judged(path, 'text'));
    else if (hint === undefined) out.push(judged(path, 'annotation-unproven'));
    else out.push(judged(path, hintRule(hint, before[name], after[name])));
  }
  // `{}` for absent, or a default written out: claims nothing new.
  if (out.length === 0) out.push(judged('/annotations', 'equivalent'));
  return out;
}

// A prompt's arguments (docs/pin-surfaces.md): the title and description of each are text the
// model and the user read.
function judgeArgumentTexts(pinned: unknown, observed: unknown): PathSeverity[] {
  if (!Array.isArray(pinned) || !Array.isArray(observed)) return [];
  const out: PathSeverity[] = [];
  for (let i = 0; i < Math.min(pinned.length, observed.length); i++) {
    const before: unknown = pinned[i];
    const after: unknown = observed[i];
    if (!isObject(before) || !isObject(after)) continue;
    for (const member of ['title', 'description'])
      if (!same(before[member], after[member])) out.push(judged(`/arguments/${i}/${member}`, 'text'));
  }
  return out;
}

/** Every judgment of two definitions of one tool (or prompt, or template), by the pointer where it applies. */
function judgeHashedMembers(
  pinned: Readonly<Record<string, unknown>>,
  observed: Readonly<Record<string, unknown>>,
): PathSeverity[] {
  const out: PathSeverity[] = [];
  for (const member of ['title', 'description'] as const)
    if (!same(pinned[member], observed[member])) out.push(judged(`/${member}`, 'text'));
  out.push(...judgeArgumentTexts(pinned.arguments, observed.arguments));
  out.push(...judgeAnnotationsChange(pinned.annotations, observed.annotations));
  for (const member of ['inputSchema', 'outputSchema'] as const)
    out.push(...judgeSchemaChange(pinned[member], observed[member], `/${member}`));
  return out;
}

// The judgments by pointer, to find those that cover a path (at it, above it, or below it) in
// O(depth + log n) per path: a drift can change thousands of paths.
class JudgmentIndex {
  readonly #byPath = new Map<string, PathSeverity[]>();
  readonly #sorted: PathSeverity[];

  constructor(judgments: readonly PathSeverity[]) {
    for (const judgment of judgments) {
      const list = this.#byPath.get(judgment.path);
      if (list === undefined) this.#byPath.set(judgment.path, [judgment]);
      else list.push(judgment);
    }
    this.#sorted = [...judgments].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }

  covering(path: string): PathSeverity[] {
    const found: PathSeverity[] = [];
    for (let end = path.length; end > 0; end = path.lastIndexOf('/', end - 1))
      found.push(...(this.#byPath.get(path.slice(0, end)) ?? []));
    const prefix = `${path}/`;
    let low = 0;
    let high = this.#sorted.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((this.#sorted[middle]?.path ?? '') < prefix) low = middle + 1;
      else high = middle;
    }
    for (let i = low; i < this.#sorted.length; i++) {
      const judgment = this.#sorted[i] as PathSeverity;
      if (!judgment.path.startsWith(prefix)) break;
      found.push(judgment);
    }
    return found;
  }
}

// The judgments that cover a path decide it: high if any is; the rule of the most specific one
// of that severity. A path no judgment covers is high (never assumed harmless).
function judgePath(path: string, index: JudgmentIndex, hashed: ReadonlySet<string>): PathSeverity {
  const member = path.split('/')[1]?.replace(/~1/g, '/').replace(/~0/g, '~') ?? '';
  if (!hashed.has(member)) return judged(path, 'pinned-by-value');
  const covering = index.covering(path);
  const high = covering.filter((judgment) => judgment.severity === 'high');
  const deciding = high.length > 0 ? high : covering;
  const best = deciding.reduce<PathSeverity | undefined>(
    (found, judgment) => (found === undefined || judgment.path.length > found.path.length ? judgment : found),
    undefined,
  );
  return judged(path, best?.rule ?? 'unexplained');
}

/**
 * The severity of each changed path of a drifted definition (`paths` as explainDrift computes
 * them: hashed members, then members pinned by value) and of the whole. High: text the model reads
 * (`title`, `description`, `annotations.title`, a schema's `description`/`title`), a schema that may
 * accept more (or that the comparison cannot prove accepts less), a hint claiming less risk, any
 * member pinned by value. Low: a schema proven to accept only what the pinned one accepted, a hint
 * claiming more risk. Without both definitions a hashed member's path is high (`unexplained`), and
 * without paths the whole change is high. `members` names the hashed members of another surface
 * (a prompt's, a template's: docs/pin-surfaces.md); a prompt argument's title and description are text.
 * The rules: docs/drift-severity.md.
 */
export function judgeDriftSeverity(
  pinned: RestrictedTool | undefined,
  observed: RestrictedTool | undefined,
  paths: readonly string[] | undefined,
  members?: readonly string[],
): SeverityJudgment {
  const hashed = members === undefined ? HASHED : new Set(members);
  if (paths === undefined || paths.length === 0) return { severity: 'high', severities: [] };
  const judgments =
    pinned === undefined || observed === undefined ? [] : judgeHashedMembers(pinned, observed);
  const index = new JudgmentIndex(judgments);
  const severities = paths.map((path) => judgePath(path, index, hashed));
  // Every high judgment counts, covered by a path or not (fail closed).
  const high = [...severities, ...judgments].some((entry) => entry.severity === 'high');
  return { severity: high ? 'high' : 'low', severities };
}
