import { TRACE_PROFILE } from '@toolpin/digest';
import { PIN_SURFACES } from './pinSurfaces.js';
import { stringify } from 'yaml';
import { joinDefinition } from '../explain/extraMembers.js';
import { TRUST_ON_FIRST_USE } from './pinFileSchema.js';
import type { AlertsConfig, PinConfig, PinFileInput, SurfacePinConfig } from './types.js';

/** The formats a pin file is written in. */
export type PinFileFormat = 'yaml' | 'json';

/**
 * Writes a pin file in the documented member order (name, upstream, clientCapabilities, mode,
 * profile, onDrift, pin, definitions, instructions), with every default spelled out (empty headers,
 * args and env left out), tool keys
 * sorted, definition members in hashed order and then the members pinned by value sorted by name,
 * so that re-pinning the same catalog yields the same bytes. `file` is not written.
 */
export function serializePinFile(server: PinFileInput, format: PinFileFormat): string {
  const document = toDocument(server);
  if (format === 'json') return JSON.stringify(document, null, 2) + '\n';
  // No anchors/aliases for shared objects, and no line folding: a pin file is read by people.
  return stringify(document, { aliasDuplicateObjects: false, lineWidth: 0 });
}

/** `validate` as written: `strict`, the map sorted, or nothing for an empty map (the default). */
function validateDocument(validate: PinFileInput['validate']): { validate?: unknown } {
  if (validate === 'strict') return { validate };
  return validate === undefined || Object.keys(validate).length === 0 ? {} : { validate: sortKeys(validate) };
}

function toDocument(server: PinFileInput): Record<string, unknown> {
  const upstream = upstreamDocument(server.upstream);
  const definitions = server.definitions ?? {};
  const document: Record<string, unknown> = {
    name: server.name,
    upstream,
    ...(server.clientCapabilities === undefined ? {} : { clientCapabilities: server.clientCapabilities }),
    mode: server.mode ?? 'enforce',
    profile: server.profile ?? TRACE_PROFILE,
    onDrift: server.onDrift ?? 'filter',
    ...(server.onBadOutput === 'block' ? { onBadOutput: 'block' } : {}),
    ...validateDocument(server.validate),
    ...(server.alerts === undefined ? {} : { alerts: alertsDocument(server.alerts) }),
    ...(server.auth === undefined ? {} : { auth: server.auth }),
    ...(server.approvedBy === undefined ? {} : { approvedBy: { ...server.approvedBy } }),
    pin: server.trustOnFirstUse === true ? TRUST_ON_FIRST_USE : pinDocument(server.pin),
  };
  const extras = server.extraMembers ?? {};
  const written: Record<string, Record<string, unknown>> = {};
  for (const [key, definition] of Object.entries(definitions))
    written[key] = joinDefinition(definition, Object.hasOwn(extras, key) ? extras[key] : undefined);
  for (const surface of PIN_SURFACES)
    for (const [key, definition] of Object.entries(server[surface.definitions] ?? {}))
      written[key] = surface.restrict(definition);
  if (Object.keys(written).length > 0) document.definitions = sortKeys(written);
  if (server.instructions !== undefined) document.instructions = server.instructions;
  return document;
}

/** A surface's section: its catalog, its items sorted, its overflow entry beyond 500 items. */
function surfaceDocument(surface: SurfacePinConfig): Record<string, unknown> {
  return {
    catalog: surface.catalog,
    items: sortKeys(surface.items),
    ...(surface.overflow === undefined ? {} : { overflow: surface.overflow }),
  };
}

/** The `pin` section: tools, then the other surfaces a pin carries (docs/pin-surfaces.md), keys sorted. */
export function pinDocument(pin: PinConfig): Record<string, unknown> {
  return {
    catalog: pin.catalog,
    tools: sortKeys(pin.tools),
    ...(pin.overflow === undefined ? {} : { overflow: pin.overflow }),
    ...(pin.prompts === undefined ? {} : { prompts: surfaceDocument(pin.prompts) }),
    ...(pin.resourceTemplates === undefined
      ? {}
      : { resourceTemplates: surfaceDocument(pin.resourceTemplates) }),
    ...(pin.instructions === undefined ? {} : { instructions: pin.instructions }),
    ...(pin.artifact === undefined ? {} : { artifact: { ...pin.artifact } }),
  };
}

// A secret read from the environment is written back as the variable's name, never as its value.
function alertsDocument(alerts: AlertsConfig): Record<string, unknown> {
  return {
    webhooks: alerts.webhooks.map((webhook) => ({
      url: webhook.url,
      ...(webhook.secretEnv === undefined ? { secret: webhook.secret } : { secretEnv: webhook.secretEnv }),
      ...(webhook.name === undefined ? {} : { name: webhook.name }),
      events: [...webhook.events],
      ...(webhook.minSeverity === undefined ? {} : { minSeverity: webhook.minSeverity }),
      maxAttempts: webhook.maxAttempts,
      timeoutMs: webhook.timeoutMs,
      queueSize: webhook.queueSize,
    })),
  };
}

function upstreamDocument(upstream: PinFileInput['upstream']): Record<string, unknown> {
  if ('url' in upstream) {
    const headers = upstream.headers ?? {};
    return {
      url: upstream.url,
      ...(Object.keys(headers).length === 0 ? {} : { headers: sortKeys(headers) }),
      transport: upstream.transport ?? 'streamable-http',
    };
  }
  const args = upstream.args ?? [];
  const env = upstream.env ?? {};
  const passEnv = [...new Set(upstream.passEnv ?? [])].sort();
  return {
    command: typeof upstream.command === 'string' ? [upstream.command] : [...upstream.command],
    ...(args.length === 0 ? {} : { args: [...args] }),
    ...(Object.keys(env).length === 0 ? {} : { env: sortKeys(env) }),
    ...(passEnv.length === 0 ? {} : { passEnv }),
    ...(upstream.cwd === undefined ? {} : { cwd: upstream.cwd }),
  };
}

function sortKeys<T>(record: Readonly<Record<string, T>>): Record<string, T> {
  const sorted: Record<string, T> = {};
  for (const key of Object.keys(record).sort()) sorted[key] = record[key] as T;
  return sorted;
}
