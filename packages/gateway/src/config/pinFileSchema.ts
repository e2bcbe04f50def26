import { principalNameSchema } from './principalsSchema.js';
import { TRACE_PROFILE } from '@toolpin/digest';
import { isAbsolute } from 'node:path';
import { z } from 'zod';
import { ENV_NAME_PATTERN, httpUrlSchema } from './schemaParts.js';
import { pinAlertsSchema } from './alertsSchema.js';
import { authSchema, resourcePathProblem } from './authSchema.js';
import { isObject } from '../wire/isObject.js';
import { moveUrlCredentials } from './urlCredentials.js';

/** A pinned digest: `sha256:` + 64 lowercase hex. */
export const DIGEST_PATTERN = /^sha256:[0-9a-f]{64}$/;

/** A server name, also its route segment (`/<name>/mcp`). */
export const SERVER_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/** A profile label: lowercase dotted words ending in a version (`trace.mcp-tool-definition.v1`). */
export const PROFILE_PATTERN = /^[a-z0-9.-]+\.v\d+$/;

// A fold key as encodeToolKey writes it (spec section 4): `tool:` + printable ASCII without `=`
// (the key/digest separator of the catalog lines), at most 128 characters; or the overflow entry.
const TOOL_KEY_PATTERN = /^(?:tool:[\x21-\x3c\x3e-\x7e]{1,128}|tools:overflow)$/;

// The same shape for the other surfaces (docs/pin-surfaces.md): `prompt:<name>`, `template:<uriTemplate>`.
const PROMPT_KEY_PATTERN = /^(?:prompt:[\x21-\x3c\x3e-\x7e]{1,128}|prompts:overflow)$/;
const TEMPLATE_KEY_PATTERN = /^(?:template:[\x21-\x3c\x3e-\x7e]{1,128}|templates:overflow)$/;

// RFC 9110 token, and a field value without the bytes that would split or end a header line.
const HEADER_NAME_PATTERN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const HEADER_VALUE_PATTERN = /^[^\r\n\0]*$/;

const digestSchema = z
  .string()
  .regex(DIGEST_PATTERN, 'a digest "sha256:" followed by 64 lowercase hex digits');

const toolKeySchema = z
  .string()
  .regex(TOOL_KEY_PATTERN, 'a fold key "tool:<name>" (printable ASCII, no "=") or "tools:overflow"');

const promptKeySchema = z
  .string()
  .regex(PROMPT_KEY_PATTERN, 'a fold key "prompt:<name>" (printable ASCII, no "=") or "prompts:overflow"');

const templateKeySchema = z
  .string()
  .regex(
    TEMPLATE_KEY_PATTERN,
    'a fold key "template:<uriTemplate>" (printable ASCII, no "=") or "templates:overflow"',
  );

/**
 * An upstream reached over HTTP: Streamable HTTP, or the 2024-11-05 HTTP+SSE transport. Userinfo
 * in `url` becomes an `authorization: Basic` header (see moveUrlCredentials; `authorizationFromUrl`).
 */
export const httpUpstreamSchema = z
  .strictObject({
    url: httpUrlSchema,
    headers: z
      .record(
        z.string().regex(HEADER_NAME_PATTERN, 'an HTTP header name (RFC 9110 token)'),
        z.string().regex(HEADER_VALUE_PATTERN, 'a header value without CR, LF or NUL'),
      )
      .default({}),
    transport: z.enum(['streamable-http', 'sse']).default('streamable-http'),
  })
  .transform((upstream, ctx) => {
    const moved = moveUrlCredentials(upstream.url, upstream.headers);
    if ('problem' in moved) {
      ctx.addIssue({ code: 'custom', path: ['url'], message: moved.problem });
      return z.NEVER;
    }
    return { ...upstream, url: moved.url, headers: moved.headers, authorizationFromUrl: moved.moved };
  });

// A POSIX environment variable name, and a value that can be passed to execve (no NUL).
const ARGUMENT_PATTERN = /^[^\0]*$/;
const argumentSchema = z.string().regex(ARGUMENT_PATTERN, 'a command-line argument without NUL');

/** An upstream the gateway spawns and speaks to over stdin/stdout (MCP stdio transport). */
export const stdioUpstreamSchema = z.strictObject({
  command: z.union([
    z.string().min(1).regex(ARGUMENT_PATTERN, 'a program without NUL'),
    z.array(argumentSchema).min(1),
  ]),
  args: z.array(argumentSchema).default([]),
  env: z
    .record(
      z.string().regex(ENV_NAME_PATTERN, 'an environment variable name (letters, digits, "_")'),
      z.string().regex(ARGUMENT_PATTERN, 'a value without NUL'),
    )
    .default({}),
  // The variables the server gets from the environment toolpin runs in (the client's, for wrap):
  // names only, so a pin never holds their values (docs/desktop.md#secrets-stay-in-the-client).
  passEnv: z
    .array(z.string().regex(ENV_NAME_PATTERN, 'an environment variable name (letters, digits, "_")'))
    .default([]),
  cwd: z.string().min(1).optional(),
});

/**
 * The upstream, keyed on `url` (HTTP) vs `command` (stdio). The branch is chosen by key rather
 * than by a zod union so that an error names the field at fault (a union only says "no branch").
 */
export const upstreamSchema = z.unknown().transform((value, ctx) => {
  const stdio = isObject(value) && 'command' in value && !('url' in value);
  const result = stdio ? stdioUpstreamSchema.safeParse(value) : httpUpstreamSchema.safeParse(value);
  if (result.success) return result.data;
  // Re-raised as is: zod prefixes the path, and the raw-issue type differs only in optionality.
  for (const issue of result.error.issues)
    ctx.addIssue(issue as unknown as Parameters<typeof ctx.addIssue>[0]);
  return z.NEVER;
});

/**
 * A pinned definition: the six hashed members (verified against the pinned digest), and any other
 * member (`icons`, `execution`, `_meta`, vendor keys) pinned by value (see extraMembers.ts).
 */
export const definitionSchema = z
  .object({
    name: z.string().min(1),
    title: z.unknown().optional(),
    description: z.unknown().optional(),
    inputSchema: z.unknown().optional(),
    outputSchema: z.unknown().optional(),
    annotations: z.unknown().optional(),
  })
  .catchall(z.unknown());

/** A pinned prompt (docs/pin-surfaces.md): its four hashed members, verified against the pinned digest. */
export const promptDefinitionSchema = z.strictObject({
  name: z.string().min(1),
  title: z.unknown().optional(),
  description: z.unknown().optional(),
  arguments: z.unknown().optional(),
});

/** A pinned resource template: its five hashed members, verified against the pinned digest. */
export const templateDefinitionSchema = z.strictObject({
  uriTemplate: z.string().min(1),
  name: z.unknown().optional(),
  title: z.unknown().optional(),
  description: z.unknown().optional(),
  mimeType: z.unknown().optional(),
});

/**
 * The pin of a listed surface other than tools: its catalog digest, every item's digest, and
 * beyond 500 items the fold's overflow entry (see pinSchema).
 */
function surfacePinSchema(keySchema: z.ZodString) {
  return z.strictObject({
    catalog: digestSchema,
    items: z.record(keySchema, digestSchema),
    overflow: digestSchema.optional(),
  });
}

// npm's integrity strings (SRI, W3C): the algorithm, a dash, base64. npm publishes sha512.
const SRI_PATTERN = /^sha(?:256|384|512)-[A-Za-z0-9+/]+={0,2}$/;
// An image id as docker prints it: sha256 and 64 lowercase hex digits.
const IMAGE_ID_PATTERN = /^sha256:[0-9a-f]{64}$/;
const textSchema = z
  .string()
  .min(1)
  .max(512)
  .regex(/^[^\0\r\n]*$/, 'one line of text');

/**
 * The artifact behind the catalog (docs/pin-lifecycle.md#the-artifact), keyed on `kind` so that an
 * error names the field at fault. Never part of the catalog digest.
 */
export const artifactSchema = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('npm'),
    package: textSchema,
    version: textSchema,
    integrity: z.string().regex(SRI_PATTERN, 'a registry integrity "sha512-<base64>" (SRI)'),
  }),
  z.strictObject({
    kind: z.literal('file'),
    path: textSchema.refine((path) => isAbsolute(path), 'an absolute path'),
    sha256: digestSchema,
  }),
  z.strictObject({
    kind: z.literal('docker'),
    image: textSchema,
    id: z.string().regex(IMAGE_ID_PATTERN, 'an image id "sha256:" followed by 64 lowercase hex digits'),
  }),
  z.strictObject({ kind: z.literal('server'), name: z.string().max(512), version: z.string().max(512) }),
]);

/**
 * Where the pin's first approval came from, when not from trusting a first listing: a catalog
 * manifest whose signature verified (docs/manifests.md). Kept by later approvals.
 */
export const approvedBySchema = z.strictObject({
  via: z.literal('manifest'),
  // The kid (RFC 7638 thumbprint) of the key that signed the manifest.
  kid: z.string().regex(/^[A-Za-z0-9_-]{1,128}$/, 'a key id (base64url)'),
  // sha256: of the RFC 8785 form of the manifest's statement: what the signature covers.
  manifest: digestSchema,
  // Where the manifest was read from (a path or URL), and the server it names.
  source: z
    .string()
    .min(1)
    .max(2048)
    .regex(/^[^\0\r\n]*$/, 'one line of text'),
  server: textSchema.optional(),
});

/**
 * The pin: the tools' catalog digest (the published fold), every tool's own digest by key, and
 * beyond 500 tools `overflow`, the fold's `tools:overflow` entry (a file written before holds that
 * entry in `tools`, beside 500 keys); optionally the same for prompts and resource templates, and
 * the digest of the server's instructions (absent: not pinned).
 */
export const pinSchema = z.strictObject({
  catalog: digestSchema,
  tools: z.record(toolKeySchema, digestSchema),
  overflow: digestSchema.optional(),
  prompts: surfacePinSchema(promptKeySchema).optional(),
  resourceTemplates: surfacePinSchema(templateKeySchema).optional(),
  instructions: digestSchema.optional(),
  artifact: artifactSchema.optional(),
});

// `definitions` holds every surface's keys in one map; each key's prefix picks the schema of its
// definition, so an error names the key at fault (a union only says "no branch"). Every key
// carries a prefix, so none is "__proto__".
const DEFINITION_SCHEMAS = [
  { prefix: 'tool:', key: toolKeySchema, value: definitionSchema },
  { prefix: 'prompt:', key: promptKeySchema, value: promptDefinitionSchema },
  { prefix: 'template:', key: templateKeySchema, value: templateDefinitionSchema },
] as const;

/** The definitions of a pin file, split by surface (each keyed as in its pin section). */
export interface PinFileDefinitions {
  readonly tools: Record<string, z.output<typeof definitionSchema>>;
  readonly prompts: Record<string, z.output<typeof promptDefinitionSchema>>;
  readonly templates: Record<string, z.output<typeof templateDefinitionSchema>>;
}

const definitionsSchema = z.record(z.string(), z.unknown()).transform((record, ctx) => {
  const split: PinFileDefinitions = { tools: {}, prompts: {}, templates: {} };
  const targets = [split.tools, split.prompts, split.templates] as Record<string, unknown>[];
  for (const [key, value] of Object.entries(record)) {
    const index = DEFINITION_SCHEMAS.findIndex((schema) => key.startsWith(schema.prefix));
    const schema = DEFINITION_SCHEMAS[index];
    if (schema === undefined) {
      const message = 'a key "tool:<name>", "prompt:<name>" or "template:<uriTemplate>"';
      ctx.addIssue({ code: 'custom', path: [key], message });
      continue;
    }
    const keyResult = schema.key.safeParse(key);
    const valueResult = schema.value.safeParse(value);
    for (const issue of [...(keyResult.error?.issues ?? []), ...(valueResult.error?.issues ?? [])])
      ctx.addIssue({ ...issue, path: [key, ...issue.path] } as unknown as Parameters<typeof ctx.addIssue>[0]);
    if (keyResult.success && valueResult.success)
      (targets[index] as Record<string, unknown>)[key] = valueResult.data;
  }
  return split;
});

/** `pin: trust-on-first-use`: nothing approved yet; the first complete observation becomes the pin. */
export const TRUST_ON_FIRST_USE = 'trust-on-first-use';

/** The pin of a server not pinned yet: no tools, and the catalog digest of no tools (the fold of zero lines). */
export const PENDING_PIN = Object.freeze({
  catalog: 'sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
  tools: Object.freeze({}),
});

const onDriftActionSchema = z.enum(['filter', 'block-server']);

/** `onDrift` per severity: high drift is always contained; low drift may also be flagged and served. */
export const driftPolicySchema = z.strictObject({
  high: onDriftActionSchema,
  low: z.enum(['filter', 'block-server', 'flag']),
});

// A map is read as the per-severity policy and anything else as the single action, so that an
// error names the field at fault (a union only says "no branch").
const onDriftSchema = z.unknown().transform((value, ctx) => {
  const result = isObject(value) ? driftPolicySchema.safeParse(value) : onDriftActionSchema.safeParse(value);
  if (result.success) return result.data;
  for (const issue of result.error.issues)
    ctx.addIssue(issue as unknown as Parameters<typeof ctx.addIssue>[0]);
  return z.NEVER;
});

// `validate: strict` for the whole server, or a map keyed like pin.tools: false (not checked),
// true (checked, the default reading of null) or strict. A map is read as the map and anything
// else as the word, so that an error names the field at fault (a union only says "no branch").
const validateMapSchema = z.record(toolKeySchema, z.union([z.boolean(), z.literal('strict')]));
const validateSchema = z.unknown().transform((value, ctx) => {
  const result = isObject(value)
    ? validateMapSchema.safeParse(value)
    : z.literal('strict', 'strict, or a map of tool keys to true, false or strict').safeParse(value);
  if (result.success) return result.data;
  for (const issue of result.error.issues)
    ctx.addIssue(issue as unknown as Parameters<typeof ctx.addIssue>[0]);
  return z.NEVER;
});

/** One pin file, before the checks that relate its members (see verifyPin). */
export const pinFileSchema = z
  .strictObject({
    name: z
      .string()
      .regex(SERVER_NAME_PATTERN, 'a name of 1-64 letters, digits, "_", "." or "-", starting alphanumeric'),
    upstream: upstreamSchema,
    // The client capabilities declared at initialize when the pin was listed (`pin --capabilities`):
    // some servers list tools per capability, so check, approve and the gateway's own sessions declare them too.
    clientCapabilities: z.record(z.string(), z.unknown()).optional(),
    mode: z.enum(['enforce', 'monitor']).default('enforce'),
    profile: z
      .string()
      .regex(PROFILE_PATTERN, 'a profile label such as "trace.mcp-tool-definition.v1"')
      .default(TRACE_PROFILE),
    onDrift: onDriftSchema.default('filter'),
    // The marker reads as the empty pin, so every other value meets pinSchema and its field errors.
    pin: z.preprocess(
      (value) => (value === TRUST_ON_FIRST_USE ? { ...PENDING_PIN, tools: {} } : value),
      pinSchema,
    ),
    definitions: definitionsSchema.default(() => ({ tools: {}, prompts: {}, templates: {} })),
    // The pinned text of the server's instructions (explains drift); only beside pin.instructions.
    instructions: z.string().optional(),
    // A result whose structuredContent does not fit the pinned outputSchema: reported, or replaced.
    onBadOutput: z.enum(['flag', 'block']).default('flag'),
    // Per tool (keyed like pin.tools): false = its calls and results are not checked against its
    // schemas; strict = null for an optional property is a value, not its absence. `strict` alone: every tool.
    validate: validateSchema.default({}),
    alerts: pinAlertsSchema.optional(),
    // How the route's credentials work (docs/oauth.md): transparent (default), resource-server, client.
    auth: authSchema.optional(),
    approvedBy: approvedBySchema.optional(),
    // With `pin: trust-on-first-use`: a signed catalog manifest (a path, relative to this file) the
    // first listing must equal to be pinned (docs/manifests.md); its signer is one of manifestKeys.
    firstUseManifest: z.string().min(1).max(4096).optional(),
    // Catalogs pinned per principal (docs/scopes.md#pins-per-principal): a session speaking for
    // one is checked against its own; `toolpin pin --as <principal>` records one.
    principals: z
      .record(
        principalNameSchema,
        z.strictObject({
          pin: pinSchema,
          definitions: definitionsSchema.default(() => ({ tools: {}, prompts: {}, templates: {} })),
          instructions: z.string().optional(),
        }),
      )
      .optional(),
    // A principal with no catalog of its own here: trusted on first use into its own entry (else refused).
    principalFirstUse: z.boolean().optional(),
    // A compact JWS of the file's content by a reviewer's key (docs/pin-lifecycle.md#signed-approvals).
    signature: z
      .string()
      .max(4096)
      .regex(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/, 'a compact JWS (header.payload.signature)')
      .optional(),
  })
  .superRefine((pin, ctx) => {
    const problem = resourcePathProblem(pin.name, pin.auth);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', path: ['auth', 'resource'], message: problem });
    // On a resource-server route the upstream's Authorization is upstreamCredential's alone.
    const headers = 'url' in pin.upstream ? Object.keys(pin.upstream.headers) : [];
    if (
      pin.auth?.mode === 'resource-server' &&
      headers.some((name) => name.toLowerCase() === 'authorization')
    )
      ctx.addIssue({
        code: 'custom',
        path: ['upstream', 'headers'],
        message:
          'no Authorization (nor credentials in the url) on a resource-server route: upstreamCredential says what the upstream receives',
      });
  });

/** The schema's output: a pin file with defaults applied. */
export type PinFileData = z.output<typeof pinFileSchema>;
