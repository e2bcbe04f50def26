import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { KEYLESS_POLICY, readTrustedKey, type SignaturePolicy, type TrustedKey } from './pinSignature.js';
import { GatewayError } from '../errors.js';
import { fromZodError, invalidField } from './configError.js';
import { deepFreeze } from './deepFreeze.js';
import { planAggregate } from './aggregateNamespace.js';
import { principalsOf } from './principals.js';
import { gatewayFileSchema, type GatewayFileData } from './gatewaySchema.js';
import { readDocumentFile } from './readDocument.js';
import { loadPinFile } from './pinFile.js';
import { loadServersDir } from './serversDir.js';
import type { AggregateConfig, GatewayConfig, ServerConfig, TelemetryConfig } from './types.js';

/**
 * Reads the gateway file, then every pin file of its servers folder (resolved against the gateway
 * file's directory), into one deep-frozen GatewayConfig. Rejects with GatewayError
 * GW_CONFIG_INVALID, GW_PIN_FILE_INVALID or GW_PIN_DUPLICATE_NAME.
 */
export async function loadGatewayConfig(file: string): Promise<GatewayConfig> {
  const path = resolve(file);
  const data = parseGatewayFile(await readDocumentFile(path, 'GW_CONFIG_INVALID'), path);
  const serversDir = resolve(dirname(path), data.servers);
  const signatures = await readSignaturePolicy(data, path);
  let servers;
  try {
    servers = await loadServersDir(serversDir, signatures ?? KEYLESS_POLICY);
  } catch (error) {
    // A missing or unreadable folder is the gateway file's fault: name its `servers` field.
    if (
      error instanceof GatewayError &&
      error.code === 'GW_CONFIG_INVALID' &&
      error.data.file === serversDir
    ) {
      throw invalidField('GW_CONFIG_INVALID', path, 'servers', 'a readable folder of pin files', {
        data: { serversDir, ...(error.data.reason === undefined ? {} : { reason: error.data.reason }) },
        note: `(${serversDir}: ${String(error.data.reason ?? 'unreadable')})`,
        cause: error,
      });
    }
    throw error;
  }
  return toGatewayConfig(data, {
    file: path,
    serversDir,
    servers,
    ...(signatures === undefined ? {} : { signatures }),
  });
}

/** The key files a gateway file lists under `field` (`trustedKeys`, `manifestKeys`), read relative to it. */
async function readKeys(names: readonly string[], file: string, field: string): Promise<TrustedKey[]> {
  const keys: TrustedKey[] = [];
  for (const [index, name] of names.entries()) {
    const keyFile = resolve(dirname(file), name);
    try {
      keys.push(readTrustedKey(await readFile(keyFile, 'utf8'), keyFile));
    } catch (cause) {
      const reason = (cause as NodeJS.ErrnoException).code ?? (cause as Error).message;
      throw invalidField(
        'GW_CONFIG_INVALID',
        file,
        `${field}[${index}]`,
        'a readable Ed25519 public key (JWK or PEM)',
        {
          note: `(${reason})`,
          cause,
        },
      );
    }
  }
  return keys;
}

/**
 * The gateway file's `trustedKeys` and `manifestKeys` (read, relative to it) and `requireSignature`;
 * undefined when it names none of them (its pins are then loaded under KEYLESS_POLICY).
 */
async function readSignaturePolicy(
  data: GatewayFileData,
  file: string,
): Promise<SignaturePolicy | undefined> {
  if (data.trustedKeys === undefined && data.manifestKeys === undefined && !data.requireSignature)
    return undefined;
  const trustedKeys = await readKeys(data.trustedKeys ?? [], file, 'trustedKeys');
  if (data.requireSignature && trustedKeys.length === 0)
    throw invalidField(
      'GW_CONFIG_INVALID',
      file,
      'trustedKeys',
      'at least one key when requireSignature is true',
    );
  const manifestKeys = await readKeys(data.manifestKeys ?? [], file, 'manifestKeys');
  return {
    requireSignature: data.requireSignature,
    trustedKeys,
    ...(manifestKeys.length === 0 ? {} : { manifestKeys }),
  };
}

/**
 * One pin file served alone (`toolpin serve --pin`), without a gateway file: the gateway file's
 * defaults (the same schema fills them), the pin file in place of the gateway file and its folder
 * as the servers folder, and `pinFile` set so that only this file of the folder is served and
 * reloaded. Rejects with GatewayError GW_PIN_FILE_INVALID.
 */
export async function loadSinglePinConfig(file: string): Promise<GatewayConfig> {
  const path = resolve(file);
  // No gateway file, so no keys: a firstUseManifest is refused (docs/manifests.md).
  const server = await loadPinFile(path, KEYLESS_POLICY);
  const serversDir = dirname(path);
  const data = parseGatewayFile({ servers: serversDir }, path);
  return toGatewayConfig(data, { file: path, serversDir, servers: [server], pinFile: path });
}

interface LoadedSources {
  readonly file: string;
  readonly serversDir: string;
  readonly servers: readonly ServerConfig[];
  readonly pinFile?: string;
  readonly signatures?: SignaturePolicy;
}

function toGatewayConfig(data: GatewayFileData, sources: LoadedSources): GatewayConfig {
  const { listen, limits, log } = data;
  const { host, port, token, ui } = data.admin;
  const admin = {
    host,
    port,
    ...(token === undefined ? {} : { token }),
    ...(ui === undefined ? {} : { ui }),
  };
  const { max, ttlSeconds, revalidateMs, bridgedPerClient, bridgedPerAddress, bridgedIdleSeconds } =
    data.sessions;
  const sessions = {
    max,
    ttlSeconds,
    ...(revalidateMs === undefined ? {} : { revalidateMs }),
    ...(bridgedPerClient === undefined ? {} : { bridgedPerClient }),
    ...(bridgedPerAddress === undefined ? {} : { bridgedPerAddress }),
    ...(bridgedIdleSeconds === undefined ? {} : { bridgedIdleSeconds }),
  };
  // Optional blocks stay absent when not written, so a config without them reads as before.
  const optional = {
    ...(data.alerts === undefined ? {} : { alerts: data.alerts }),
    ...(data.shutdown === undefined ? {} : { shutdown: data.shutdown }),
    ...(data.cors === undefined ? {} : { cors: data.cors }),
    ...(data.telemetry === undefined ? {} : { telemetry: telemetryOf(data.telemetry) }),
    ...(sources.pinFile === undefined ? {} : { pinFile: sources.pinFile }),
    ...(data.aggregate === undefined ? {} : { aggregate: aggregateOf(data.aggregate, sources) }),
    ...(sources.signatures === undefined ? {} : { signatures: sources.signatures }),
    ...(data.principals === undefined ? {} : { principals: principalsOf(data.principals, sources.file) }),
  };
  const { file, serversDir, servers } = sources;
  return deepFreeze({ file, listen, admin, serversDir, limits, sessions, log, servers, ...optional });
}

/** The `telemetry` block with only the keys written (each absent one defers to its OTEL_* variable). */
function telemetryOf(block: NonNullable<GatewayFileData['telemetry']>): TelemetryConfig {
  const { traces, endpoint, serviceName } = block;
  return {
    ...(traces === undefined ? {} : { traces }),
    ...(endpoint === undefined ? {} : { endpoint }),
    ...(serviceName === undefined ? {} : { serviceName }),
  };
}

/**
 * The `aggregate` block with only the keys written, refused when it cannot be served as written:
 * a member it names that is not there or verifies tokens, prefixes that could make two members'
 * names one (docs/aggregate.md).
 */
function aggregateOf(
  block: NonNullable<GatewayFileData['aggregate']>,
  sources: LoadedSources,
): AggregateConfig {
  const { servers, separator, prefixes, instructions } = block;
  const aggregate: AggregateConfig = {
    separator,
    ...(servers === undefined ? {} : { servers }),
    ...(prefixes === undefined ? {} : { prefixes }),
    ...(instructions === undefined ? {} : { instructions }),
  };
  const problem = planAggregate(aggregate, sources.servers).problems[0];
  if (problem !== undefined)
    throw invalidField('GW_CONFIG_INVALID', sources.file, problem.field, problem.expected, {
      note: problem.note,
    });
  return aggregate;
}

/** Validates the parsed gateway file; `file` names it in errors. Throws GatewayError GW_CONFIG_INVALID. */
function parseGatewayFile(value: unknown, file: string): GatewayFileData {
  const result = gatewayFileSchema.safeParse(value);
  if (!result.success) throw fromZodError('GW_CONFIG_INVALID', file, result.error, value);
  return result.data;
}
