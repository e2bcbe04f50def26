import type { Request } from 'express';
import type { AdminUiMode } from '../config/index.js';
import { sameToken, tokenMatches } from '../observe/adminApp.js';
import type { ReviewActions } from './renderReviewPage.js';
import { sameOriginRequest, type ReviewSession, type ReviewSessions } from './reviewSessions.js';

/** Who is reading: how they authenticated, and whether they may write. */
export interface Reader {
  readonly session?: ReviewSession;
  /** Authenticated by the `Authorization: Bearer` header (a script, not a browser form). */
  readonly viaHeader: boolean;
  /** Why this reader may not write, when it may not. */
  readonly readOnlyBecause?: string;
}

/** The rule of a tokenless admin listener (docs/review-ui.md). */
export const NO_TOKEN_READ_ONLY =
  'read-only: no admin.token is configured, and the page writes pins only for a reader who gave the token. To approve here, set admin: { token: … } in the gateway file, then sign in at /ui/login';
const READONLY_MODE = 'read-only: admin.ui is readonly';

/**
 * Who may read and write the review page. Reading: anyone on the admin listener when no token is
 * configured (as every admin endpoint), else the bearer header or a signed-in session. Writing:
 * never in `readonly` mode nor without a token; with a bearer header; or from a signed-in browser
 * whose request is same-origin and carries its session's CSRF token.
 */
export class ReviewAccess {
  readonly #mode: AdminUiMode;
  readonly #token: string | undefined;
  readonly #sessions: ReviewSessions;

  constructor(mode: AdminUiMode, token: string | undefined, sessions: ReviewSessions) {
    this.#mode = mode;
    this.#token = token;
    this.#sessions = sessions;
  }

  /** True when a token is configured (the page has a sign-in form). */
  get signsIn(): boolean {
    return this.#token !== undefined;
  }

  /** The reader of a request; undefined when a token is configured and none was given. */
  readerOf(req: Request): Reader | undefined {
    const readOnly = this.#mode === 'readonly' ? { readOnlyBecause: READONLY_MODE } : {};
    if (this.#token === undefined) return { viaHeader: false, readOnlyBecause: NO_TOKEN_READ_ONLY };
    if (tokenMatches(req.headers.authorization, this.#token)) return { viaHeader: true, ...readOnly };
    const session = this.#sessions.of(req);
    return session === undefined ? undefined : { session, viaHeader: false, ...readOnly };
  }

  /** True when `given` is the admin token. */
  isToken(given: unknown): boolean {
    return this.#token !== undefined && typeof given === 'string' && sameToken(given, this.#token);
  }

  /** Why this write is refused, or undefined when it may go on. */
  refuseWrite(req: Request, reader: Reader): string | undefined {
    if (reader.readOnlyBecause !== undefined) return reader.readOnlyBecause;
    if (reader.viaHeader) return undefined;
    if (reader.session === undefined) return 'sign in with the admin token first';
    if (!sameOriginRequest(req))
      return 'refused: the request does not come from the review page (cross-site)';
    const csrf = (req.body as { csrf?: unknown } | undefined)?.csrf;
    if (typeof csrf !== 'string' || !sameToken(csrf, reader.session.csrf))
      return 'refused: the form token is missing or wrong (reload the page)';
    return undefined;
  }

  /** What the page offers this reader. */
  actionsFor(reader: Reader): ReviewActions {
    if (reader.readOnlyBecause !== undefined)
      return { mode: this.#mode, readOnlyBecause: reader.readOnlyBecause };
    if (reader.session === undefined)
      return { mode: this.#mode, readOnlyBecause: 'sign in at /ui/login to approve or keep blocked' };
    return { mode: this.#mode, csrf: reader.session.csrf };
  }
}
