import { startGatewayHarness, type GatewayHarness } from '../../support/gatewayHarness.js';
import { useScoped } from '../../support/useScoped.js';
import { pinFor, withSurfaces, type ServedSurfaces } from '../../support/pinFor.js';
import { initializeRequest } from '../../support/rawMcp.js';
import {
  answerJson,
  startMaliciousUpstream,
  type MaliciousUpstream,
  type MaliciousUpstreamOptions,
} from './maliciousUpstream.js';
import { exchangeRaw, headerOf, rawPost, type RawResponse } from './rawClient.js';
import { PINNED_TOOLS } from './tools.js';

/** The server name the adversarial pins use. */
export const SERVER = 'mal';

/** An upstream and a gateway pinning `[echo]` for it at `/mal/mcp`. */
export interface RigOf<U> {
  readonly upstream: U;
  readonly gateway: GatewayHarness;
  /** The gateway's `/mal/mcp`. */
  readonly endpoint: string;
  close(): Promise<void>;
}

/** A malicious upstream and a gateway pinning `[echo]` for it at `/mal/mcp`. */
export type Rig = RigOf<MaliciousUpstream>;

/** Options of {@link startRig}. */
export interface RigOptions {
  readonly upstream?: MaliciousUpstreamOptions;
  /** Merged into the gateway file (e.g. `limits`). */
  readonly gateway?: Record<string, unknown>;
  /** Merged into the pin file. */
  readonly pin?: Record<string, unknown>;
  /** What the pin also pins besides {@link PINNED_TOOLS} (prompts, templates, instructions). */
  readonly surfaces?: ServedSurfaces;
}

/** Starts the upstream, then a gateway in-process whose pin approves exactly {@link PINNED_TOOLS}. */
export async function startRig(options: RigOptions = {}): Promise<Rig> {
  return rigAround(await startMaliciousUpstream(options.upstream), options);
}

/**
 * A gateway in-process in front of an upstream already started (any kind: a raw node:net one too),
 * its pin approving exactly {@link PINNED_TOOLS}; the upstream is closed if the gateway fails to start.
 */
export async function rigAround<U extends { readonly url: string; close(): Promise<void> }>(
  upstream: U,
  options: Omit<RigOptions, 'upstream'> = {},
): Promise<RigOf<U>> {
  let gateway: GatewayHarness;
  try {
    const pin = pinFor(SERVER, upstream.url, PINNED_TOOLS);
    const pinned = options.surfaces === undefined ? pin : withSurfaces(pin, options.surfaces);
    gateway = await startGatewayHarness([{ ...pinned, ...options.pin }], options.gateway);
  } catch (error) {
    await upstream.close();
    throw error;
  }
  return {
    upstream,
    gateway,
    endpoint: `${gateway.url}/${SERVER}/mcp`,
    close: async () => {
      await gateway.close();
      await upstream.close();
    },
  };
}

/** A complete response and every byte of the connection it came on. */
export type RawReply = RawResponse & { received: string };

/** POSTs one JSON-RPC value (or exact text) with a correct Content-Length and these header lines. */
export function postJson(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
  waitMs?: number,
): Promise<RawReply> {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return exchangeRaw(url, rawPost(url, text, Object.entries(headers)), waitMs);
}

/** Opens a 2025-06-18 session over the raw client; returns the headers its later requests carry. */
export async function openSession(url: string): Promise<Record<string, string>> {
  const reply = await postJson(url, initializeRequest('init-1'));
  if (reply.status !== 200) throw new Error(`initialize answered HTTP ${reply.status}: ${reply.body}`);
  const headers: Record<string, string> = { 'Mcp-Protocol-Version': '2025-06-18' };
  const session = headerOf(reply, 'mcp-session-id');
  if (session !== undefined) headers['Mcp-Session-Id'] = session;
  const initialized = await postJson(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers);
  if (initialized.status !== 202)
    throw new Error(`notifications/initialized answered HTTP ${initialized.status}`);
  return headers;
}

/** A tools/list request. */
export function listRequest(id: string | number): Record<string, unknown> {
  return { jsonrpc: '2.0', id, method: 'tools/list' };
}

/** A rig with the MCP session it opened (the headers a request of that session carries). */
export interface SessionRig extends Rig {
  readonly session: Record<string, string>;
}

/** A describe's rig ({@link startRig}), started once and closed after its tests (useScoped). */
export function useRig(options: RigOptions = {}): Rig {
  return useScoped(() => startRig(options));
}

/** {@link useRig} with an MCP session opened on the gateway once the rig is up. */
export function useSessionRig(options: RigOptions = {}): SessionRig {
  return useScoped(async () => {
    const rig = await startRig(options);
    try {
      return { ...rig, session: await openSession(rig.endpoint) };
    } catch (error) {
      await rig.close();
      throw error;
    }
  });
}

/**
 * A describe's sessionless rig ({@link useRig}) whose pin approves exactly `tools` (not
 * {@link PINNED_TOOLS}) and whose upstream lists exactly them: reset before each test.
 */
export function useCatalogRig(tools: readonly Record<string, unknown>[]): Rig {
  const pin = pinFor(SERVER, 'http://127.0.0.1:9/mcp', tools);
  const rig = useRig({ upstream: { sessions: false }, pin: { pin: pin.pin, definitions: pin.definitions } });
  beforeEach(() => {
    rig.upstream.reset();
    rig.upstream.behaviour = ({ res, message }) => {
      if (message.method !== 'tools/list') return false;
      answerJson(res, { jsonrpc: '2.0', id: message.id ?? null, result: { tools } });
      return true;
    };
  });
  return rig;
}
