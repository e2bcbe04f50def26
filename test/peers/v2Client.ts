import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

export interface V2ClientOptions {
  /**
   * `auto` (default here): probe with `server/discover`, fall back to `initialize` for 2025 servers.
   * `{ pin }`: require that revision. `legacy`: plain 2025 initialize (the v2 SDK's own default).
   */
  negotiation?: 'auto' | 'legacy' | { pin: string };
  /** Extra HTTP headers on every request (e.g. Authorization). */
  headers?: Record<string, string>;
}

/** An SDK v2 Client connected over Streamable HTTP, negotiating 2026-07-28 when the server offers it. */
export async function connectV2Client(url: string, options: V2ClientOptions = {}): Promise<Client> {
  const client = new Client(
    { name: 'toolpin-test-client-v2', version: '2.0.0' },
    { versionNegotiation: { mode: options.negotiation ?? 'auto' } },
  );
  const transport = new StreamableHTTPClientTransport(
    new URL(url),
    options.headers === undefined ? {} : { requestInit: { headers: options.headers } },
  );
  await client.connect(transport);
  return client;
}
