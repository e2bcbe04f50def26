import { resolve } from 'node:path';
import { restrictPrompt, restrictTemplate, restrictTool, type RestrictedTool } from '@toolpin/digest';
import { fromZodError, invalidField } from './configError.js';
import { deepFreeze } from './deepFreeze.js';
import { extraMembersOf, type ExtraMembers } from '../explain/extraMembers.js';
import { pinFileSchema, TRUST_ON_FIRST_USE, type PinFileData } from './pinFileSchema.js';
import { parseDocumentText, readDocumentFile } from './readDocument.js';
import type { ApprovedBy, PinnedCatalog, ServerConfig, SurfacePinConfig, UpstreamConfig } from './types.js';
import { GatewayError } from '../errors.js';
import { verifyPin } from './verifyPin.js';
import { readFirstUseManifest } from './firstUseManifest.js';
import { verifyPinSignature, type SignaturePolicy } from './pinSignature.js';

/**
 * Validates an already parsed pin file (or an embedded object) into a deep-frozen ServerConfig.
 * `file` names the source in errors and is kept as is. Throws GatewayError GW_PIN_FILE_INVALID.
 */
export function parseServerConfig(value: unknown, file: string, signatures?: SignaturePolicy): ServerConfig {
  const detached = detach(value, file);
  const data = parsePinData(detached, file);
  const pending = (detached as { pin?: unknown } | null)?.pin === TRUST_ON_FIRST_USE;
  verifyPin(data, file);
  const signedBy = checkSignature(detached, data, file, signatures);
  const principalPins = principalPinsOf(data, file);
  // Read only while nothing is pinned: once pinned, the pin is what is enforced.
  // Outside a gateway (no policy: a CLI reading the file) it is not verified, and not pinned from.
  const firstUseManifest =
    !pending || data.firstUseManifest === undefined
      ? undefined
      : signatures === undefined
        ? { unverified: data.firstUseManifest }
        : readFirstUseManifest(data.firstUseManifest, data.profile, file, signatures.manifestKeys ?? []);
  return deepFreeze({
    name: data.name,
    file,
    upstream: toUpstreamConfig(data.upstream),
    ...(data.clientCapabilities === undefined ? {} : { clientCapabilities: data.clientCapabilities }),
    mode: data.mode,
    profile: data.profile,
    onDrift: data.onDrift,
    ...pinnedCatalogOf(data),
    onBadOutput: data.onBadOutput,
    validate: data.validate,
    ...(data.alerts === undefined ? {} : { alerts: data.alerts }),
    ...(data.auth === undefined || data.auth.mode === 'transparent' ? {} : { auth: data.auth }),
    ...(pending ? { trustOnFirstUse: true as const } : {}),
    ...(signedBy === undefined ? {} : { signedBy }),
    ...(firstUseManifest === undefined ? {} : { firstUseManifest }),
    ...(data.approvedBy === undefined ? {} : { approvedBy: approvedByOf(data.approvedBy) }),
    ...(principalPins === undefined ? {} : { principalPins }),
    ...(data.principalFirstUse === true ? { principalFirstUse: true as const } : {}),
  });
}

/** The catalog parts of a pin file (its own, or a principal's entry read as one): the pin and its definitions. */
function pinnedCatalogOf(
  data: Pick<PinFileData, 'pin' | 'definitions' | 'instructions'>,
): PinnedCatalog & { pin: ServerConfig['pin'] } {
  const definitions: Record<string, RestrictedTool> = {};
  const extraMembers: Record<string, ExtraMembers> = {};
  for (const [key, definition] of Object.entries(data.definitions.tools)) {
    definitions[key] = restrictTool(definition);
    const extras = extraMembersOf(definition);
    if (extras !== undefined) extraMembers[key] = extras;
  }
  return {
    pin: {
      catalog: data.pin.catalog,
      tools: data.pin.tools,
      ...(data.pin.overflow === undefined ? {} : { overflow: data.pin.overflow }),
      ...(data.pin.prompts === undefined ? {} : { prompts: surfacePinOf(data.pin.prompts) }),
      ...(data.pin.resourceTemplates === undefined
        ? {}
        : { resourceTemplates: surfacePinOf(data.pin.resourceTemplates) }),
      ...(data.pin.instructions === undefined ? {} : { instructions: data.pin.instructions }),
      ...(data.pin.artifact === undefined ? {} : { artifact: data.pin.artifact }),
    },
    definitions,
    promptDefinitions: mapValues(data.definitions.prompts, restrictPrompt),
    templateDefinitions: mapValues(data.definitions.templates, restrictTemplate),
    ...(data.instructions === undefined ? {} : { instructions: data.instructions }),
    extraMembers,
  };
}

/**
 * The catalogs pinned per principal, each verified exactly as the file's own (the published
 * derivation, under the file's profile); an error names the entry's field.
 */
function principalPinsOf(data: PinFileData, file: string): Record<string, PinnedCatalog> | undefined {
  if (data.principals === undefined) return undefined;
  const pins: Record<string, PinnedCatalog> = {};
  for (const [principal, entry] of Object.entries(data.principals)) {
    const read = {
      ...data,
      pin: entry.pin,
      definitions: entry.definitions,
      instructions: entry.instructions,
    };
    try {
      verifyPin(read, file);
    } catch (error) {
      if (!(error instanceof GatewayError)) throw error;
      const field = `principals.${principal}.${String(error.data.field)}`;
      throw invalidField('GW_PIN_FILE_INVALID', file, field, String(error.data.expected), { cause: error });
    }
    pins[principal] = pinnedCatalogOf(read);
  }
  return pins;
}

// Required by the gateway file, or present where trusted keys are listed: a signature that does
// not verify is never ignored. Without trusted keys a signature is only carried (toolpin verify checks it).
function checkSignature(
  document: unknown,
  data: PinFileData,
  file: string,
  signatures: SignaturePolicy | undefined,
): string | undefined {
  if (signatures === undefined) return undefined;
  const present = data.signature !== undefined;
  if (!signatures.requireSignature && !(present && signatures.trustedKeys.length > 0)) return undefined;
  return verifyPinSignature(document, signatures.trustedKeys, file);
}

/** Parses the text of a pin file (YAML or JSON); `file` is resolved to an absolute path. Throws GatewayError. */
export function parsePinFile(text: string, file: string, signatures?: SignaturePolicy): ServerConfig {
  const path = resolve(file);
  return parseServerConfig(parseDocumentText(text, path, 'GW_PIN_FILE_INVALID'), path, signatures);
}

/**
 * Reads and parses one pin file, its signature checked under `signatures` (the gateway file's).
 * Rejects with GatewayError GW_PIN_FILE_INVALID or GW_PIN_SIGNATURE.
 */
export async function loadPinFile(file: string, signatures?: SignaturePolicy): Promise<ServerConfig> {
  const path = resolve(file);
  return parseServerConfig(await readDocumentFile(path, 'GW_PIN_FILE_INVALID'), path, signatures);
}

function approvedByOf(approvedBy: NonNullable<PinFileData['approvedBy']>): ApprovedBy {
  const { server, ...rest } = approvedBy;
  return server === undefined ? rest : { ...rest, server };
}

function surfacePinOf(section: NonNullable<PinFileData['pin']['prompts']>): SurfacePinConfig {
  const { catalog, items, overflow } = section;
  return overflow === undefined ? { catalog, items } : { catalog, items, overflow };
}

function mapValues<T, R>(record: Readonly<Record<string, T>>, map: (value: T) => R): Record<string, R> {
  return Object.fromEntries(Object.entries(record).map(([key, value]) => [key, map(value)]));
}

function toUpstreamConfig(upstream: PinFileData['upstream']): UpstreamConfig {
  if ('url' in upstream)
    return {
      url: upstream.url,
      headers: upstream.headers,
      transport: upstream.transport,
      ...(upstream.authorizationFromUrl ? { authorizationFromUrl: true as const } : {}),
    };
  const [program, ...rest] = typeof upstream.command === 'string' ? [upstream.command] : upstream.command;
  return {
    command: [program ?? '', ...rest],
    args: upstream.args,
    env: upstream.env,
    passEnv: upstream.passEnv,
    ...(upstream.cwd === undefined ? {} : { cwd: upstream.cwd }),
  };
}

function parsePinData(value: unknown, file: string): PinFileData {
  const result = pinFileSchema.safeParse(value);
  if (!result.success) throw fromZodError('GW_PIN_FILE_INVALID', file, result.error, value);
  return result.data;
}

// The result is frozen, so it must not share objects with the caller's value (definitions are
// kept as given, and freezing them would freeze the caller's objects).
function detach(value: unknown, file: string): unknown {
  try {
    return structuredClone(value);
  } catch (cause) {
    throw invalidField(
      'GW_PIN_FILE_INVALID',
      file,
      '',
      'plain data (objects, arrays, strings, numbers, booleans)',
      {
        cause,
      },
    );
  }
}
