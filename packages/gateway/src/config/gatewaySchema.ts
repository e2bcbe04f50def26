import { z } from 'zod';
import { gatewayAlertsSchema } from './alertsSchema.js';
import { principalsSchema } from './principalsSchema.js';
import { DEFAULT_MAX_BODY_BYTES, DEFAULT_STREAM_IDLE_MS, DEFAULT_TIMEOUT_MS } from '../defaults.js';

const hostSchema = z.string().min(1);
// Port 0 asks the OS for a free port (tests).
const portSchema = z.int().min(0).max(65535);
const positiveInt = z.int().min(1);

// An origin as a browser sends it in `Origin`: scheme://host[:port], nothing after; or `*`.
const originSchema = z
  .string()
  .refine(
    (value) => value === '*' || (URL.canParse(value) && new URL(value).origin === value),
    'an origin such as "https://app.example.com" (scheme, host and port only, no trailing slash), or "*"',
  );

/** The `cors` block: browser clients allowed to call the MCP routes (off when absent). */
export const corsSchema = z
  .strictObject({
    origins: z.array(originSchema).min(1, 'at least one origin'),
    // Credentials (cookies, HTTP authentication) sent by the browser: never with "*".
    credentials: z.boolean().default(false),
    // How long a browser may cache a preflight answer.
    maxAgeSeconds: z.int().min(0).max(86_400).default(600),
  })
  .refine((cors) => !(cors.credentials && cors.origins.includes('*')), {
    message: 'credentials: true with the origin "*" (browsers refuse it): list the origins',
    path: ['credentials'],
  });

/**
 * The `telemetry` block: OpenTelemetry traces (docs/telemetry.md). Absent, the standard OTEL_*
 * variables decide (off unless OTEL_TRACES_EXPORTER names otlp); a key written here wins over them.
 */
export const telemetrySchema = z.strictObject({
  // otlp: export spans over OTLP/HTTP; none: no tracing, whatever OTEL_TRACES_EXPORTER says.
  traces: z.enum(['otlp', 'none']).optional(),
  // The OTLP/HTTP traces URL (…/v1/traces); absent: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT and the like.
  endpoint: z
    .string()
    .refine((value) => /^https?:\/\//.test(value) && URL.canParse(value), 'an http(s) URL')
    .optional(),
  // The service.name resource attribute; absent: OTEL_SERVICE_NAME, else "toolpin".
  serviceName: z.string().min(1).optional(),
});

/** A prefix or separator of the aggregate's names: the characters of an MCP tool name. */
const toolNameChars = /^[A-Za-z0-9_.-]+$/;

/**
 * The `aggregate` block: one MCP server at `/mcp` whose items are the verified items of its member
 * servers, namespaced `<prefix><separator><name>` (docs/aggregate.md). Absent: no `/mcp` route.
 */
export const aggregateSchema = z.strictObject({
  // The member servers, by name; absent: every server of the folder (resource-server routes aside).
  servers: z.array(z.string().min(1)).min(1, 'at least one server').optional(),
  // Between a member's prefix and an item's own name.
  separator: z.string().min(1).max(8).regex(toolNameChars, 'letters, digits, "_", "." or "-"').default('__'),
  // A member's prefix when it is not the server's name.
  prefixes: z
    .record(z.string(), z.string().min(1).max(64).regex(toolNameChars, 'letters, digits, "_", "." or "-"'))
    .optional(),
  // Said first in the aggregate's instructions, before each member's.
  instructions: z.string().optional(),
});

/** The gateway file, before its servers folder is loaded. Blocks marked optional default as documented. */
export const gatewayFileSchema = z.strictObject({
  listen: z
    .strictObject({ host: hostSchema.default('127.0.0.1'), port: portSchema.default(8080) })
    .prefault({}),
  // Loopback by default: the admin API (and its token) is never exposed unless asked for.
  admin: z
    .strictObject({
      host: hostSchema.default('127.0.0.1'),
      port: portSchema.default(8081),
      token: z.string().min(1).optional(),
      // The review page at /ui (docs/review-ui.md): with actions, read-only, or not served.
      ui: z.enum(['review', 'readonly', 'off']).optional(),
    })
    .prefault({}),
  servers: z.string().min(1, 'a path to the folder of pin files, relative to the gateway file'),
  limits: z
    .strictObject({
      maxBodyBytes: positiveInt.default(DEFAULT_MAX_BODY_BYTES),
      // Time to the upstream's response headers (servers send them at once, even for long calls).
      upstreamTimeoutMs: positiveInt.default(DEFAULT_TIMEOUT_MS),
      // Idle time between two chunks of an upstream SSE stream.
      streamIdleMs: positiveInt.default(DEFAULT_STREAM_IDLE_MS),
    })
    .prefault({}),
  sessions: z
    .strictObject({
      max: positiveInt.default(10_000),
      ttlSeconds: positiveInt.default(3600),
      // A tools/call decided from an observation older than this lists upstream first (0: always).
      revalidateMs: z.int().min(0).optional(),
      // Bridged sessions (a stdio child or an upstream stream each) one client may hold per server. @default 8
      bridgedPerClient: positiveInt.optional(),
      // Bridged sessions one remote address may hold per server, whatever credentials it sends
      // (clients behind one reverse proxy share its address). @default 32
      bridgedPerAddress: positiveInt.optional(),
      // A bridged session with no request and no open stream for this long is closed (at most
      // ttlSeconds). @default 300
      bridgedIdleSeconds: positiveInt.optional(),
    })
    .prefault({}),
  log: z
    .strictObject({
      level: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'),
    })
    .prefault({}),
  alerts: gatewayAlertsSchema.optional(),
  shutdown: z.strictObject({ graceMs: z.int().min(0).default(10_000) }).optional(),
  cors: corsSchema.optional(),
  telemetry: telemetrySchema.optional(),
  aggregate: aggregateSchema.optional(),
  // Who a request speaks for and what it may see and use (docs/scopes.md); absent: everyone, everything pinned.
  principals: principalsSchema.optional(),
  // Signed pins (docs/pin-lifecycle.md#signed-approvals): public key files (Ed25519 JWK), relative to this file.
  trustedKeys: z.array(z.string().min(1)).optional(),
  requireSignature: z.boolean().default(false),
  // Catalog manifests (docs/manifests.md): public keys (Ed25519 JWK or PEM) trusted to sign a
  // trust-on-first-use pin's firstUseManifest, relative to this file.
  manifestKeys: z.array(z.string().min(1)).optional(),
});

/** The schema's output: a gateway file with defaults applied. */
export type GatewayFileData = z.output<typeof gatewayFileSchema>;
