import { PassThrough } from 'node:stream';
import { StdioFrontTransport } from '../../src/ingress/stdioFrontTransport.js';
import { createLogger } from '../../src/observe/logger.js';

interface Side {
  readonly input: PassThrough;
  readonly received: unknown[];
  readonly written: () => unknown[];
  readonly logs: Record<string, unknown>[];
  readonly transport: StdioFrontTransport;
}

async function side(maxLineBytes?: number): Promise<Side> {
  const input = new PassThrough();
  const output = new PassThrough();
  let text = '';
  output.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  const logs: Record<string, unknown>[] = [];
  const logger = createLogger({
    destination: { write: (line: string) => logs.push(JSON.parse(line) as Record<string, unknown>) },
  });
  const transport = new StdioFrontTransport({
    input,
    output,
    logger,
    fields: { server: 'unit' },
    ...(maxLineBytes === undefined ? {} : { maxLineBytes }),
  });
  const received: unknown[] = [];
  transport.onmessage = (message) => received.push(message);
  await transport.start();
  const written = (): unknown[] =>
    text
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as unknown);
  return { input, received, written, logs, transport };
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('StdioFrontTransport (wrap’s stdin and stdout)', () => {
  it('hands on the message’s own envelope: a member beside JSON-RPC’s is left behind', async () => {
    const s = await side();
    s.input.write('{"jsonrpc":"2.0","id":1,"method":"tools/list","decoy":{"method":"tools/call"}}\r\n');
    s.input.write('{"jsonrpc":"2.0","id":"r","result":{"roots":[]},"extra":true}\n');
    await tick();
    expect(s.received).toEqual([
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      { jsonrpc: '2.0', id: 'r', result: { roots: [] } },
    ]);
    expect(s.written()).toEqual([]);
  });

  it('answers a refused line itself and logs it without its content', async () => {
    const s = await side(100);
    s.input.write('{"secret":\n');
    s.input.write(
      '[{"jsonrpc":"2.0","id":7,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/x"}]\n',
    );
    s.input.write(`{"jsonrpc":"2.0","id":8,"method":"ping","params":{"pad":"${'x'.repeat(120)}"}}\n`);
    s.input.write('{"jsonrpc":"2.0","id":9,"method":"ping"}\n');
    await tick();
    expect(s.written()).toEqual([
      { jsonrpc: '2.0', id: null, error: expect.objectContaining({ code: -32700 }) },
      [{ jsonrpc: '2.0', id: 7, error: expect.objectContaining({ code: -32600 }) }],
      { jsonrpc: '2.0', id: null, error: expect.objectContaining({ code: -32600 }) },
    ]);
    expect(s.received).toEqual([{ jsonrpc: '2.0', id: 9, method: 'ping' }]);
    expect(s.logs.map((line) => line.reason)).toEqual(['malformed', 'batch', 'too_large']);
    expect(JSON.stringify(s.logs)).not.toContain('secret');
  });

  it('reads nothing more once closed', async () => {
    const s = await side();
    let closed = 0;
    s.transport.onclose = () => closed++;
    await s.transport.close();
    await s.transport.close();
    s.input.write('{"jsonrpc":"2.0","id":1,"method":"ping"}\n');
    await tick();
    expect(closed).toBe(1);
    expect(s.received).toEqual([]);
  });
});
