import { createHash } from 'node:crypto';
import { canonicalizeJson, encodePromptKey, encodeTemplateKey, encodeToolKey } from '@toolpin/digest';
import { z } from 'zod';
import { GatewayError } from '../errors.js';
import { fromZodError, invalidField } from './configError.js';
import { deepFreeze } from './deepFreeze.js';
import { artifactSchema, DIGEST_PATTERN, PROFILE_PATTERN } from './pinFileSchema.js';
import { verifyCompactJws, type TrustedKey } from './pinSignature.js';
import { parseDocumentText } from './readDocument.js';

/**
 * A catalog manifest (docs/manifests.md): the digests of a server's catalog as its author or a
 * registry publishes them, signed (a detached JWS, EdDSA) so that `toolpin pin --manifest` can take
 * them as the first pin instead of trusting first use. toolpin's reading of the MCP drafts SEP-2636
 * (tool manifests: per-tool entries of name and `sha256:` digest) and SEP-3140 (a signed capability
 * manifest: `{manifest, signature}`, the signature a detached JWS over the RFC 8785 form of `manifest`).
 */

/** The `format` of a manifest this version of toolpin reads and writes. */
export const MANIFEST_FORMAT = 'toolpin.catalog-manifest.v1';

/** The `typ` of a manifest signature's protected header. */
export const MANIFEST_SIGNATURE_TYPE = 'toolpin-manifest+jws';

const digestSchema = z
  .string()
  .regex(DIGEST_PATTERN, 'a digest "sha256:" followed by 64 lowercase hex digits');
const textSchema = z
  .string()
  .min(1)
  .max(512)
  .regex(/^[^\0\r\n]*$/, 'one line of text');
const instantSchema = z.iso.datetime({ offset: true });

const namedEntries = z.array(z.strictObject({ name: z.string().min(1), digest: digestSchema }));

/** What a manifest states (the signed part). Unknown members are refused: what toolpin cannot read is not trusted. */
export const manifestBodySchema = z.strictObject({
  format: z.literal(MANIFEST_FORMAT),
  // Who serves the catalog: the name and version the author publishes, and what runs it.
  server: z.strictObject({
    name: textSchema,
    version: textSchema.optional(),
    artifact: artifactSchema.optional(),
  }),
  issuedAt: instantSchema,
  expiresAt: instantSchema.optional(),
  // The preimage label of every digest below (the derivation: /work/shared/spec).
  profile: z.string().regex(PROFILE_PATTERN, 'a profile label such as "trace.mcp-tool-definition.v1"'),
  catalog: digestSchema,
  tools: namedEntries,
  prompts: z.strictObject({ catalog: digestSchema, entries: namedEntries }).optional(),
  resourceTemplates: z
    .strictObject({
      catalog: digestSchema,
      entries: z.array(z.strictObject({ uriTemplate: z.string().min(1), digest: digestSchema })),
    })
    .optional(),
  instructions: digestSchema.optional(),
});

/** The signed statement of a manifest. */
export type ManifestBody = z.output<typeof manifestBodySchema>;

const manifestDocumentSchema = z.strictObject({
  manifest: manifestBodySchema,
  signature: z
    .string()
    .max(4096)
    .regex(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+$/, 'a JWS (header..signature, detached)'),
});

/** A manifest document as read: the statement and its signature (not verified yet). */
export type ManifestDocument = z.output<typeof manifestDocumentSchema>;

/** A manifest whose signature verified: what it states, by whom, and its digest. */
export interface VerifiedManifest {
  readonly body: ManifestBody;
  /** The kid (RFC 7638 thumbprint) of the trusted key that signed it. */
  readonly kid: string;
  /** `sha256:` of the RFC 8785 form of `manifest`: the bytes the signature covers. */
  readonly digest: string;
  /** Where it was read from (a path or URL), for messages and `approvedBy`. */
  readonly source: string;
}

/** `sha256:` + hex of the RFC 8785 form of a manifest's statement (what its signature covers). */
export function manifestDigest(body: ManifestBody): string {
  return `sha256:${createHash('sha256').update(canonicalizeJson(body), 'utf8').digest('hex')}`;
}

/** Parses the text of a manifest (JSON). Throws GatewayError GW_MANIFEST_REFUSED naming the field at fault. */
export function parseCatalogManifest(text: string, source: string): ManifestDocument {
  const value = parseDocumentText(text, source, 'GW_MANIFEST_REFUSED');
  const result = manifestDocumentSchema.safeParse(value);
  if (!result.success) throw fromZodError('GW_MANIFEST_REFUSED', source, result.error, value);
  const names = new Set<string>();
  for (const [index, entry] of result.data.manifest.tools.entries()) {
    const key = encodeToolKey(entry.name);
    if (names.has(key))
      throw invalidField(
        'GW_MANIFEST_REFUSED',
        source,
        `manifest.tools[${index}].name`,
        'a name listed once',
      );
    names.add(key);
  }
  return deepFreeze(result.data);
}

function refused(source: string, reason: string, expected: string, data: Record<string, unknown> = {}) {
  return new GatewayError('GW_MANIFEST_REFUSED', `Catalog manifest ${source}: expected ${expected}`, {
    ...data,
    source,
    reason,
    expected,
  });
}

/**
 * Verifies a manifest's signature against the trusted keys: a detached JWS (EdDSA) of the RFC 8785
 * form of `manifest`, typed as a manifest, by a key whose kid is listed; and a manifest not expired.
 * Throws GatewayError GW_MANIFEST_REFUSED (`reason`: malformed, untrusted_key, bad_signature, expired).
 */
export function verifyCatalogManifest(
  document: ManifestDocument,
  keys: readonly TrustedKey[],
  source: string,
  now: number = Date.now(),
): VerifiedManifest {
  const checked = verifyCompactJws(document.signature, keys, canonicalizeJson(document.manifest));
  if ('reason' in checked) {
    if (checked.reason === 'malformed')
      throw refused(source, 'malformed', 'a JWS signed with EdDSA over the manifest (detached)');
    if (checked.reason === 'untrusted_key')
      throw refused(
        source,
        'untrusted_key',
        `a signature by a trusted key: it names key ${JSON.stringify(checked.kid)}, none of the ${keys.length} trusted`,
        { kid: checked.kid },
      );
    throw refused(
      source,
      'bad_signature',
      'a signature that verifies: the manifest changed since it was signed',
      {
        kid: checked.kid,
      },
    );
  }
  if (checked.header.typ !== MANIFEST_SIGNATURE_TYPE)
    throw refused(source, 'malformed', `a signature typed ${MANIFEST_SIGNATURE_TYPE}`, { kid: checked.kid });
  const { expiresAt } = document.manifest;
  if (expiresAt !== undefined && Date.parse(expiresAt) <= now)
    throw refused(source, 'expired', `a manifest not expired (it expired at ${expiresAt})`, {
      kid: checked.kid,
    });
  return { body: document.manifest, kid: checked.kid, digest: manifestDigest(document.manifest), source };
}

/** The digests a manifest states, keyed as a pin keys them (`tool:`, `prompt:`, `template:` fold keys). */
export interface StatedDigests {
  readonly catalog: string;
  readonly tools: Readonly<Record<string, string>>;
  readonly prompts?: { readonly catalog: string; readonly items: Readonly<Record<string, string>> };
  readonly resourceTemplates?: { readonly catalog: string; readonly items: Readonly<Record<string, string>> };
  readonly instructions?: string;
}

/** A manifest's statement keyed as a pin is, so that the two compare key by key. */
export function statedDigests(body: ManifestBody): StatedDigests {
  const keyed = <T>(entries: readonly T[], key: (entry: T) => string, digest: (entry: T) => string) =>
    Object.fromEntries(entries.map((entry) => [key(entry), digest(entry)]));
  return {
    catalog: body.catalog,
    tools: keyed(
      body.tools,
      (entry) => encodeToolKey(entry.name),
      (entry) => entry.digest,
    ),
    ...(body.prompts === undefined
      ? {}
      : {
          prompts: {
            catalog: body.prompts.catalog,
            items: keyed(
              body.prompts.entries,
              (entry) => encodePromptKey(entry.name),
              (entry) => entry.digest,
            ),
          },
        }),
    ...(body.resourceTemplates === undefined
      ? {}
      : {
          resourceTemplates: {
            catalog: body.resourceTemplates.catalog,
            items: keyed(
              body.resourceTemplates.entries,
              (entry) => encodeTemplateKey(entry.uriTemplate),
              (entry) => entry.digest,
            ),
          },
        }),
    ...(body.instructions === undefined ? {} : { instructions: body.instructions }),
  };
}
