import type { ListedSurface } from '../policy/pinSurface.js';

/**
 * What the gateway expects of the answer to one request it forwarded: a listing page of a surface
 * (which page it asked for), the server's instructions (initialize, server/discover), a tools/call
 * result (checked against the tool's pinned outputSchema when `checked`), or any other result.
 */
export type Expectation =
  | { readonly kind: 'list'; readonly surface: ListedSurface; readonly cursor: string | undefined }
  /** `method`: initialize or server/discover (their result also states the server's identity). */
  | { readonly kind: 'instructions'; readonly method: string }
  | { readonly kind: 'call'; readonly tool: string; readonly checked: boolean }
  | { readonly kind: 'other' };

/** An {@link Expectation} of any result the checkpoint has nothing particular to judge in. */
export const ANY_RESULT: Expectation = Object.freeze({ kind: 'other' });

/** Requests awaiting their answer in one book; past this the oldest is forgotten (a client that never reads). */
export const MAX_AWAITED = 1024;

/**
 * The requests of one scope that await their answer, by id key: one MCP session (its answers are
 * matched by id on any of its streams), or one sessionless HTTP exchange (a 2026-07-28 request is
 * answered on its own response, whatever ids other callers use). Each request is answered at most
 * once: {@link take} hands its expectation out once; a second message under the same id, or one
 * under an id nothing awaits, finds nothing and is not an answer (docs/boundary.md#answers-upstream--client).
 */
export class AnswerBook {
  // Made by a request, dropped when the last awaited answer came: an idle session (10,000 of them)
  // holds no empty map.
  #map: Map<string, Expectation> | undefined;

  get #awaited(): Map<string, Expectation> {
    return (this.#map ??= new Map());
  }

  /**
   * Remembers a request forwarded under this id. A client that reuses an id whose answer never came
   * (a request it cut off) means its new request: the earlier expectation is replaced, never judged
   * in its place. Returns the id key forgotten to stay within the bound, if any.
   */
  expect(idKey: string, expectation: Expectation): string | undefined {
    this.#awaited.delete(idKey);
    let forgotten: string | undefined;
    if (this.#awaited.size >= MAX_AWAITED) {
      forgotten = this.#awaited.keys().next().value;
      if (forgotten !== undefined) this.#awaited.delete(forgotten);
    }
    this.#awaited.set(idKey, expectation);
    return forgotten;
  }

  /** Takes the expectation of the request with this id: it is answered now, and never again. */
  take(idKey: string): Expectation | undefined {
    const map = this.#map;
    const expectation = map?.get(idKey);
    if (expectation === undefined || map === undefined) return undefined;
    map.delete(idKey);
    if (map.size === 0) this.#map = undefined;
    return expectation;
  }

  /** The expectation of the request with this id, left awaiting. */
  peek(idKey: string): Expectation | undefined {
    return this.#map?.get(idKey);
  }

  /** True while a request with this id awaits its answer. */
  awaits(idKey: string): boolean {
    return this.#map?.has(idKey) ?? false;
  }

  /** How many requests await their answer. */
  get size(): number {
    return this.#map?.size ?? 0;
  }
}
