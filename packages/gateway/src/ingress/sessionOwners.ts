import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { LRUCache } from 'lru-cache';
import { AUTH_SESSION_OWNERS_MAX } from '../defaults.js';

const SESSION_HEADER = 'mcp-session-id';

/** What an MCP session id may hold: visible ASCII only (MCP 2025-06-18, Session Management). */
const VALID_ID = /^[\x21-\x7e]+$/;

/**
 * The owners' key of a session id: without regard to case, since an upstream may read ids so (a
 * UUID parsed by Java's UUID.fromString or Go's uuid.Parse): a variant is its owner's session too.
 */
const ownerKey = (id: string): string => id.toLowerCase();

/** The owner of the gateway's own sessions: not a principal name (names are never empty). */
const GATEWAY = '';

/** The `Mcp-Session-Id` among the arguments of `writeHead` (an object, or a flat or nested list). */
function issuedIn(args: readonly unknown[]): string | undefined {
  for (const arg of args) {
    if (Array.isArray(arg)) {
      const flat = (arg as unknown[]).flat();
      for (let i = 0; i + 1 < flat.length; i += 2)
        if (String(flat[i]).toLowerCase() === SESSION_HEADER) return String(flat[i + 1]);
    } else if (typeof arg === 'object' && arg !== null) {
      for (const [name, value] of Object.entries(arg as OutgoingHttpHeaders))
        if (name.toLowerCase() === SESSION_HEADER && value !== undefined) return String(value);
    }
  }
  return undefined;
}

/**
 * The principal each MCP session of a resource-server route belongs to. The upstream sees the
 * gateway's credential (`static`: the same for every client), so it cannot tell one principal's
 * session from another's; the gateway, which verified both, refuses a session id to any principal
 * but its owner: the one it was issued to, or (an id this replica did not see issued: replicas
 * without sticky sessions, a restart) the first that used it here. Issued ids and claimed ones are
 * kept apart: an issue takes an id from whoever claimed it before it existed (a predictable id
 * claimed ahead cannot lock its principal out nor be shared), and claims (any made-up id claims one)
 * never push an issued id out of memory.
 */
export class SessionOwners {
  readonly #issued = new LRUCache<string, string>({ max: AUTH_SESSION_OWNERS_MAX });
  readonly #claimed = new LRUCache<string, string>({ max: AUTH_SESSION_OWNERS_MAX });

  /**
   * True when a request of `principal` may carry this `Mcp-Session-Id` (or none); a first use claims
   * it. An id is compared without regard to case; one that is not visible ASCII is nobody's.
   */
  allows(session: string | string[] | undefined, principal: string): boolean {
    if (session === undefined) return true;
    const id = Array.isArray(session) ? session[0] : session;
    // Not an id any upstream issues (a header sent twice arrives joined, with ", "): no session.
    if (id === undefined || !VALID_ID.test(id)) return false;
    const key = ownerKey(id);
    const owner = this.#issued.get(key) ?? this.#claimed.get(key);
    if (owner === undefined) this.#claimed.set(key, principal);
    return owner === undefined || owner === principal;
  }

  /** Records a session id issued to the gateway's own client (an aggregate member): nobody's to use. */
  reserve(id: string): void {
    this.#issued.set(ownerKey(id), GATEWAY);
    this.#claimed.delete(ownerKey(id));
  }

  /** Records the session id the answer on `res` issues (`Mcp-Session-Id`) as `principal`'s. */
  recordIssued(res: ServerResponse, principal: string): void {
    const issuedIds = this.#issued;
    const claimed = this.#claimed;
    const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => ServerResponse;
    const wrapped = (...args: unknown[]): ServerResponse => {
      const header = res.getHeader(SESSION_HEADER);
      const issued = issuedIn(args) ?? (header === undefined ? undefined : String(header));
      const key = issued === undefined ? undefined : ownerKey(issued);
      // An id is its first principal's: an upstream that hands it out again does not move it.
      if (key !== undefined && !issuedIds.has(key)) {
        issuedIds.set(key, principal);
        claimed.delete(key);
      }
      return writeHead(...args);
    };
    res.writeHead = wrapped as ServerResponse['writeHead'];
  }
}
