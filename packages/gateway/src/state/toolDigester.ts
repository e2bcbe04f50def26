import { LRUCache } from 'lru-cache';
import { DigestError, digestTool, encodeToolKey } from '@toolpin/digest';
import { extraMembersOf } from '../explain/extraMembers.js';
import type { ToolObservation } from '../policy/toolObservation.js';
import type { ToolObserver } from '../policy/toolObserver.js';
import type { SurfaceSpec } from '../policy/pinSurface.js';

/** Options of {@link ToolDigester}. */
export interface ToolDigesterOptions {
  /**
   * Upper bound on the cache, in characters of serialized definitions.
   * @default 32 MiB
   */
  maxChars?: number;
}

/**
 * Digests tool definitions with a cache keyed by each definition's JSON text. RFC 8785 plus
 * SHA-256 of a 500-tool catalog costs tens of milliseconds; JSON.stringify of the parsed value
 * costs a fraction of that, and equal text always means an equal digest, so repeated listings
 * of an unchanged catalog cost one stringify and one map lookup per tool. Identical definitions
 * share one observation object across sessions, which keeps per-session state small.
 */
export class ToolDigester implements ToolObserver {
  readonly #cache: LRUCache<string, ToolObservation>;

  constructor(options: ToolDigesterOptions = {}) {
    this.#cache = new LRUCache<string, ToolObservation>({
      maxSize: options.maxChars ?? 32 * 1024 * 1024,
      sizeCalculation: (_value, key) => key.length || 1,
    });
  }

  /**
   * The observation of one definition under one profile label: a tool, or with `spec` an item of
   * another listed surface (named by its `spec.nameMember`, digested by its own profile).
   */
  observe(tool: unknown, profile: string, spec?: SurfaceSpec): ToolObservation {
    const encodeKey = spec?.encodeKey ?? encodeToolKey;
    const nameMember = spec?.nameMember ?? 'name';
    if (typeof tool !== 'object' || tool === null || Array.isArray(tool)) {
      const noun = spec?.item ?? 'tool';
      return { name: undefined, key: encodeKey(undefined), problem: `${noun} definition is not an object` };
    }
    let text: string;
    try {
      text = JSON.stringify(tool);
    } catch (error) {
      // Nested beyond the stack: no digest (the digest itself stops at MAX_CANONICAL_DEPTH).
      if (!(error instanceof RangeError)) throw error;
      const name = (tool as Record<string, unknown>)[nameMember];
      return {
        name: typeof name === 'string' ? name : undefined,
        key: encodeKey(name),
        problem: 'the definition is nested too deeply to digest',
      };
    }
    const cacheKey = spec === undefined ? `${profile}\n${text}` : `${spec.surface}\n${profile}\n${text}`;
    const cached = this.#cache.get(cacheKey);
    if (cached !== undefined) return cached;
    const observation =
      spec === undefined
        ? digestObservation(tool as Record<string, unknown>, profile)
        : itemObservation(tool as Record<string, unknown>, profile, spec);
    this.#cache.set(cacheKey, observation);
    return observation;
  }
}

function digestObservation(tool: Record<string, unknown>, profile: string): ToolObservation {
  const name = typeof tool.name === 'string' ? tool.name : undefined;
  const key = encodeToolKey(tool.name);
  try {
    const digest = digestTool(tool, { profile });
    // Kept by reference, not canonicalized: most pins record no such member, and the policy
    // canonicalizes a member only when the pin records it (policy/pinnedMembers.ts).
    const extras = extraMembersOf(tool);
    return Object.freeze(
      extras === undefined ? { name, key, digest } : { name, key, digest, extras: Object.freeze(extras) },
    );
  } catch (error) {
    if (!(error instanceof DigestError)) throw error;
    return Object.freeze({ name, key, problem: error.message });
  }
}

function itemObservation(item: Record<string, unknown>, profile: string, spec: SurfaceSpec): ToolObservation {
  const value = item[spec.nameMember];
  const name = typeof value === 'string' ? value : undefined;
  const key = spec.encodeKey(value);
  try {
    return Object.freeze({ name, key, digest: spec.digest(item, profile) });
  } catch (error) {
    if (!(error instanceof DigestError)) throw error;
    return Object.freeze({ name, key, problem: error.message });
  }
}
