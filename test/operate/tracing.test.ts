import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { PassThrough } from 'node:stream';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as StreamableHTTPClientTransportV2,
} from '@modelcontextprotocol/client';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import {
  connectV1Client,
  defaultTools,
  startLegacySseServer,
  startV1Server,
  type PeerHandle,
} from '../peers/index.js';
import { startGatewayHarness, type GatewayHarness } from '../support/gatewayHarness.js';
import { pinFor } from '../support/pinFor.js';
import { fixtureCommand, stdioPinFor } from '../transports/support.js';
import { createLogger, parseServerConfig } from '@toolpin/gateway';
import { runStdioFront } from '@toolpin/gateway/transports';
import { rejectionOf } from '../support/rejection.js';

// One gateway with tracing on (its `telemetry` block), exporting over OTLP/HTTP to a receiver in
// this process, in front of a real Streamable HTTP server (proxied) and a real HTTP+SSE server
// (bridged): the spans and attributes of docs/telemetry.md, and the traceparent the upstreams saw.

/** One span as OTLP/JSON carries it (the fields read here). */
interface OtlpSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId?: string;
  readonly name: string;
  readonly kind: number;
  readonly status?: { readonly code?: number };
  readonly attributes: readonly { key: string; value: Record<string, unknown> }[];
}

const SPAN_KIND_INTERNAL = 1;
const SPAN_KIND_SERVER = 2;
const STATUS_ERROR = 2;

/** An OTLP/HTTP receiver on 127.0.0.1: every span of every JSON export, and the service names seen. */
class OtlpReceiver {
  readonly spans: OtlpSpan[] = [];
  readonly services = new Set<string>();
  readonly #server: Server;
  #arrived: (() => void) | undefined;

  constructor() {
    this.#server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        this.#receive(req.url ?? '', req.headers['content-type'], Buffer.concat(chunks).toString('utf8'));
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
  }

  async listen(): Promise<string> {
    this.#server.listen(0, '127.0.0.1');
    await once(this.#server, 'listening');
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/v1/traces`;
  }

  #receive(url: string, type: string | undefined, body: string): void {
    if (url !== '/v1/traces' || type !== 'application/json') return;
    const data = JSON.parse(body) as {
      resourceSpans: {
        resource: { attributes: OtlpSpan['attributes'] };
        scopeSpans: { spans: OtlpSpan[] }[];
      }[];
    };
    for (const resource of data.resourceSpans) {
      const service = attributeOf({ attributes: resource.resource.attributes } as OtlpSpan, 'service.name');
      if (typeof service === 'string') this.services.add(service);
      for (const scope of resource.scopeSpans) this.spans.push(...scope.spans);
    }
    this.#arrived?.();
  }

  /** Waits (on exports, never on a clock) until `find` finds what it looks for; bounded by the test timeout. */
  async waitFor<T>(find: (spans: readonly OtlpSpan[]) => T | undefined): Promise<T> {
    for (;;) {
      const found = find(this.spans);
      if (found !== undefined) return found;
      await new Promise<void>((resolve) => (this.#arrived = resolve));
    }
  }

  /** The first span of this name (and, when given, this `toolpin.*` attribute value), once exported. */
  span(name: string, attribute?: readonly [string, string]): Promise<OtlpSpan> {
    return this.waitFor((spans) =>
      spans.find(
        (span) =>
          span.name === name && (attribute === undefined || attributeOf(span, attribute[0]) === attribute[1]),
      ),
    );
  }

  /** The first decision span under `request`, once exported. */
  decisionUnder(request: OtlpSpan): Promise<OtlpSpan> {
    return this.waitFor((spans) =>
      spans.find((span) => span.name === 'toolpin.decision' && span.parentSpanId === request.spanId),
    );
  }

  close(): Promise<void> {
    // The exporter keeps its connection alive: close it rather than wait for it to idle out.
    this.#server.closeAllConnections();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}

function attributeOf(span: OtlpSpan, key: string): unknown {
  const value = span.attributes.find((attribute) => attribute.key === key)?.value;
  if (value === undefined) return undefined;
  return value.stringValue ?? value.intValue ?? value.boolValue ?? value.doubleValue;
}

/** The attributes of a span as a plain object (what the docs list). */
function attributesOf(span: OtlpSpan): Record<string, unknown> {
  return Object.fromEntries(
    span.attributes.map((attribute) => [attribute.key, attributeOf(span, attribute.key)]),
  );
}

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CLIENT_SPAN_ID = '00f067aa0ba902b7';
const STDIO_CLIENT_SPAN_ID = 'a1b2c3d4e5f60718';
const SECRET_ARGUMENT = 'argument-that-must-not-be-traced';

// A tool with an outputSchema: its result is checked against the pin (onBadOutput: flag).
const WEATHER = {
  name: 'weather',
  description: 'The temperature, as structured content.',
  inputSchema: { type: 'object' as const, properties: { structured: { type: 'object' } } },
  outputSchema: {
    type: 'object' as const,
    properties: { temp: { type: 'number' } },
    required: ['temp'],
  },
};

// `add` is pinned with another description than the upstream serves: its calls are refused (drift).
const PINNED_TOOLS = [...defaultTools(), WEATHER].map((tool) =>
  tool.name === 'add' ? { ...tool, description: 'Adds two numbers.' } : tool,
);

describe('OpenTelemetry traces (telemetry block, OTLP/HTTP)', () => {
  const receiver = new OtlpReceiver();
  let proxied: PeerHandle;
  let legacy: PeerHandle;
  let gateway: GatewayHarness;
  let client: Client;
  let bridgedClient: Client;
  const scheduleDelay = process.env.OTEL_BSP_SCHEDULE_DELAY;

  beforeAll(async () => {
    // Spans are exported 20 ms after they end rather than 5 s: the test waits on exports.
    process.env.OTEL_BSP_SCHEDULE_DELAY = '20';
    const endpoint = await receiver.listen();
    proxied = await startV1Server({ mode: 'stateful-sse', tools: [...defaultTools(), WEATHER] });
    legacy = await startLegacySseServer();
    gateway = await startGatewayHarness(
      [
        pinFor('traced', proxied.url, PINNED_TOOLS),
        { ...pinFor('bridged', legacy.url, defaultTools()), upstream: { url: legacy.url, transport: 'sse' } },
      ],
      { telemetry: { traces: 'otlp', endpoint, serviceName: 'toolpin-under-test' } },
    );
    const headers = { traceparent: `00-${TRACE_ID}-${CLIENT_SPAN_ID}-01` };
    client = await connectV1Client(`${gateway.url}/traced/mcp`, { headers });
    bridgedClient = await connectV1Client(`${gateway.url}/bridged/mcp`, { headers });
  });

  afterAll(async () => {
    await client?.close();
    await bridgedClient?.close();
    await gateway?.close();
    await proxied?.close();
    await legacy?.close();
    await receiver.close();
    if (scheduleDelay === undefined) delete process.env.OTEL_BSP_SCHEDULE_DELAY;
    else process.env.OTEL_BSP_SCHEDULE_DELAY = scheduleDelay;
  });

  it('traces an allowed call as a child of the client traceparent, its decision under it, and the upstream sees the gateway span', async () => {
    await client.callTool({ name: 'echo', arguments: { text: SECRET_ARGUMENT } });
    const request = await receiver.span('tools/call echo');
    expect(request).toMatchObject({
      traceId: TRACE_ID,
      parentSpanId: CLIENT_SPAN_ID,
      kind: SPAN_KIND_SERVER,
    });
    expect(attributesOf(request)).toEqual({
      'mcp.method.name': 'tools/call',
      'jsonrpc.request.id': expect.any(String),
      'network.transport': 'tcp',
      'gen_ai.tool.name': 'echo',
      'gen_ai.operation.name': 'execute_tool',
      'toolpin.server': 'traced',
      'toolpin.front': 'streamable-http',
    });
    const decision = await receiver.decisionUnder(request);
    expect(decision).toMatchObject({ traceId: TRACE_ID, kind: SPAN_KIND_INTERNAL });
    expect(attributesOf(decision)).toEqual({
      'toolpin.server': 'traced',
      'toolpin.tool': 'echo',
      'toolpin.stage': 'call',
      'toolpin.decision': 'allow',
    });
    // The upstream got the call, and the listing the gateway made first (fetch on miss), under the gateway's span.
    const seen = `00-${TRACE_ID}-${request.spanId}-01`;
    const call = proxied.requests.find((entry) => entry.method === 'tools/call');
    expect(call?.headers.traceparent).toBe(seen);
    const listing = proxied.requests.find(
      (entry) =>
        entry.method === 'tools/list' && typeof entry.id === 'string' && entry.id.startsWith('toolpin-'),
    );
    expect(listing?.headers.traceparent).toBe(seen);
    expect(receiver.services).toEqual(new Set(['toolpin-under-test']));
    // Arguments are never traced.
    expect(JSON.stringify(receiver.spans)).not.toContain(SECRET_ARGUMENT);
  });

  it('traces a refused call: deny with its reason and severity, the request span an error with -32040', async () => {
    const refusal = await rejectionOf(client.callTool({ name: 'add', arguments: { a: 1, b: 2 } }), McpError);
    expect(refusal.code).toBe(-32040);
    const data = refusal.data as { reason: string; severity: string };
    expect(data.reason).toBe('tool_drifted');
    const request = await receiver.span('tools/call add');
    expect(request.status?.code).toBe(STATUS_ERROR);
    expect(attributesOf(request)).toMatchObject({
      'error.type': '-32040',
      'rpc.response.status_code': '-32040',
    });
    const decision = await receiver.decisionUnder(request);
    expect(attributesOf(decision)).toEqual({
      'toolpin.server': 'traced',
      'toolpin.tool': 'add',
      'toolpin.stage': 'call',
      'toolpin.decision': 'deny',
      'toolpin.reason': 'tool_drifted',
      'toolpin.severity': data.severity,
    });
    expect(proxied.callCount('add')).toBe(0);
  });

  it('traces the check of a result against its pinned outputSchema as a result-stage decision', async () => {
    await client.callTool({ name: 'weather', arguments: { structured: { temp: 'hot' } } });
    const request = await receiver.span('tools/call weather');
    const decisions = await receiver.waitFor((spans) => {
      const found = spans.filter(
        (span) => span.name === 'toolpin.decision' && span.parentSpanId === request.spanId,
      );
      return found.length === 2 ? found : undefined;
    });
    expect(decisions.map(attributesOf)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ 'toolpin.stage': 'call', 'toolpin.decision': 'allow' }),
        {
          'toolpin.server': 'traced',
          'toolpin.tool': 'weather',
          'toolpin.stage': 'result',
          'toolpin.decision': 'flag',
          'toolpin.reason': 'output_invalid',
        },
      ]),
    );
  });

  it('traces a bridged request (HTTP+SSE upstream): the span under the client traceparent, its traceparent on the upstream POST', async () => {
    await bridgedClient.callTool({ name: 'echo', arguments: { text: 'hi' } });
    const request = await receiver.span('tools/call echo', ['toolpin.server', 'bridged']);
    expect(request).toMatchObject({
      traceId: TRACE_ID,
      parentSpanId: CLIENT_SPAN_ID,
      kind: SPAN_KIND_SERVER,
    });
    expect(attributeOf(request, 'toolpin.front')).toBe('streamable-http');
    const call = legacy.requests.find((entry) => entry.method === 'tools/call');
    expect(call?.headers.traceparent).toBe(`00-${TRACE_ID}-${request.spanId}-01`);
    expect(legacy.callCount('echo')).toBe(1);
  });

  it('traces a 2026-07-28 request on a bridged route (stateless front) under the client traceparent, with its decision', async () => {
    const v2 = new ClientV2(
      { name: 'tracing-test-v2', version: '1.0.0' },
      { versionNegotiation: { mode: 'auto' } },
    );
    await v2.connect(
      new StreamableHTTPClientTransportV2(new URL(`${gateway.url}/bridged/mcp`), {
        requestInit: { headers: { traceparent: `00-${TRACE_ID}-${CLIENT_SPAN_ID}-01` } },
      }),
    );
    try {
      await v2.callTool({ name: 'add', arguments: { a: 1, b: 2 } });
    } finally {
      await v2.close();
    }
    const request = await receiver.span('tools/call add', ['toolpin.front', 'stateless']);
    expect(request).toMatchObject({
      traceId: TRACE_ID,
      parentSpanId: CLIENT_SPAN_ID,
      kind: SPAN_KIND_SERVER,
    });
    expect(attributeOf(request, 'toolpin.server')).toBe('bridged');
    const decision = await receiver.decisionUnder(request);
    expect(attributeOf(decision, 'toolpin.decision')).toBe('allow');
    const call = legacy.requests.find(
      (entry) => entry.method === 'tools/call' && entry.headers.traceparent?.includes(request.spanId),
    );
    expect(call?.headers.traceparent).toBe(`00-${TRACE_ID}-${request.spanId}-01`);
  });

  it('traces a stdio front request (wrap) as a child of the traceparent in its params._meta', async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    const answers = new Map<unknown, Record<string, unknown>>();
    const answered = new Set<() => void>();
    let partial = '';
    output.on('data', (chunk: Buffer) => {
      const lines = (partial + chunk.toString('utf8')).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        const message = JSON.parse(line) as Record<string, unknown>;
        if ('id' in message) answers.set(message.id, message);
      }
      for (const wake of answered) wake();
    });
    const answerTo = async (id: number): Promise<Record<string, unknown>> => {
      for (;;) {
        const found = answers.get(id);
        if (found !== undefined) return found;
        await new Promise<void>((resolve) => answered.add(resolve));
      }
    };
    const server = parseServerConfig(stdioPinFor('wrapped', fixtureCommand(), defaultTools()), '(test)');
    const front = await runStdioFront({ server, logger: createLogger({ level: 'silent' }), input, output });
    const meta = { traceparent: `00-${TRACE_ID}-${STDIO_CLIENT_SPAN_ID}-01` };
    const send = (message: object): boolean => input.write(`${JSON.stringify(message)}\n`);
    try {
      send({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      });
      await answerTo(1);
      send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      send({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'echo', arguments: { text: 'hi' }, _meta: meta },
      });
      const answer = await answerTo(2);
      const request = await receiver.span('tools/call echo', ['toolpin.front', 'stdio']);
      expect(request).toMatchObject({
        traceId: TRACE_ID,
        parentSpanId: STDIO_CLIENT_SPAN_ID,
        kind: SPAN_KIND_SERVER,
      });
      expect(attributesOf(request)).toMatchObject({
        'network.transport': 'pipe',
        'toolpin.server': 'wrapped',
      });
      const decision = await receiver.decisionUnder(request);
      expect(attributeOf(decision, 'toolpin.decision')).toBe('error' in answer ? 'deny' : 'allow');
    } finally {
      await front.close();
    }
  });

  it('carries only attributes docs/telemetry.md lists, and spans only of the names it gives', () => {
    const page = readFileSync(new URL('../../docs/telemetry.md', import.meta.url), 'utf8');
    const documented = new Set([...page.matchAll(/^\| `([a-z_.]+)` +\|/gm)].map((match) => match[1]));
    expect(documented.size).toBeGreaterThan(10);
    const carried = new Set(
      receiver.spans.flatMap((span) => span.attributes.map((attribute) => attribute.key)),
    );
    expect([...carried].filter((key) => !documented.has(key))).toEqual([]);
    const names = new Set(receiver.spans.map((span) => span.name));
    expect([...names].filter((name) => !/^(?:toolpin\.decision|[a-z/]+(?: [a-z_]+)?)$/.test(name))).toEqual(
      [],
    );
  });
});
