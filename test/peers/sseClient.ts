import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';

/**
 * An SDK v1 Client connected over the deprecated 2024-11-05 HTTP+SSE transport (`url` is the /sse
 * endpoint); `headers` go on its GET and every POST.
 */
export async function connectSseClient(url: string, headers?: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'toolpin-test-client-sse', version: '1.0.0' });
  await client.connect(
    new SSEClientTransport(new URL(url), headers === undefined ? {} : { requestInit: { headers } }),
  );
  return client;
}
