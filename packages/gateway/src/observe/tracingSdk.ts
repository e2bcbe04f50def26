import { DiagLogLevel, context, diag, propagation, trace } from '@opentelemetry/api';
import type { TelemetryConfig } from '../config/index.js';
import { redactUrl } from '../wire/redactUrl.js';
import type { GatewayLogger } from './logger.js';
import { setTracingActive } from './tracing.js';

/** How traces are exported, once the `telemetry` block and the OTEL_* variables are read. */
export interface TracingSettings {
  /** The OTLP/HTTP traces URL; absent: the exporter reads OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT. */
  readonly url?: string;
  /** `service.name` of every span. */
  readonly serviceName: string;
}

/** Tracing started by {@link startTracing}. */
export interface TracingHandle {
  /** Where spans go, as logged (credentials redacted). */
  readonly endpoint: string;
  /** Exports what is buffered, then stops tracing (the last handle of the process does). */
  close(): Promise<void>;
}

/** The default `service.name` of toolpin's spans. */
const DEFAULT_SERVICE_NAME = 'toolpin';

/**
 * Whether to trace, and how: the `telemetry` block wins key by key over the standard variables
 * (OTEL_TRACES_EXPORTER, OTEL_SERVICE_NAME); OTEL_SDK_DISABLED=true turns everything off.
 * Undefined: off (the default: no exporter named).
 */
export function tracingSettings(
  block: TelemetryConfig | undefined,
  env: Readonly<Record<string, string | undefined>>,
): TracingSettings | undefined {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return undefined;
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '').split(',').map((name) => name.trim().toLowerCase());
  const on = block?.traces === undefined ? exporters.includes('otlp') : block.traces === 'otlp';
  if (!on) return undefined;
  const serviceName = block?.serviceName ?? (env.OTEL_SERVICE_NAME?.trim() || DEFAULT_SERVICE_NAME);
  return block?.endpoint === undefined ? { serviceName } : { url: block.endpoint, serviceName };
}

/** The OTLP/HTTP default the exporter sends traces to when nothing names another endpoint. */
const OTLP_DEFAULT_TRACES_URL = 'http://localhost:4318/v1/traces';

/**
 * Where the exporter sends traces, as it decides (the OTLP exporter specification): the
 * `telemetry.endpoint` of the gateway file, else OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as it is, else
 * OTEL_EXPORTER_OTLP_ENDPOINT with `/v1/traces` appended, else the OTLP default. Logged at start.
 */
export function tracesEndpoint(
  url: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
): string {
  if (url !== undefined) return url;
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  if (traces) return traces;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  if (base) return `${base.replace(/\/+$/, '')}/v1/traces`;
  return OTLP_DEFAULT_TRACES_URL;
}

/**
 * The exporter's failure as one line: OpenTelemetry's error handler hands its diag logger the whole
 * error JSON-encoded (`{"stack":…,"message":…}`); the log keeps its message and code, never the stack.
 */
export function exportFailureMessage(message: unknown): string {
  const text = typeof message === 'string' ? message : String(message);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return text.split('\n')[0] ?? text;
  }
  if (typeof parsed !== 'object' || parsed === null) return text;
  const { message: inner, code } = parsed as { message?: unknown; code?: unknown };
  if (typeof inner !== 'string') return text.split('\n')[0] ?? text;
  return typeof code === 'string' && !inner.includes(code) ? `${inner} (${code})` : inner;
}

interface RunningTracing {
  readonly provider: { shutdown(): Promise<void> };
  readonly endpoint: string;
  holders: number;
}

/** The process's one tracer provider, shared by the gateways it runs (a promise while it loads). */
let running: Promise<RunningTracing> | undefined;

/** Loads the SDK and registers its provider, exporter and propagator globally. */
async function openProvider(settings: TracingSettings, logger: GatewayLogger): Promise<RunningTracing> {
  const [{ NodeTracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }, resources] = await Promise.all([
    import('@opentelemetry/sdk-trace-node'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
  ]);
  const fail = (message: unknown): void =>
    logger.warn(
      { event: 'telemetry.export_failed', err: exportFailureMessage(message) },
      'OpenTelemetry: a trace export failed',
    );
  diag.setLogger(
    { error: fail, warn: fail, info: () => undefined, debug: () => undefined, verbose: () => undefined },
    DiagLogLevel.WARN,
  );
  const exporter = new OTLPTraceExporter(settings.url === undefined ? {} : { url: settings.url });
  const resource = resources
    .defaultResource()
    .merge(resources.detectResources({ detectors: [resources.envDetector] }))
    .merge(resources.resourceFromAttributes({ 'service.name': settings.serviceName }));
  const provider = new NodeTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(exporter)] });
  provider.register();
  setTracingActive(true);
  const endpoint = redactUrl(tracesEndpoint(settings.url, process.env));
  return { provider, endpoint, holders: 0 };
}

/**
 * Starts OpenTelemetry tracing for this process: loads the SDK (only now: a gateway that does not
 * trace never loads it), exports spans over OTLP/HTTP (JSON) in batches, registers the provider,
 * the AsyncLocalStorage context and the W3C trace-context propagator globally, and turns on the
 * hooks of observe/tracing.ts. The exporter's own errors (a collector down) are logged as
 * `telemetry.export_failed` warnings. A second call while running shares the same provider.
 */
export async function startTracing(settings: TracingSettings, logger: GatewayLogger): Promise<TracingHandle> {
  const opening = (running ??= openProvider(settings, logger));
  let current: RunningTracing;
  try {
    current = await opening;
  } catch (error) {
    if (running === opening) running = undefined;
    throw error;
  }
  current.holders += 1;
  let closed = false;
  return {
    endpoint: current.endpoint,
    close: async () => {
      if (closed) return;
      closed = true;
      current.holders -= 1;
      if (current.holders > 0 || running !== opening) return;
      running = undefined;
      setTracingActive(false);
      await current.provider.shutdown().catch(() => undefined);
      trace.disable();
      context.disable();
      propagation.disable();
      diag.disable();
    },
  };
}
