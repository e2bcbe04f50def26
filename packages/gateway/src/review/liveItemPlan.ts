import { hash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { parsePinFile, type ServerConfig } from '../config/index.js';
import { planPinUpdate, type PinUpdatePlan } from '../config/planPinUpdate.js';
import { renderPinRewrite } from '../config/rewritePinFile.js';
import type { ToolDrift } from '../explain/explainDrift.js';
import { comparePinWithLive, type PinnedLiveCatalog } from '../transports/pinnedLiveCatalog.js';

/** One drifted tool of a server, as a reviewer saw it on the page. */
export interface ReviewedItem {
  readonly key: string;
  /** The observed digest the page showed ('' for a removed tool): the approval is of that definition. */
  readonly observed: string;
  /**
   * The fingerprint of the explanation the page showed ({@link shownFingerprint}); '' when it showed
   * none (an added or removed tool). The digest alone leaves out the members pinned by value.
   */
  readonly shown: string;
}

/** What the page shows of a drift, besides its digests: the changed members, pointers and texts. */
export type ShownDrift = Pick<ToolDrift, 'members' | 'paths' | 'text'>;

/**
 * A fingerprint of the explanation of a drift as the page shows it ('' when there is none): the
 * members pinned by value (`_meta`, `icons`…) are outside the observed digest, so an upstream could
 * swap them between what a reviewer read and the approval under an unchanged digest.
 */
export function shownFingerprint(drift: ShownDrift): string {
  const members = drift.members ?? [];
  const paths = drift.paths ?? [];
  const text = drift.text ?? [];
  if (members.length === 0 && paths.length === 0 && text.length === 0) return '';
  return hash('sha256', JSON.stringify([members, paths, text]), 'base64url');
}

/** The approval of one tool, planned exactly as `toolpin approve --tool <name>` plans it. */
export interface LiveItemPlan {
  readonly live: PinnedLiveCatalog;
  readonly entry: ToolDrift;
  readonly plan: PinUpdatePlan;
  /** The pin file's text after the approval (what is written, what the patch shows). */
  readonly next: string;
}

/** A plan, or why there is none (the page shows the message; HTTP `status`). */
export type LiveItemPlanResult =
  | { readonly ok: true; readonly value: LiveItemPlan }
  | { readonly ok: false; readonly status: number; readonly message: string };

/** The live drift of one tool, or why there is none. */
export type LiveItemResult =
  | { readonly ok: true; readonly live: PinnedLiveCatalog; readonly entry: ToolDrift }
  | { readonly ok: false; readonly status: number; readonly message: string };

/**
 * Lists the server's live catalog as `toolpin approve` does (transports/pinnedLiveCatalog, with
 * the pin file as it is on disk now) and finds the drift of one tool. Rejects with GatewayError
 * GW_CATALOG_UNAVAILABLE when the upstream cannot be listed, GW_PIN_FILE_INVALID when the file no
 * longer loads.
 */
export async function liveItemDrift(
  server: ServerConfig,
  key: string,
  timeoutMs: number,
): Promise<LiveItemResult> {
  const text = await readFile(server.file, 'utf8');
  const pinFile = { file: server.file, text, server: parsePinFile(text, server.file) };
  const live = await comparePinWithLive(pinFile, {}, { timeoutMs });
  const entry = live.explanation.drift.find((candidate) => candidate.key === key);
  if (entry === undefined)
    return {
      ok: false,
      status: 409,
      message: 'the live catalog shows no drift for this tool now: reload the page',
    };
  return { ok: true, live, entry };
}

/**
 * Plans the approval of one tool exactly as `toolpin approve --tool <name>` does (planPinUpdate on
 * the live catalog, renderPinRewrite for the text). Refused when the live tool is no longer the
 * definition the reviewer saw: nothing is approved unseen. Rejects as {@link liveItemDrift}.
 */
export async function planLiveItem(
  server: ServerConfig,
  item: ReviewedItem,
  timeoutMs: number,
): Promise<LiveItemPlanResult> {
  const found = await liveItemDrift(server, item.key, timeoutMs);
  if (!found.ok) return found;
  const { live, entry } = found;
  if ((entry.observed ?? '') !== item.observed)
    return {
      ok: false,
      status: 409,
      message: 'the live definition changed since the page showed it; nothing was approved: reload the page',
    };
  // A member pinned by value swapped under the same digest: not the definition the reviewer saw either.
  if (item.shown !== '' && shownFingerprint(entry) !== item.shown)
    return {
      ok: false,
      status: 409,
      message:
        'a member of the live definition changed since the page showed it (same digest); nothing was approved: reload the page',
    };
  const name = entry.tool ?? entry.from?.tool;
  if (name === null || name === undefined)
    return { ok: false, status: 409, message: 'this tool has no name to approve it by; use toolpin approve' };
  const planned = planPinUpdate(live.server, live.observed, [name]);
  if (!planned.ok) return { ok: false, status: 409, message: planned.message };
  const { text: next } = renderPinRewrite(live.text, server.file, planned.plan);
  return { ok: true, value: { live, entry, plan: planned.plan, next } };
}
