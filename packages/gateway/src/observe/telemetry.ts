/** Why an SSE stream to a client is open: a long-lived listening stream, or the answer to a request. */
export type StreamKind = 'listen' | 'response';

/** An SSE stream the gateway relays to a client, as seen by metrics and by shutdown. */
export interface OpenStream {
  readonly server: string;
  /**
   * `listen`: a GET stream or a 2026-07-28 `subscriptions/listen` (nothing is in flight on it, so
   * shutdown ends it at once); `response`: a POST answered as SSE (shutdown lets it finish).
   */
  readonly kind: StreamKind;
  /** Ends the stream cleanly: the client sees the end of the body, the upstream stream is dropped. */
  end(): void;
}

/** One contact with an upstream: a proxied exchange or a gateway-initiated listing (fetch on miss). */
export interface UpstreamContact {
  readonly via: 'proxy' | 'fetch';
  /** The HTTP status, absent when the upstream could not be reached. */
  readonly status?: number;
  /** Why the upstream could not be reached (never carries credentials). */
  readonly error?: string;
  /** Time to the upstream's response headers, or to the failure. */
  readonly seconds: number;
}

/**
 * Hooks the request path calls for what alert events do not carry: request counts, allowed calls,
 * upstream latency and contacts, open streams. Every hook must be cheap and must not throw.
 */
export interface GatewayTelemetry {
  /** A client message with a method (request or notification), or `GET` / `DELETE` on the endpoint. */
  onRequest(server: string, method: string): void;
  /**
   * A tools/call (prompts/get) of the item `name` the policy allowed without finding (blocked and
   * flagged calls arrive as alerts).
   */
  onCallAllowed(server: string, name: string): void;
  /** The upstream answered (or failed to). */
  onUpstreamContact(server: string, contact: UpstreamContact): void;
  /** An SSE stream to a client opened; the returned function is called once when it closes. */
  onStreamOpened(stream: OpenStream): () => void;
}

/** Telemetry that records nothing (embedding without observability). */
export const noTelemetry: GatewayTelemetry = Object.freeze({
  onRequest: () => undefined,
  onCallAllowed: () => undefined,
  onUpstreamContact: () => undefined,
  onStreamOpened: () => () => undefined,
});

/**
 * Runs a gateway-initiated upstream listing (fetch on miss) and reports it as a contact: its
 * latency, and its status (200, the HTTP status an error carries in `data.status`, or the failure).
 */
export async function reportContact<T>(
  telemetry: GatewayTelemetry,
  server: string,
  work: () => Promise<T>,
): Promise<T> {
  const started = performance.now();
  try {
    const result = await work();
    telemetry.onUpstreamContact(server, {
      via: 'fetch',
      status: 200,
      seconds: (performance.now() - started) / 1000,
    });
    return result;
  } catch (error) {
    const status = (error as { data?: { status?: unknown } }).data?.status;
    const seconds = (performance.now() - started) / 1000;
    telemetry.onUpstreamContact(
      server,
      typeof status === 'number'
        ? { via: 'fetch', status, seconds }
        : { via: 'fetch', error: (error as Error).message, seconds },
    );
    throw error;
  }
}
