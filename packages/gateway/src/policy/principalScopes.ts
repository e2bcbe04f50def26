import { createHash, timingSafeEqual } from 'node:crypto';
import picomatch from 'picomatch';
import type { PrincipalConfig, ScopeItems } from '../config/index.js';
import type { ListedSurface } from '../wire/listedSurfaces.js';

/** What a request shows of who it speaks for; each member present only where its front can tell. */
export interface PrincipalEvidence {
  /** A token a resource-server route verified. */
  readonly token?: {
    readonly issuer: string;
    readonly subject: string;
    readonly clientId?: string;
    readonly scopes: readonly string[];
  };
  /** The `X-Toolpin-Key` the request carried (compared by its SHA-256, in constant time). */
  readonly apiKey?: string;
  /** The stdio front's local user. */
  readonly localUser?: string;
}

/** True when `name` is one of a surface's items in scope. */
export type ItemTest = (name: string) => boolean;

const NOTHING: ItemTest = () => false;

/** A name or glob (`*` stops at `/`, `**` crosses it), matched as written: no `./` stripped, case counts. */
function matcherOf(patterns: ScopeItems): ItemTest | undefined {
  if (patterns === '*') return undefined;
  if (patterns.length === 0) return NOTHING;
  return picomatch([...patterns], { dot: true, format: (name) => name });
}

interface ServerScope {
  readonly server: ItemTest;
  readonly surfaces: Readonly<Record<ListedSurface, ItemTest | undefined>>;
}

/** One principal's servers, compiled once per `principals` block. */
class CompiledPrincipal {
  readonly #servers: readonly ServerScope[];

  constructor(readonly config: PrincipalConfig) {
    this.#servers = Object.entries(config.servers).map(([server, items]) => ({
      server: picomatch(server, { dot: true, format: (name) => name }),
      surfaces: {
        tools: matcherOf(items.tools),
        prompts: matcherOf(items.prompts),
        resourceTemplates: matcherOf(items.resourceTemplates),
      },
    }));
  }

  /** The items of a server's surface in scope: undefined for every one (an entry says `'*'`). */
  itemTest(server: string, surface: ListedSurface): ItemTest | undefined {
    const tests: ItemTest[] = [];
    for (const scope of this.#servers) {
      if (!scope.server(server)) continue;
      const test = scope.surfaces[surface];
      if (test === undefined) return undefined;
      tests.push(test);
    }
    if (tests.length === 0) return NOTHING;
    return tests.length === 1 ? tests[0] : (name) => tests.some((test) => test(name));
  }

  /** True when an entry of `servers` names this server (its instructions are then the principal's to read). */
  seesServer(server: string): boolean {
    return this.#servers.some((scope) => scope.server(server));
  }

  /** True when the request's evidence is this principal's way of being recognized. */
  recognizes(evidence: PrincipalEvidence, keyHash: Buffer | undefined): boolean {
    const { oauth, local, apiKeySha256 } = this.config;
    if (oauth !== undefined) return evidence.token !== undefined && tokenMatches(oauth, evidence.token);
    if (local !== undefined)
      return evidence.localUser !== undefined && (local === true || local === evidence.localUser);
    if (apiKeySha256 === undefined || keyHash === undefined) return false;
    return timingSafeEqual(Buffer.from(apiKeySha256, 'hex'), keyHash);
  }
}

function tokenMatches(
  match: NonNullable<PrincipalConfig['oauth']>,
  token: NonNullable<PrincipalEvidence['token']>,
): boolean {
  return (
    (match.issuer === undefined || match.issuer === token.issuer) &&
    (match.sub === undefined || match.sub === token.subject) &&
    (match.clientId === undefined || match.clientId === token.clientId) &&
    (match.scopes ?? []).every((scope) => token.scopes.includes(scope))
  );
}

/**
 * The gateway file's `principals` block, decided on (docs/scopes.md): who a request's evidence
 * speaks for, and which items of which server that principal may see and use. Pure: the block is
 * compiled once (picomatch) and swapped whole on reload.
 */
export class PrincipalScopes {
  readonly #principals: readonly CompiledPrincipal[];
  readonly #byName: ReadonlyMap<string, CompiledPrincipal>;

  constructor(readonly principals: readonly PrincipalConfig[]) {
    this.#principals = principals.map((principal) => new CompiledPrincipal(principal));
    this.#byName = new Map(this.#principals.map((principal) => [principal.config.name, principal]));
  }

  /**
   * The first principal (in file order) the evidence is the way of; undefined when none is. An
   * API key is compared with every principal's, whatever matched before (no early exit).
   */
  resolve(evidence: PrincipalEvidence): string | undefined {
    const keyHash =
      evidence.apiKey === undefined ? undefined : createHash('sha256').update(evidence.apiKey).digest();
    let found: string | undefined;
    for (const principal of this.#principals)
      if (principal.recognizes(evidence, keyHash)) found ??= principal.config.name;
    return found;
  }

  /**
   * The items of `server`'s surface that `principal` may see and use: undefined for every one;
   * nothing for a principal the block does not name (or none: a request no principal matched).
   */
  itemTest(principal: string | undefined, server: string, surface: ListedSurface): ItemTest | undefined {
    const compiled = principal === undefined ? undefined : this.#byName.get(principal);
    return compiled === undefined ? NOTHING : compiled.itemTest(server, surface);
  }

  /** True when `principal` may see anything of `server` (none for a principal the block does not name). */
  seesServer(principal: string | undefined, server: string): boolean {
    const compiled = principal === undefined ? undefined : this.#byName.get(principal);
    return compiled?.seesServer(server) ?? false;
  }

  /**
   * Who may see what of `server`, for the review page: each principal with an entry naming it, and
   * per surface `'*'` or the names and globs of its entries (none: an empty list).
   */
  scopesOn(server: string): { principal: string; items: Record<ListedSurface, ScopeItems> }[] {
    const out: { principal: string; items: Record<ListedSurface, ScopeItems> }[] = [];
    for (const { config } of this.#principals) {
      const entries = Object.entries(config.servers).filter(([pattern]) =>
        picomatch(pattern, { dot: true, format: (name) => name })(server),
      );
      if (entries.length === 0) continue;
      const union = (surface: ListedSurface): ScopeItems => {
        const lists = entries.map(([, items]) => items[surface]);
        return lists.includes('*') ? '*' : [...new Set(lists.flatMap((list) => (list === '*' ? [] : list)))];
      };
      out.push({
        principal: config.name,
        items: {
          tools: union('tools'),
          prompts: union('prompts'),
          resourceTemplates: union('resourceTemplates'),
        },
      });
    }
    return out;
  }

  /** True when `principal` is named in the block. */
  has(principal: string): boolean {
    return this.#byName.has(principal);
  }
}
