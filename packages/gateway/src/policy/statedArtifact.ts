import { driftActionFor } from '../config/driftPolicy.js';
import type { OnDriftSetting, PinnedArtifact, ServerInfoArtifact } from '../config/types.js';
import { isObject } from '../wire/isObject.js';
import { compareArtifacts, describeArtifact } from './artifactDrift.js';

/** Where a 2026-07-28 result states the server's identity (`server/discover` among them). */
export const SERVER_INFO_META_KEY = 'io.modelcontextprotocol/serverInfo';

// As long as a pinned name or version may be (config/pinFileSchema.ts): a longer one never matches.
const MAX_STATED_LENGTH = 512;

/**
 * What one answer states of the server: its name and version, or that it states none. `malformed`:
 * the statement is not an object of two strings (a number, an object, an array); its values are
 * shown as their JSON, and it never matches a pin.
 */
export type StatedServer =
  | { readonly stated: true; readonly artifact: ServerInfoArtifact; readonly malformed: boolean }
  | { readonly stated: false };

/** Text a server stated, bounded: one longer than a pin may hold is cut and marked (it can never match). */
function bounded(text: string, malformed: boolean): { text: string; malformed: boolean } {
  return text.length > MAX_STATED_LENGTH
    ? { text: `${text.slice(0, MAX_STATED_LENGTH)}…`, malformed: true }
    : { text, malformed };
}

/** A value that is not what the protocol says, shown as its JSON after what it is not (marked malformed). */
function shownAsJson(value: unknown, label: string): { text: string; malformed: boolean } {
  return bounded(`(${label}) ${JSON.stringify(value) ?? 'undefined'}`, true);
}

/** One stated member: a string as sent, anything else as its JSON. */
function statedText(value: unknown): { text: string; malformed: boolean } {
  return typeof value === 'string' ? bounded(value, false) : shownAsJson(value, 'not a string');
}

function statedServer(value: unknown): StatedServer {
  if (!isObject(value)) {
    const shown = shownAsJson(value, 'not an object');
    return { stated: true, artifact: { kind: 'server', name: shown.text, version: '' }, malformed: true };
  }
  // Only name and version are pinned; the other members (title, icons, websiteUrl) pass as served.
  const name = statedText(value.name);
  const version = statedText(value.version);
  return {
    stated: true,
    artifact: { kind: 'server', name: name.text, version: version.text },
    malformed: name.malformed || version.malformed,
  };
}

/**
 * What an `initialize` or `server/discover` result states of the server: `serverInfo` (2025 and
 * earlier) and `_meta["io.modelcontextprotocol/serverInfo"]` (2026-07-28), each one present judged
 * (two that disagree cannot both be the pinned one). Empty: the result states no identity.
 */
export function statedServers(result: Readonly<Record<string, unknown>>): StatedServer[] {
  const stated: StatedServer[] = [];
  if ('serverInfo' in result) stated.push(statedServer(result.serverInfo));
  const meta = result._meta;
  if (isObject(meta) && SERVER_INFO_META_KEY in meta) stated.push(statedServer(meta[SERVER_INFO_META_KEY]));
  return stated.length > 0 ? stated : [{ stated: false }];
}

/** What a client read at initialize (or server/discover) states: its `serverInfo`, or none when undefined. */
export function statedServerInfo(serverInfo: unknown): StatedServer[] {
  return statedServers(serverInfo === undefined ? {} : { serverInfo });
}

/** What the pin says of a server's stated identity: the pinned artifact, its mode and drift policy. */
export interface StatedArtifactPin {
  readonly mode: 'enforce' | 'monitor';
  readonly onDrift: OnDriftSetting;
  readonly pin: { readonly artifact?: PinnedArtifact };
}

/** How the stated identity compares with the pin (see {@link judgeStatedServers}). */
export type StatedArtifactVerdict =
  | { readonly kind: 'verified'; readonly artifact: ServerInfoArtifact }
  | {
      readonly kind: 'drifted';
      readonly reason: 'artifact_drifted';
      /** `refused`: enforce mode with `onDrift` low `block-server`; else `flagged` (reported, served). */
      readonly action: 'refused' | 'flagged';
      readonly severity: 'low' | 'high';
      readonly pinned: ServerInfoArtifact;
      /** What the server states; null when it states none. */
      readonly observed: ServerInfoArtifact | null;
      readonly malformed: boolean;
      /** One line, `old -> new`. */
      readonly summary: string;
    };

/**
 * Judges what an answer states of the server against a pinned `{kind: server}` artifact: undefined
 * when the pin records no such artifact (nothing is judged). A difference, a missing statement or a
 * malformed one is `artifact_drifted`, low severity: what a server says, not what runs. It is
 * refused only where the pin's drift policy blocks low drift (`onDrift: block-server`, or
 * `{low: block-server}`) in enforce mode; otherwise it is reported and the answer served.
 */
export function judgeStatedServers(
  pin: StatedArtifactPin,
  stated: readonly StatedServer[],
): StatedArtifactVerdict | undefined {
  const pinned = pin.pin.artifact;
  if (pinned?.kind !== 'server') return undefined;
  for (const statement of stated) {
    const observed = statement.stated ? statement.artifact : null;
    const comparison = observed === null ? undefined : compareArtifacts(pinned, observed);
    if (statement.stated && !statement.malformed && comparison?.equal === true) continue;
    const blocks = pin.mode === 'enforce' && driftActionFor(pin.onDrift, 'low') === 'block-server';
    return {
      kind: 'drifted',
      reason: 'artifact_drifted',
      action: blocks ? 'refused' : 'flagged',
      severity: 'low',
      pinned,
      observed,
      malformed: statement.stated && statement.malformed,
      summary: `${describeArtifact(pinned)} -> ${observed === null ? 'no serverInfo stated' : `${describeArtifact(observed)}${statement.stated && statement.malformed ? ' (malformed)' : ''}`}`,
    };
  }
  return { kind: 'verified', artifact: pinned };
}

/**
 * The artifact `toolpin pin`, `protect` and `approve` record for an HTTP upstream: the name and
 * version its answer states, or why none can be recorded (none stated, malformed, or two that disagree).
 */
export function recordableServer(
  stated: readonly StatedServer[],
): { readonly artifact: ServerInfoArtifact } | { readonly problem: string } {
  const [first, ...rest] = stated;
  if (first === undefined || !first.stated) return { problem: 'the server states no serverInfo' };
  if (first.malformed)
    return { problem: `the server's serverInfo is malformed: ${describeArtifact(first.artifact)}` };
  for (const other of rest)
    if (!other.stated || other.malformed || !compareArtifacts(first.artifact, other.artifact).equal)
      return { problem: 'the server states two different serverInfo values' };
  return { artifact: first.artifact };
}
