// `toolpin wrap` in-process on in-memory stdio (PassThrough stdin/stdout) before a client that may
// stop reading, and the raw stdio fixture flooding before it answers a call: what the backpressure
// tests and red team 16 share.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { createLogger, parseServerConfig } from '@toolpin/gateway';
import { runStdioFront } from '@toolpin/gateway/transports';
import { initializeRequest } from '../support/rawMcp.js';
import { until, untilStill } from '../support/until.js';
import { RAW_ECHO, rawFixtureCommand, stdioPinFor, type LogLine } from './support.js';

/** One message wrap wrote on stdout, parsed. */
export type Message = Record<string, unknown> & {
  id?: unknown;
  method?: string;
  params?: Record<string, unknown>;
};

/** wrap on in-memory stdio, initialized: the client's side of its pipes. */
export interface WrapOnPipes {
  readonly front: Awaited<ReturnType<typeof runStdioFront>>;
  readonly input: PassThrough;
  /** wrap's stdout: `output.pause()` is a client that stops reading. */
  readonly output: PassThrough;
  /** Every message wrap wrote so far (parsed as each line completes: a flood is thousands of lines). */
  messages(): Message[];
  /** Every log line so far (debug level). */
  readonly logs: LogLine[];
  /** Writes one message as a line on wrap's stdin. */
  send(message: object): boolean;
  /** Resolves once some message under `id` arrived. */
  answered(id: number): Promise<true>;
}

/** Starts wrap before `server` on in-memory stdio, and initializes the session (id 1). */
export async function wrapOnPipes(
  server: ReturnType<typeof parseServerConfig>,
  options: { readonly streamIdleMs?: number } = {},
): Promise<WrapOnPipes> {
  const logs: LogLine[] = [];
  const logger = createLogger({
    level: 'debug',
    destination: { write: (line: string) => void logs.push(JSON.parse(line) as LogLine) },
  });
  const input = new PassThrough();
  const output = new PassThrough();
  const received: Message[] = [];
  let partial = '';
  output.on('data', (chunk: Buffer) => {
    const lines = (partial + chunk.toString('utf8')).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) received.push(JSON.parse(line) as Message);
  });
  const front = await runStdioFront({ server, logger, input, output, ...options });
  const wrap: WrapOnPipes = {
    front,
    input,
    output,
    logs,
    messages: () => received,
    send: (message) => input.write(`${JSON.stringify(message)}\n`),
    answered: (id) =>
      until(() => (received.some((m) => m.id === id) ? true : undefined), `an answer to ${id}`),
  };
  wrap.send(initializeRequest(1));
  await wrap.answered(1);
  wrap.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  return wrap;
}

/** How far the upstream got in its flood (its own count), once it stops advancing for 400 ms or is done. */
export function floodHeld(progress: () => Promise<number>, count: number): Promise<number> {
  return untilStill(progress, 16, 'the flood to stop advancing', {
    final: (now) => now === count,
    ready: (now) => now > 0,
  });
}

/** The raw stdio fixture whose echo call first floods `count` notifications of `fill` characters. */
export interface FloodingChild {
  readonly server: ReturnType<typeof parseServerConfig>;
  /** How many notifications its stdout took so far (its own count). */
  progress(): Promise<number>;
  /** Removes its folder. */
  remove(): Promise<void>;
}

export async function floodingChild(
  count: number,
  fill: number,
  extraEnv: Readonly<Record<string, string>> = {},
): Promise<FloodingChild> {
  const dir = await mkdtemp(join(tmpdir(), 'toolpin-backpressure-'));
  const log = join(dir, 'flood');
  const env = {
    TOOLPIN_RAW_FLOOD: String(count),
    TOOLPIN_RAW_FLOOD_BYTES: String(fill),
    TOOLPIN_RAW_FLOOD_LOG: log,
    ...extraEnv,
  };
  return {
    server: parseServerConfig(stdioPinFor('flood', rawFixtureCommand(), [RAW_ECHO], env), '(test)'),
    progress: async () => Number((await readFile(log, 'utf8').catch(() => '0')) || 0),
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}

/** The flood's own notifications among `messages`. */
export function floodOf(messages: readonly Message[]): Message[] {
  return messages.filter((m) => m.method === 'notifications/message' && m.params?.logger === 'flood');
}
