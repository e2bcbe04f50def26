import { McpError } from '@modelcontextprotocol/sdk/types.js';
import {
  INTERNAL_ERROR,
  ProtocolError,
  Server,
  type JSONRPCRequest,
  type ServerCapabilities,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { GatewayError } from '../errors.js';
import { isScreened, screenCall } from '../checkpoint/screenCall.js';
import type { ServerCheckpoint } from '../checkpoint/serverCheckpoint.js';
import { statedArtifactRefusal } from '../checkpoint/statedArtifactCheck.js';
import { endRequest, traceRequest, withTrace } from '../observe/tracing.js';
import { AnswerBook } from '../state/answerBook.js';
import { collectToolPages } from '../state/collectToolPages.js';
import type { SharedUpstream } from '../transports/sharedUpstream.js';
import { ErrorCodes } from '../wire/errorCodes.js';
import { isResponse, type JsonRpcResponse } from '../wire/jsonRpc.js';
import { DEFAULT_MAX_PAGES } from '../defaults.js';

/** What one forwarding server instance acts for. */
export interface ForwardingServerOptions {
  readonly checkpoint: ServerCheckpoint;
  /** Whose catalog the requests act on (the credential). */
  readonly sessionKey: string;
  readonly upstream: SharedUpstream;
  /** Bound on each tools/list page the gateway asks for itself (fetch on miss). */
  readonly timeoutMs: number;
  /** Bound on the pages of a listing the gateway asks for itself (fetch on miss). @default 1000 */
  readonly maxPages?: number;
}

type Params = Record<string, unknown> | undefined;

/**
 * What forwarding one request needs of the client's request: the signal that cancels it upstream,
 * and how to relay its progress (an SDK server handler's context is one).
 */
export interface ForwardContext {
  readonly mcpReq: Pick<ServerContext['mcpReq'], 'signal' | 'notify'>;
}

/** The upstream's JSON-RPC message without the v1 SDK's "MCP error <code>: " prefix. */
function upstreamMessage(error: McpError): string {
  const prefix = `MCP error ${String(error.code)}: `;
  return error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message;
}

/** The JSON-RPC error a client gets for a failure of a forwarded request. */
function asProtocolError(error: unknown, server: string): unknown {
  if (error instanceof McpError) return new ProtocolError(error.code, upstreamMessage(error), error.data);
  if (error instanceof GatewayError && error.code === 'GW_UPSTREAM_INVALID')
    return new ProtocolError(INTERNAL_ERROR, `toolpin: ${error.message}`);
  // A timed-out request says so as the HTTP proxy does: -32041, data.reason `timeout`.
  if (error instanceof GatewayError && error.data.reason === 'timeout')
    return new ProtocolError(ErrorCodes.UPSTREAM_UNAVAILABLE, `toolpin: ${error.message}`, {
      reason: 'timeout',
      server,
    });
  if (error instanceof GatewayError)
    return new ProtocolError(ErrorCodes.UPSTREAM_UNAVAILABLE, `toolpin: ${error.message}`);
  return error;
}

/**
 * The upstream's result without the 2026-07-28 members the SDK fills for the gateway: a 2025-era
 * upstream has no say in how long or how widely a client may cache (the gateway answers `ttlMs: 0`,
 * `private`), nor in the result's type.
 */
function withoutRevisionFields(result: Record<string, unknown>): Record<string, unknown> {
  if (!('ttlMs' in result || 'cacheScope' in result || 'resultType' in result)) return result;
  const { ttlMs: _ttl, cacheScope: _scope, resultType: _type, ...rest } = result;
  return rest;
}

/** The upstream's capabilities, less what the gateway does not carry to a stateless client. */
function forwardedCapabilities(capabilities: Record<string, unknown> | undefined): ServerCapabilities {
  const { resources, ...rest } = capabilities ?? {};
  if (typeof resources !== 'object' || resources === null) return rest as ServerCapabilities;
  // Resource subscriptions are not turned into upstream resources/subscribe calls: not offered.
  const { subscribe: _subscribe, ...kept } = resources as Record<string, unknown>;
  return { ...rest, resources: kept } as ServerCapabilities;
}

/** The `instructions` option of the server, when there are instructions to deliver. */
function withInstructions(instructions: string | undefined): { instructions?: string } {
  return instructions === undefined ? {} : { instructions };
}

/**
 * The refusal of every request on an upstream whose stated identity (its initialize `serverInfo`)
 * the pin in force refuses (judged once per pin: ServerCheckpoint.refusesOwnUpstream), or undefined.
 */
function statedRefusal(
  checkpoint: ServerCheckpoint,
  sessionKey: string,
  upstream: SharedUpstream,
): ProtocolError | undefined {
  const refused = checkpoint.refusesOwnUpstream(sessionKey, upstream.serverInfo);
  if (refused === undefined) return undefined;
  const { message, data } = statedArtifactRefusal(refused, checkpoint.config);
  return new ProtocolError(ErrorCodes.PIN_POLICY_BLOCKED, message, data);
}

/** A checkpoint's refusal (a JSON-RPC error answer) as the error the SDK server answers with. */
export function refusalError(refusal: JsonRpcResponse): ProtocolError {
  const error = refusal.error ?? { code: ErrorCodes.PIN_POLICY_BLOCKED, message: 'toolpin: refused' };
  return new ProtocolError(error.code, error.message, error.data);
}

/**
 * Builds the SDK v2 server that answers one 2026-07-28 request for a bridged upstream. It speaks
 * for the upstream (its name, capabilities and instructions) and forwards every request to the
 * shared upstream connection, with the server's checkpoint in between: a tools/call is decided before
 * it is sent, and a tools/list result is replaced by the value the checkpoint verified. The SDK turns
 * the 2025-era results into 2026-07-28 ones (resultType, cache fields, server identity).
 */
export function createForwardingServer(options: ForwardingServerOptions): Server {
  const { checkpoint, sessionKey, upstream } = options;
  const server = new Server(upstream.serverInfo ?? { name: checkpoint.config.name, version: '0.0.0' }, {
    // The 2025 and 2026 capability shapes agree on what a forwarding server can declare.
    capabilities: forwardedCapabilities(upstream.capabilities),
    // The upstream's instructions only when the pin lets them through (unchanged, or not pinned).
    ...withInstructions(checkpoint.deliveredInstructions(sessionKey, upstream.instructions)),
  });
  const forwarder = new Forwarder(options);
  server.fallbackRequestHandler = (request, ctx) => forwarder.forward(request, ctx);
  return server;
}

/**
 * Forwards requests to one shared upstream through the server's checkpoint: the forwarding server
 * of a bridged route, and each member of the aggregate (ingress/aggregateServer.ts).
 */
export class Forwarder {
  readonly #options: ForwardingServerOptions;

  constructor(options: ForwardingServerOptions) {
    this.#options = options;
  }

  /** One request, in its span when tracing is on (ended with the answer, or the error's code). */
  async forward(request: JSONRPCRequest, ctx: ForwardContext): Promise<Record<string, unknown>> {
    const traced = traceRequest('stateless', this.#options.checkpoint.config.name, request);
    if (traced === undefined) return this.#forward(request, ctx);
    try {
      const result = await withTrace(traced, () => this.#forward(request, ctx));
      endRequest(traced);
      return result;
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      endRequest(traced, { error: { code: typeof code === 'number' ? code : ErrorCodes.INTERNAL_ERROR } });
      throw error;
    }
  }

  /**
   * Screens, sends, and answers with the result the checkpoint let through. Each request's answer is
   * awaited in a book of its own: the credential's other callers may use the same ids at the same
   * time, and this answer is the one that comes back for this request, judged as what it asked for.
   */
  async #forward(request: JSONRPCRequest, ctx: ForwardContext): Promise<Record<string, unknown>> {
    const { checkpoint, sessionKey } = this.#options;
    const params = request.params as Params;
    checkpoint.alerts.telemetry.onRequest(checkpoint.config.name, request.method);
    const stated = statedRefusal(checkpoint, sessionKey, this.#options.upstream);
    if (stated !== undefined) throw stated;
    const book = new AnswerBook();
    if (isScreened(checkpoint, request.method, params)) await this.#screen(request, params, book);
    else checkpoint.expectAnswer(sessionKey, request.id, request.method, params, book);
    const forwarded = withoutRevisionFields(await this.#send(request, params, ctx));
    return this.#judged(request.id, forwarded, book);
  }

  /** Decides a screened request (fetching the listing on a miss); throws its refusal. */
  async #screen(request: JSONRPCRequest, params: Params, book: AnswerBook): Promise<void> {
    const { checkpoint, sessionKey, upstream, timeoutMs } = this.#options;
    const maxPages = this.#options.maxPages ?? DEFAULT_MAX_PAGES;
    const refusal = await screenCall(
      checkpoint,
      sessionKey,
      request.id,
      params,
      ({ method, surface }) =>
        collectToolPages(
          (cursor) => upstream.request(method, cursor === undefined ? {} : { cursor }, { timeoutMs }),
          { maxPages, timeoutMs, surface },
        ),
      request.method,
      book,
    );
    if (refusal !== undefined) throw refusalError(refusal);
  }

  /** Sends the request upstream, relaying its progress; a failure is the client's JSON-RPC error. */
  #send(request: JSONRPCRequest, params: Params, ctx: ForwardContext): Promise<Record<string, unknown>> {
    const { checkpoint, upstream } = this.#options;
    const token = (params?._meta as { progressToken?: unknown } | undefined)?.progressToken;
    return upstream
      .request(request.method, params, {
        signal: ctx.mcpReq.signal,
        ...(typeof token === 'string' || typeof token === 'number'
          ? {
              onprogress: (progress) =>
                void ctx.mcpReq
                  .notify({ method: 'notifications/progress', params: { ...progress, progressToken: token } })
                  .catch(() => undefined),
            }
          : {}),
      })
      .catch((error: unknown) => {
        throw asProtocolError(error, checkpoint.config.name);
      });
  }

  /**
   * The result as the checkpoint judged it for this request (a listing verified and filtered, a
   * call's result checked against its pinned outputSchema, every pinned surface it carries screened).
   */
  #judged(
    id: JSONRPCRequest['id'],
    result: Record<string, unknown>,
    book: AnswerBook,
  ): Record<string, unknown> {
    const { checkpoint, sessionKey } = this.#options;
    const replaced = checkpoint.inspectUpstreamMessage(sessionKey, { jsonrpc: '2.0', id, result }, book);
    if (!isResponse(replaced))
      throw new ProtocolError(ErrorCodes.PIN_POLICY_BLOCKED, 'toolpin: the answer could not be verified', {
        reason: 'unverifiable',
        server: checkpoint.config.name,
      });
    if (replaced.error !== undefined) throw refusalError(replaced);
    return replaced.result as Record<string, unknown>;
  }
}
