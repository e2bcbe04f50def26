import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { DEFAULT_PINS_FOLDER } from '../defaults.js';
import type { DenyData } from '../policy/decision.js';
import { findingIdentity, type DriftFinding } from '../policy/driftFinding.js';
import { quoteName, shellWord } from '../policy/refusalMessage.js';
import type { AlertEvent, AlertSink, OtherSurface } from './alerts.js';
import { DEFAULT_AGGREGATE_SECONDS } from './alertWebhooks.js';
import { CallWindows } from './callWindows.js';
import type { AggregatedCallEvent } from './webhookEvent.js';

/** The MCP log levels (RFC 5424 severities), least severe first. */
export const MCP_LOG_LEVELS = [
  'debug',
  'info',
  'notice',
  'warning',
  'error',
  'critical',
  'alert',
  'emergency',
] as const;

/** One `notifications/message` the gateway sends the client on its own behalf. */
export interface ClientNotice {
  readonly jsonrpc: '2.0';
  readonly method: 'notifications/message';
  readonly params: { readonly level: 'warning'; readonly logger: 'toolpin'; readonly data: string };
}

/** Options of {@link ClientNotices}. */
export interface ClientNoticesOptions {
  readonly server: string;
  /** The pin file, named in the command a notice suggests. */
  readonly pinFile?: string;
  /** Sends one notice to the client (the bridge serializes it like any message it sends). */
  readonly send: (notice: ClientNotice) => void;
  /** Refusals of one tool and reason after the first are counted this long, then told as one notice. @default 10 s */
  readonly windowMs?: number;
}

/** Distinct tools whose refusals are counted apart; further tools share one count per reason. */
const MAX_TOOL_WINDOWS = 16;
/** Drifts already told (by identity); a verified catalog forgets them. */
const MAX_TOLD_DRIFTS = 64;
/** Tools named in one drift notice. */
const MAX_NAMED_TOOLS = 5;

/** How one item of each listed surface is named in a notice. */
const ITEM_WORDS: Readonly<Record<'tools' | Exclude<OtherSurface, 'instructions'>, string>> = {
  tools: 'tool',
  prompts: 'prompt',
  resourceTemplates: 'resource template',
};

/**
 * How the person reviews a drift: `toolpin review` in the browser (with `--dir` when the pin is not
 * in ~/.toolpin), or `toolpin approve` on the terminal.
 */
function reviewHint(pinFile: string | undefined): string {
  if (pinFile === undefined) return 'review it in the browser with `toolpin review`';
  const dir = dirname(pinFile);
  const review =
    dir === join(homedir(), DEFAULT_PINS_FOLDER)
      ? 'toolpin review'
      : `toolpin review --dir ${shellWord(dir)}`;
  return `review it in the browser with \`${review}\`, or run \`toolpin approve ${shellWord(pinFile)}\``;
}

function describeFinding(finding: DriftFinding): string {
  const name = quoteName(finding.tool ?? finding.key.replace(/^(tool|prompt|template):/, ''));
  if (finding.kind === 'added') return `${name} (new, not approved)`;
  if (finding.kind === 'unverifiable') return `${name} (cannot be verified)`;
  return `${name} (changed)`;
}

/**
 * What the person at a desktop client is told (`notifications/message`, level `warning`, logger
 * `toolpin`) when the gateway hides drifted tools or refuses a call: one notice per distinct drift
 * (told again only after the catalog was verified in between), the first refusal of a tool and
 * reason at once and the ones after it counted into one notice per window (as webhooks aggregate
 * call events). Nothing is sent before the client saw `logging` in the server's capabilities, nor
 * when the client's `logging/setLevel` asked for a level above `warning`.
 */
export class ClientNotices {
  readonly #options: ClientNoticesOptions;
  /** Per surface (`tools` for the tools' events), the drifts already told, by identity. */
  readonly #told = new Map<string, Set<string>>();
  readonly #windows: CallWindows;
  #enabled = false;
  #closed = false;
  /** Index in MCP_LOG_LEVELS of the least severe level the client wants; 0 until it says. */
  #minimum = 0;

  constructor(options: ClientNoticesOptions) {
    this.#options = options;
    this.#windows = new CallWindows({
      windowMs: options.windowMs ?? DEFAULT_AGGREGATE_SECONDS * 1000,
      maxWindows: MAX_TOOL_WINDOWS,
      deliver: (event) => this.#tellCounted(event),
    });
  }

  /** The client was told the server has the `logging` capability: notices may be sent from now on. */
  enable(): void {
    this.#enabled = true;
  }

  /** Applies the client's `logging/setLevel`; false when the level is not one of the MCP levels. */
  setLevel(level: unknown): boolean {
    const index = MCP_LOG_LEVELS.indexOf(level as (typeof MCP_LOG_LEVELS)[number]);
    if (index < 0) return false;
    this.#minimum = index;
    return true;
  }

  /** Receives the server's alert events: a drift becomes a notice, a verified catalog forgets the drifts told. */
  readonly sink: AlertSink = (event: AlertEvent) => {
    // A verified listing forgets the drifts told of its own surface only.
    if (event.event === 'catalog.verified') this.#told.delete('surface' in event ? event.surface : 'tools');
    if (event.event === 'catalog.drift') this.#tellDrift(event.drift, event.mode, event.surface);
  };

  /** A call refused by the pin policy, with the refusal's sentence (the error's message). */
  callRefused(message: string, decision: DenyData): void {
    const admitted = this.#windows.admit({
      event: 'call.blocked',
      server: this.#options.server,
      session: 'client',
      id: null,
      decision,
    });
    if (admitted) this.#tell(message);
  }

  /** The session ended: counted refusals are not told any more, and no window keeps a timer. */
  close(): void {
    this.#closed = true;
    this.#windows.close();
  }

  #tellDrift(
    findings: readonly DriftFinding[],
    mode: string,
    surface: OtherSurface | 'tools' = 'tools',
  ): void {
    const hidden = findings.filter((finding) => finding.kind !== 'removed');
    if (hidden.length === 0) return;
    const identity = JSON.stringify(hidden.map((finding) => findingIdentity(finding)).sort());
    const told = this.#told.get(surface) ?? new Set<string>();
    if (told.has(identity)) return;
    if (told.size >= MAX_TOLD_DRIFTS) told.clear();
    told.add(identity);
    this.#told.set(surface, told);
    const { server } = this.#options;
    const file = this.#options.pinFile === undefined ? 'its pin file' : shellWord(this.#options.pinFile);
    const review = reviewHint(this.#options.pinFile);
    if (surface === 'instructions') {
      this.#tell(
        mode === 'monitor'
          ? `toolpin found that the instructions of ${server} differ from what was approved, delivered anyway (monitor mode); ${review}.`
          : `toolpin withheld the instructions of ${server}: they differ from what was approved; ${review}.`,
      );
      return;
    }
    const word = ITEM_WORDS[surface as keyof typeof ITEM_WORDS];
    if (hidden.some((finding) => finding.kind === 'wrong_subject')) {
      this.#tell(
        `toolpin hid every ${word} of ${server}: the server shares no ${word} with its pin, so it is not the approved server; check the upstream in ${file}.`,
      );
      return;
    }
    const named = hidden.slice(0, MAX_NAMED_TOOLS).map(describeFinding);
    const more = hidden.length > MAX_NAMED_TOOLS ? ` and ${hidden.length - MAX_NAMED_TOOLS} more` : '';
    const tools = `${named.join(', ')}${more}`;
    const count =
      hidden.length === 1
        ? `1 ${word} of ${server} that differs`
        : `${hidden.length} ${word}s of ${server} that differ`;
    this.#tell(
      mode === 'monitor'
        ? `toolpin found ${count} from what was approved, served anyway (monitor mode): ${tools}; ${review}.`
        : `toolpin hid ${count} from what was approved: ${tools}; ${review}.`,
    );
  }

  #tellCounted(event: AggregatedCallEvent): void {
    if (this.#closed) return;
    const calls = event.count === 1 ? '1 more call' : `${event.count} more calls`;
    const to = event.tool === null ? `tools of ${event.server}` : quoteName(event.tool);
    this.#tell(`toolpin blocked ${calls} to ${to} for the same reason (${event.reason}).`);
  }

  #tell(data: string): void {
    if (!this.#enabled || this.#closed) return;
    if (MCP_LOG_LEVELS.indexOf('warning') < this.#minimum) return;
    this.#options.send({
      jsonrpc: '2.0',
      method: 'notifications/message',
      params: { level: 'warning', logger: 'toolpin', data },
    });
  }
}
