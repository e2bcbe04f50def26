import { randomUUID } from 'node:crypto';
import { ProtocolError, Server, type JSONRPCRequest } from '@modelcontextprotocol/server';
import {
  namespacedName,
  resolveNamespaced,
  type AggregateMember,
  type AggregateNamespace,
} from '../config/index.js';
import type { GatewayLogger } from '../observe/logger.js';
import { errorSummary } from '../observe/errorSummary.js';
import { SURFACE_LISTINGS, type SurfaceListing } from '../wire/listedSurfaces.js';
import { ErrorCodes } from '../wire/errorCodes.js';
import { isObject } from '../wire/isObject.js';
import { CLIENT_INFO } from '../defaults.js';
import type { AggregateMembers, MemberLink } from './aggregateMembers.js';
import type { ForwardContext } from './forwardingServer.js';

/** What one aggregate server instance serves. */
export interface AggregateScope {
  /** The members and their names now (a reload may change them). */
  readonly namespace: () => AggregateNamespace;
  readonly members: AggregateMembers;
  /** The instructions the aggregate gives (see combinedInstructions). */
  readonly instructions: string | undefined;
  /** Bound on each member's page of a listing: a member that does not answer leaves the page without its items. */
  readonly timeoutMs: number;
  readonly logger: GatewayLogger;
}

type Params = Record<string, unknown> | undefined;

/** The listing each listing method asks its members for. */
const LISTINGS = new Map<string, SurfaceListing>(
  Object.values(SURFACE_LISTINGS).map((listing) => [listing.method, listing]),
);

/**
 * The aggregate's instructions: its own text (the `aggregate.instructions` of the gateway file)
 * first, then, in member order, a section per member whose instructions its pin lets through
 * (`## <prefix>` and their text), all separated by blank lines; undefined when there is none.
 */
export function combinedInstructions(
  own: string | undefined,
  members: readonly { readonly member: AggregateMember; readonly text: string | undefined }[],
): string | undefined {
  const parts = own === undefined || own === '' ? [] : [own];
  for (const { member, text } of members)
    if (text !== undefined && text !== '') parts.push(`## ${member.prefix}\n\n${text}`);
  return parts.length === 0 ? undefined : parts.join('\n\n');
}

/** A cursor of the union: each member's own cursor of its next page, and the listing it pages. */
function encodeCursor(listing: SurfaceListing, next: Record<string, string>): string {
  return Buffer.from(JSON.stringify({ s: listing.surface, m: next }), 'utf8').toString('base64url');
}

/** The member cursors a client's cursor holds; throws -32602 for one this aggregate did not give. */
function decodeCursor(
  cursor: unknown,
  listing: SurfaceListing,
  namespace: AggregateNamespace,
): Map<string, string | undefined> {
  if (cursor === undefined)
    return new Map(namespace.members.map((member) => [member.server, undefined] as const));
  const invalid = new ProtocolError(
    ErrorCodes.INVALID_PARAMS,
    'Invalid params: not a cursor of this listing',
  );
  if (typeof cursor !== 'string') throw invalid;
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid;
  }
  if (!isObject(decoded) || decoded.s !== listing.surface || !isObject(decoded.m)) throw invalid;
  const out = new Map<string, string | undefined>();
  for (const member of namespace.members) {
    const own = decoded.m[member.server];
    if (typeof own === 'string') out.set(member.server, own);
  }
  if (out.size !== Object.keys(decoded.m).length) throw invalid;
  return out;
}

/** The refusal of a request to a member that is down, naming it. */
function memberDown(server: string): ProtocolError {
  return new ProtocolError(ErrorCodes.UPSTREAM_UNAVAILABLE, `toolpin: the server ${server} is unreachable`, {
    reason: 'unreachable',
    server,
  });
}

/** A member's failure as the client gets it: an upstream failure always names the member. */
function namingMember(error: unknown, server: string): unknown {
  if (!(error instanceof ProtocolError)) return error;
  const { code } = error;
  if (code !== ErrorCodes.UPSTREAM_UNAVAILABLE && code !== ErrorCodes.UPSTREAM_INVALID) return error;
  const data = isObject(error.data) ? error.data : {};
  if (data.server === server) return error;
  return new ProtocolError(code, error.message, { reason: 'unreachable', ...data, server });
}

/**
 * Builds the SDK v2 server one aggregate client speaks to: its tools, prompts and resource
 * templates are the verified items of every member, named `<prefix><separator><name>`, and each
 * request naming an item goes to its member through that member's checkpoint (ingress/
 * forwardingServer.ts's Forwarder: screened, sent, its answer judged in a book of its own). The
 * aggregate decides only which member a name belongs to.
 */
export function createAggregateServer(scope: AggregateScope): Server {
  const server = new Server(
    { name: 'toolpin-aggregate', version: CLIENT_INFO.version },
    {
      capabilities: {
        tools: { listChanged: true },
        prompts: { listChanged: true },
        resources: { listChanged: true },
        completions: {},
      },
      ...(scope.instructions === undefined ? {} : { instructions: scope.instructions }),
    },
  );
  const router = new AggregateRouter(scope);
  server.fallbackRequestHandler = (request, ctx) => router.route(request, ctx);
  return server;
}

/** Routes the requests of one aggregate server to its members. */
class AggregateRouter {
  readonly #scope: AggregateScope;

  constructor(scope: AggregateScope) {
    this.#scope = scope;
  }

  route(request: JSONRPCRequest, ctx: ForwardContext): Promise<Record<string, unknown>> {
    const params = request.params as Params;
    const listing = LISTINGS.get(request.method);
    if (listing !== undefined) return this.#list(listing, params?.cursor, ctx);
    switch (request.method) {
      case 'tools/call':
      case 'prompts/get':
        return this.#toMember(request, params?.name, (name) => ({ ...params, name }), ctx);
      case 'completion/complete':
        return this.#complete(request, params, ctx);
      case 'resources/list':
        // Static resources are not a pinned surface: the aggregate carries none (docs/aggregate.md).
        return Promise.resolve({ resources: [] });
      default:
        return Promise.reject(
          new ProtocolError(ErrorCodes.METHOD_NOT_FOUND, `Method not found: ${request.method}`),
        );
    }
  }

  /** A completion of a prompt's argument goes to the prompt's member; a resource template's is not carried. */
  #complete(request: JSONRPCRequest, params: Params, ctx: ForwardContext): Promise<Record<string, unknown>> {
    const ref = params?.ref;
    if (!isObject(ref) || ref.type !== 'ref/prompt')
      return Promise.reject(
        new ProtocolError(
          ErrorCodes.INVALID_PARAMS,
          'Invalid params: the aggregate completes the arguments of prompts (ref/prompt) only',
        ),
      );
    return this.#toMember(request, ref.name, (name) => ({ ...params, ref: { ...ref, name } }), ctx);
  }

  /** Sends a request naming one item to that item's member, with the item's own name. */
  async #toMember(
    request: JSONRPCRequest,
    name: unknown,
    rename: (own: string) => Record<string, unknown>,
    ctx: ForwardContext,
  ): Promise<Record<string, unknown>> {
    const resolved = typeof name === 'string' ? resolveNamespaced(this.#scope.namespace(), name) : undefined;
    if (resolved === undefined)
      throw new ProtocolError(
        ErrorCodes.INVALID_PARAMS,
        `Invalid params: ${JSON.stringify(String(name)).slice(0, 80)} names no item of a member server`,
      );
    const { server } = resolved.member;
    const own = { ...request, params: rename(resolved.name) };
    const link = await this.#scope.members.link(server);
    if (link === undefined)
      throw (await this.#scope.members.refusalOutOfScope(server, own)) ?? memberDown(server);
    try {
      return await link.forwarder.forward(own, ctx);
    } catch (error) {
      throw namingMember(error, server);
    }
  }

  /**
   * One page of the union: the next page of every member that has one (all of them for the first
   * page), asked for at once, each through its member's checkpoint; their items in member order,
   * renamed; the cursor holds each member's own cursor of its next page.
   */
  async #list(
    listing: SurfaceListing,
    cursor: unknown,
    ctx: ForwardContext,
  ): Promise<Record<string, unknown>> {
    const namespace = this.#scope.namespace();
    const wanted = decodeCursor(cursor, listing, namespace);
    const pages = await Promise.all(
      namespace.members
        .filter((member) => wanted.has(member.server))
        .map(async (member) => ({
          member,
          page: await this.#memberPage(member.server, listing, wanted.get(member.server), ctx),
        })),
    );
    const items: unknown[] = [];
    const next: Record<string, string> = {};
    for (const { member, page } of pages) {
      if (page === undefined) continue;
      const listed = page[listing.member];
      for (const item of Array.isArray(listed) ? listed : [])
        if (isObject(item) && typeof item.name === 'string')
          items.push({ ...item, name: namespacedName(namespace, member, item.name) });
      if (typeof page.nextCursor === 'string') next[member.server] = page.nextCursor;
    }
    const more = Object.keys(next).length > 0;
    return { [listing.member]: items, ...(more ? { nextCursor: encodeCursor(listing, next) } : {}) };
  }

  /** One member's page as its checkpoint verified it, or undefined when the member is down or did not answer in time. */
  async #memberPage(
    server: string,
    listing: SurfaceListing,
    cursor: string | undefined,
    ctx: ForwardContext,
  ): Promise<Record<string, unknown> | undefined> {
    const link = await this.#scope.members.link(server);
    if (link === undefined) return undefined;
    const signal = AbortSignal.any([ctx.mcpReq.signal, AbortSignal.timeout(this.#scope.timeoutMs)]);
    const request: JSONRPCRequest = {
      jsonrpc: '2.0',
      id: `toolpin-${randomUUID()}`,
      method: listing.method,
      params: cursor === undefined ? {} : { cursor },
    };
    try {
      return await link.forwarder.forward(request, { mcpReq: { ...ctx.mcpReq, signal } });
    } catch (error) {
      this.#unlisted(link, listing, error);
      return undefined;
    }
  }

  #unlisted(link: MemberLink, listing: SurfaceListing, error: unknown): void {
    this.#scope.logger.warn(
      {
        event: 'aggregate.member_unlisted',
        server: link.server,
        listing: listing.method,
        err: errorSummary(error),
      },
      "a member's listing failed: its items leave this page",
    );
  }
}
