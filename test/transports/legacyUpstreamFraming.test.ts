import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { startGatewayHarness, type GatewayHarness } from '../support/gatewayHarness.js';
import { pinFor } from '../support/pinFor.js';
import { callRequest, openRawSession, postRaw } from '../support/rawMcp.js';
import { startRawLegacyUpstream, type RawUpstream } from '../support/rawUpstream.js';
import { RAW_DRIFTED_ECHO, RAW_ECHO } from './support.js';

// A raw 2024-11-05 HTTP+SSE upstream (node:http, exact bytes) behind a bridged route: its answers
// reach the bridge through the gateway's own HTTP+SSE client, and every one is checked there. An
// answer the SDK's client would drop in its schema (losing the id it answers) is refused under that
// id; framing that still parses as JSON (data starting with a space or a tab) is inspected like
// any other answer, so the drifted tool it carries is hidden.

const ECHO = RAW_ECHO;
const DRIFTED = RAW_DRIFTED_ECHO;

/** How the raw upstream frames its tools/list answer. */
type Framing = 'error-null' | 'leading-space' | 'leading-tab' | 'clean';

/** The SSE event (exact text) carrying the listing for request `id`. */
function listingEvent(framing: Framing, id: unknown): string {
  const idText = JSON.stringify(id);
  const tools = JSON.stringify(framing === 'clean' ? [ECHO] : [DRIFTED]);
  switch (framing) {
    case 'error-null':
      return `event: message\ndata: {"jsonrpc":"2.0","id":${idText},"result":{"tools":${tools}},"error":null}\n\n`;
    case 'leading-space':
      // "data:" and two spaces: the SSE parser strips one, the data starts with the other.
      return `event: message\ndata:  {"jsonrpc":"2.0","id":${idText},"result":{"tools":${tools}}}\n\n`;
    case 'leading-tab':
      return `event: message\ndata:\t{"jsonrpc":"2.0","id":${idText},"result":{"tools":${tools}}}\n\n`;
    default:
      return `event: message\ndata: {"jsonrpc":"2.0","id":${idText},"result":{"tools":${tools}}}\n\n`;
  }
}

/** A raw HTTP+SSE server answering initialize, tools/list (framed as `framing` says) and tools/call. */
function startFramingUpstream(framing: () => Framing): Promise<RawUpstream> {
  return startRawLegacyUpstream((message, stream) => {
    const id = JSON.stringify(message.id);
    if (message.method === 'initialize')
      stream.write(
        `event: message\ndata: {"jsonrpc":"2.0","id":${id},"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"raw-legacy","version":"1.0.0"}}}\n\n`,
      );
    else if (message.method === 'tools/list') stream.write(listingEvent(framing(), message.id));
    else if (message.method === 'tools/call')
      stream.write(
        `event: message\ndata: {"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"text","text":"executed"}]}}\n\n`,
      );
  });
}

function errorOf(message: unknown): { code?: number; data?: Record<string, unknown> } | undefined {
  return (message as { error?: { code?: number; data?: Record<string, unknown> } }).error;
}

function toolNames(message: unknown): string[] {
  const tools = (message as { result?: { tools?: { name: string }[] } }).result?.tools ?? [];
  return tools.map((tool) => tool.name);
}

describe('a raw legacy HTTP+SSE upstream behind a bridged route', () => {
  let framing: Framing;
  let upstream: RawUpstream;
  let gateway: GatewayHarness;
  let url: string;

  beforeAll(async () => {
    upstream = await startFramingUpstream(() => framing);
    gateway = await startGatewayHarness([
      { ...pinFor('legacy', upstream.url, [ECHO]), upstream: { url: upstream.url, transport: 'sse' } },
    ]);
    url = `${gateway.url}/legacy/mcp`;
  });

  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
  });

  it('lists and calls the pinned tool when the upstream frames cleanly (the baseline)', async () => {
    framing = 'clean';
    const session = await openRawSession(url);
    const listed = await postRaw(url, { jsonrpc: '2.0', id: 'list', method: 'tools/list' }, session);
    expect(toolNames(listed.messages[0])).toEqual(['echo']);
    const called = await postRaw(url, callRequest('call', 'echo', { text: 'x' }), session);
    expect(called.messages[0]).toMatchObject({ result: { content: [{ type: 'text', text: 'executed' }] } });
  });

  it('refuses a listing with "error": null beside its result: -32042 under its id, nothing of it relayed', async () => {
    framing = 'error-null';
    const session = await openRawSession(url);
    const listed = await postRaw(url, { jsonrpc: '2.0', id: 'list', method: 'tools/list' }, session);
    expect(listed.text).not.toContain('id_rsa');
    expect(listed.messages).toHaveLength(1);
    expect(listed.messages[0]).toMatchObject({ id: 'list' });
    expect(errorOf(listed.messages[0])).toMatchObject({
      code: -32042,
      data: { reason: 'invalid_message', server: 'legacy' },
    });
    expect(gateway.events('upstream.invalid_message')).toContainEqual(
      expect.objectContaining({
        reason: 'invalid_message',
        problem: 'a response needs exactly one of result and error',
        answered: true,
      }),
    );
  });

  it('refuses the same listing to a 2026-07-28 client (shared upstream)', async () => {
    framing = 'error-null';
    const client = new Client(
      { name: 'toolpin-legacy-framing', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    try {
      const failure = await client.listTools().then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(failure).toMatchObject({ code: -32042, data: { reason: 'invalid_message' } });
    } finally {
      await client.close();
    }
  });

  it.each<Framing>(['leading-space', 'leading-tab'])(
    'inspects a listing whose SSE data starts with whitespace (%s): the drifted tool is hidden',
    async (kind) => {
      framing = kind;
      const session = await openRawSession(url);
      const listed = await postRaw(url, { jsonrpc: '2.0', id: 'list', method: 'tools/list' }, session);
      expect(listed.text).not.toContain('id_rsa');
      expect(listed.messages[0]).toMatchObject({ id: 'list', result: { tools: [] } });
      const called = await postRaw(url, callRequest('call', 'echo', { text: 'x' }), session);
      expect(errorOf(called.messages[0])).toMatchObject({ code: -32040, data: { reason: 'tool_drifted' } });
    },
  );
});
