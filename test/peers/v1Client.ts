import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { ClientCapabilities } from '@modelcontextprotocol/sdk/types.js';

export interface V1ClientOptions {
  /** Extra HTTP headers on every request (e.g. Authorization). */
  headers?: Record<string, string>;
  capabilities?: ClientCapabilities;
}

/** An SDK v1 Client connected over Streamable HTTP (initialize handshake done). */
export async function connectV1Client(url: string, options: V1ClientOptions = {}): Promise<Client> {
  const client = new Client(
    { name: 'toolpin-test-client-v1', version: '1.0.0' },
    options.capabilities === undefined ? {} : { capabilities: options.capabilities },
  );
  const transport = new StreamableHTTPClientTransport(
    new URL(url),
    options.headers === undefined ? {} : { requestInit: { headers: options.headers } },
  );
  await client.connect(transport);
  return client;
}
