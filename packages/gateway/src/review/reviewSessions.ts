import { randomBytes } from 'node:crypto';
import type { Request } from 'express';

/** One browser signed in with the admin token: its cookie id and the CSRF token of its forms. */
export interface ReviewSession {
  readonly id: string;
  readonly csrf: string;
  readonly expires: number;
}

/** The session cookie's name; `Path=/ui`, HttpOnly, SameSite=Strict. */
export const REVIEW_COOKIE = 'toolpin_review';

// A handful of reviewers at once; the oldest session goes first past the bound.
const MAX_SESSIONS = 64;
const SESSION_TTL_MS = 8 * 3600 * 1000;
// A sign-in link is opened by the browser at once; one left unused expires soon.
const TICKET_TTL_MS = 5 * 60 * 1000;
const MAX_TICKETS = 16;

function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const [key, ...rest] = part.trim().split('=');
    if (key === name) return rest.join('=');
  }
  return undefined;
}

/** The review page's sign-in sessions (in memory: a restart signs everyone out). */
export class ReviewSessions {
  readonly #sessions = new Map<string, ReviewSession>();
  /** One-time sign-in tickets and when each expires. */
  readonly #tickets = new Map<string, number>();

  /** A one-time ticket that signs a browser in (`GET /ui/login?ticket=`), valid a few minutes. */
  ticket(now = Date.now()): string {
    if (this.#tickets.size >= MAX_TICKETS) {
      const oldest = this.#tickets.keys().next().value;
      if (oldest !== undefined) this.#tickets.delete(oldest);
    }
    const ticket = randomBytes(32).toString('base64url');
    this.#tickets.set(ticket, now + TICKET_TTL_MS);
    return ticket;
  }

  /** True when `ticket` was issued and has not expired; it is spent either way. */
  redeem(ticket: string, now = Date.now()): boolean {
    const expires = this.#tickets.get(ticket);
    this.#tickets.delete(ticket);
    return expires !== undefined && expires > now;
  }

  /** Starts a session (after the token was given). */
  create(now = Date.now()): ReviewSession {
    if (this.#sessions.size >= MAX_SESSIONS) {
      const oldest = this.#sessions.keys().next().value;
      if (oldest !== undefined) this.#sessions.delete(oldest);
    }
    const session = {
      id: randomBytes(32).toString('base64url'),
      csrf: randomBytes(32).toString('base64url'),
      expires: now + SESSION_TTL_MS,
    };
    this.#sessions.set(session.id, session);
    return session;
  }

  /** The request's live session, from its cookie. */
  of(req: Request, now = Date.now()): ReviewSession | undefined {
    const id = cookieValue(req.headers.cookie, REVIEW_COOKIE);
    if (id === undefined) return undefined;
    const session = this.#sessions.get(id);
    if (session === undefined) return undefined;
    if (session.expires <= now) {
      this.#sessions.delete(id);
      return undefined;
    }
    return session;
  }

  /** The `Set-Cookie` value of a session. */
  cookie(session: ReviewSession): string {
    const maxAge = Math.floor(SESSION_TTL_MS / 1000);
    return `${REVIEW_COOKIE}=${session.id}; Path=/ui; HttpOnly; SameSite=Strict; Max-Age=${maxAge}`;
  }
}

/**
 * The browser-side CSRF checks of a write: the request comes from this origin (`Origin`, when sent,
 * is the listener's own; `Sec-Fetch-Site`, when sent, is `same-origin`). With the SameSite=Strict
 * cookie and the per-session token of the form, a page of another site cannot write.
 */
export function sameOriginRequest(req: Request): boolean {
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin') return false;
  const origin = req.headers.origin;
  return origin === undefined || origin === `http://${req.headers.host ?? ''}`;
}
