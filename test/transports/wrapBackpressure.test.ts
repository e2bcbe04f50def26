// `toolpin wrap` before a client that reads its stdout slowly: the gateway holds no more than its
// bound of messages for the client, the rest stays in the upstream (a child blocked on its full
// stdout pipe, as it would be without the gateway), and once the client reads, everything arrives
// whole, in order, once. A request in flight while the child is held back is not timed out for
// the client's slowness. In-process wrap (runStdioFront on in-memory stdio) before the raw fixture.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { createLogger, parseServerConfig } from '@toolpin/gateway';
import { runStdioFront } from '@toolpin/gateway/transports';
import { DEFAULT_CLIENT_QUEUE_HIGH_BYTES } from '../../packages/gateway/dist/defaults.js';
import { initializeRequest } from '../support/rawMcp.js';
import { until } from '../support/until.js';
import { RAW_ECHO, rawFixtureCommand, stdioPinFor, type LogLine } from './support.js';

/** Notifications the child floods, and the characters of each one's fill. */
const FLOOD = 256;
const FILL = 64 * 1024;
/** The upstream's silence allowed while a request is in flight (short: the hold outlasts it). */
const IDLE_MS = 300;

type Message = Record<string, unknown> & { id?: unknown; method?: string; params?: Record<string, unknown> };

/** How far the child got in its flood (its own count), once it stops advancing for 400 ms or is done. */
async function floodHeld(log: string): Promise<number> {
  const progress = async (): Promise<number> => Number((await readFile(log, 'utf8').catch(() => '0')) || 0);
  let last = -1;
  let still = 0;
  return until(async () => {
    const now = await progress();
    still = now === last ? still + 1 : 0;
    last = now;
    return now === FLOOD || (now > 0 && still >= 16) ? now : undefined;
  }, 'the flood to stop advancing');
}

describe('wrap before a client that does not read', () => {
  it('holds the upstream back, and a call in flight meanwhile gets its own answer, after every message in order', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'toolpin-backpressure-'));
    const floodLog = join(dir, 'flood');
    const env = { TOOLPIN_RAW_FLOOD: String(FLOOD), TOOLPIN_RAW_FLOOD_LOG: floodLog };
    const server = parseServerConfig(stdioPinFor('flood', rawFixtureCommand(), [RAW_ECHO], env), '(test)');
    const logs: LogLine[] = [];
    const logger = createLogger({
      level: 'debug',
      destination: { write: (line: string) => void logs.push(JSON.parse(line) as LogLine) },
    });
    const input = new PassThrough();
    const output = new PassThrough();
    let received = '';
    output.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
    const messages = (): Message[] =>
      received
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Message);
    const front = await runStdioFront({ server, logger, input, output, streamIdleMs: IDLE_MS });
    const send = (message: object): boolean => input.write(`${JSON.stringify(message)}\n`);
    try {
      send(initializeRequest(1));
      await until(() => (messages().some((m) => m.id === 1) ? true : undefined), 'the initialize answer');
      send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      // The client stops reading wrap's stdout; then a call whose server floods before it answers.
      output.pause();
      const before = messages().length;
      send({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'echo', arguments: { text: 'hi' } },
      });

      const held = await floodHeld(floodLog);
      // What the child got out is what the gateway and the pipes between hold: the gateway's queue
      // (its high-water mark, plus the chunk it was reading) and a few pipe buffers, never the flood.
      const bound = Math.ceil(DEFAULT_CLIENT_QUEUE_HIGH_BYTES / FILL) + 8;
      expect(held).toBeLessThan(FLOOD);
      expect(held).toBeLessThanOrEqual(bound);
      // Held back for longer than the idle limit: the upstream's silence is the client's doing.
      await new Promise((resolve) => setTimeout(resolve, 3 * IDLE_MS));
      expect(logs.filter((line) => line.event === 'upstream.timeout')).toEqual([]);

      output.resume();
      await until(() => (messages().some((m) => m.id === 2) ? true : undefined), 'the call answer');
      const after = messages().slice(before);
      // Whole, in order, once, then the call's own answer (the child wrote them in that order).
      const flood = after.filter((m) => m.method === 'notifications/message' && m.params?.logger === 'flood');
      expect(flood.map((m) => (m.params?.data as { seq: number }).seq)).toEqual([...Array(FLOOD).keys()]);
      expect(flood.every((m) => (m.params?.data as { fill: string }).fill.length === FILL)).toBe(true);
      expect(after.filter((m) => m.id === 2)).toEqual([
        { jsonrpc: '2.0', id: 2, result: { content: [{ type: 'text', text: 'hi' }] } },
      ]);
      expect(after.at(-1)?.id).toBe(2);
      expect(logs.filter((line) => line.event === 'upstream.timeout')).toEqual([]);
    } finally {
      input.end();
      await front.ended;
      await rm(dir, { recursive: true, force: true });
    }
  });
});
