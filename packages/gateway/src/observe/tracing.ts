import type { IncomingHttpHeaders } from 'node:http';
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  context,
  propagation,
  trace,
  type Attributes,
  type Context,
  type Span,
} from '@opentelemetry/api';
import type { CallDecision } from '../policy/decision.js';

// OpenTelemetry traces (docs/telemetry.md), through @opentelemetry/api only: the SDK is loaded by
// observe/tracingSdk.ts when tracing is on. Until then every function here returns at its first
// line, before it builds a name or an attribute, so tracing off costs a boolean test per hook.
// (observe/telemetry.ts is something else: the hooks of metrics and open streams.)

/** The instrumentation scope of toolpin's spans. */
export const TRACER_NAME = '@toolpin/gateway';

/** Longest tool or prompt name put in a span name or attribute (names come from clients). */
const MAX_NAME_CHARS = 256;

let active = false;

/** True while toolpin's tracing runs (observe/tracingSdk.ts started it). */
export function tracingActive(): boolean {
  return active;
}

/** Turns the hooks of this module on or off (observe/tracingSdk.ts, when it starts and stops). */
export function setTracingActive(on: boolean): void {
  active = on;
}

/** The front a traced request came through (`toolpin.front`). */
export type TracedFront = 'streamable-http' | 'stateless' | 'sse' | 'stdio';

/** A client request being traced: its span, and the context in which that span is the active one. */
export interface TracedRequest {
  readonly span: Span;
  readonly context: Context;
}

/** What a traced request is read from: a JSON-RPC request as a front parsed it. */
export interface RequestToTrace {
  readonly method: string;
  readonly id: string | number | null;
  readonly params?: unknown;
}

/** The tool or prompt a request names, bounded; undefined for other requests. */
function targetOf(method: string, params: unknown): string | undefined {
  if (method !== 'tools/call' && method !== 'prompts/get') return undefined;
  const name =
    typeof params === 'object' && params !== null ? (params as { name?: unknown }).name : undefined;
  return typeof name === 'string' ? name.slice(0, MAX_NAME_CHARS) : undefined;
}

/**
 * Starts the span of one client request (kind SERVER, named `{method} {tool or prompt}` as the MCP
 * semantic conventions name it), child of `parent` (by default the active context: the client's
 * `traceparent`, see {@link continueClientTrace}). Undefined when tracing is off. Never records
 * arguments, credentials or session ids.
 */
export function traceRequest(
  front: TracedFront,
  server: string,
  request: RequestToTrace,
  parent: Context = context.active(),
): TracedRequest | undefined {
  if (!active) return undefined;
  const { method } = request;
  const target = targetOf(method, request.params);
  const attributes: Attributes = {
    'mcp.method.name': method,
    'jsonrpc.request.id': String(request.id),
    'network.transport': front === 'stdio' ? 'pipe' : 'tcp',
    'toolpin.server': server,
    'toolpin.front': front,
  };
  if (target !== undefined && method === 'tools/call') {
    attributes['gen_ai.tool.name'] = target;
    attributes['gen_ai.operation.name'] = 'execute_tool';
  } else if (target !== undefined) attributes['gen_ai.prompt.name'] = target;
  const name = target === undefined ? method : `${method} ${target}`;
  const span = trace.getTracer(TRACER_NAME).startSpan(name, { kind: SpanKind.SERVER, attributes }, parent);
  return { span, context: trace.setSpan(parent, span) };
}

/**
 * Ends a request's span; `answer` (the JSON-RPC message the client got, when known) marks it an
 * error when it is one (`error.type` and `rpc.response.status_code`: the JSON-RPC code).
 */
export function endRequest(traced: TracedRequest | undefined, answer?: unknown): void {
  if (traced === undefined) return;
  const error =
    typeof answer === 'object' && answer !== null ? (answer as { error?: unknown }).error : undefined;
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  if (typeof code === 'number') {
    traced.span.setAttribute('error.type', String(code));
    traced.span.setAttribute('rpc.response.status_code', String(code));
    traced.span.setStatus({ code: SpanStatusCode.ERROR });
  }
  traced.span.end();
}

/** Runs `work` with the request's span active (what the decision and the upstream request see). */
export function withTrace<T>(traced: TracedRequest | undefined, work: () => T): T {
  return traced === undefined ? work() : context.with(traced.context, work);
}

/**
 * The context of a client's HTTP request: its W3C `traceparent` / `tracestate`, if any. Only
 * called while tracing is on (ingress/createGateway.ts installs it then).
 */
export function continueClientTrace(headers: IncomingHttpHeaders): Context {
  return propagation.extract(ROOT_CONTEXT, headers);
}

/**
 * The context a stdio client's request carries in `params._meta` (`traceparent`, `tracestate`,
 * as the MCP semantic conventions propagate it); the active context when there is none.
 */
export function traceContextOfMeta(params: unknown): Context {
  const meta =
    typeof params === 'object' && params !== null ? (params as { _meta?: unknown })._meta : undefined;
  if (!active || typeof meta !== 'object' || meta === null) return context.active();
  return propagation.extract(context.active(), meta);
}

/**
 * Writes `traceparent` (and `tracestate`) of `traced` into headers going upstream, replacing the
 * client's: the upstream's spans become children of the gateway's. Nothing when not traced.
 */
export function injectTrace(traced: TracedRequest | undefined, headers: Record<string, unknown>): void {
  if (traced !== undefined) propagation.inject(traced.context, headers);
}

/**
 * The same from the active context, when a request's span is active there: the requests upstream
 * made below a front (the SDK transports' fetches, the gateway's own listings).
 */
export function injectActiveTrace(headers: Headers | Record<string, unknown>): void {
  if (!active || trace.getSpan(context.active()) === undefined) return;
  if (headers instanceof Headers) propagation.inject(context.active(), headers, HEADERS_SETTER);
  else propagation.inject(context.active(), headers);
}

const HEADERS_SETTER = { set: (carrier: Headers, key: string, value: string) => carrier.set(key, value) };

/** Where a decision was taken: before the request goes upstream, or on the tools/call result. */
export type DecisionStage = 'call' | 'result';

/**
 * Records one decision of the checkpoint as a span (`toolpin.decision`, kind INTERNAL), child of the
 * request's: `toolpin.server`, `toolpin.tool` or `toolpin.prompt`, `toolpin.decision` (allow, flag,
 * deny), and for a flag or a denial `toolpin.reason` and, when known, `toolpin.severity`.
 */
export function traceDecision(
  server: string,
  surface: string,
  name: string,
  stage: DecisionStage,
  decision: CallDecision,
): void {
  if (!active) return;
  const data = decision.kind === 'deny' ? decision.data : decision.flagged;
  const attributes: Attributes = {
    'toolpin.server': server,
    [surface === 'prompts' ? 'toolpin.prompt' : 'toolpin.tool']: name.slice(0, MAX_NAME_CHARS),
    'toolpin.stage': stage,
    'toolpin.decision': decision.kind === 'deny' ? 'deny' : data === undefined ? 'allow' : 'flag',
  };
  if (data !== undefined) attributes['toolpin.reason'] = data.reason;
  if (data?.severity !== undefined) attributes['toolpin.severity'] = data.severity;
  trace
    .getTracer(TRACER_NAME)
    .startSpan('toolpin.decision', { kind: SpanKind.INTERNAL, attributes }, context.active())
    .end();
}
