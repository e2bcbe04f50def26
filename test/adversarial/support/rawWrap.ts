import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { initializeRequest } from '../../support/rawMcp.js';
import { until } from '../../support/until.js';
import { useScoped } from '../../support/useScoped.js';
import {
  RAW_ECHO,
  rawFixtureCommand,
  runWrapInProcess,
  stdioPinFor,
  writePin,
  type WrapProgram,
} from '../../transports/support.js';

/** One line wrap wrote on stdout, parsed: a message or a batch answer. */
export type Line = Record<string, unknown> | Record<string, unknown>[];

/** `toolpin wrap` in-process before a stdio server, driven by exact bytes on its stdin. */
export interface RawWrap {
  readonly wrap: WrapProgram;
  /** Every line wrap wrote on stdout so far, parsed. */
  lines(): Line[];
  /** The answers (objects, or members of a batch answer) under `id`. */
  answersTo(id: unknown): Record<string, unknown>[];
  /** The tool names the fixture ran (its own log). */
  calls(): Promise<string[]>;
  write(bytes: string | Buffer): void;
  close(): Promise<void>;
}

/**
 * Starts wrap before `command` (the raw fixture, logging its calls, unless given) pinning `[echo]`,
 * and initializes it: the answer to id 0 is in, `notifications/initialized` sent.
 */
export async function startRawWrap(command: readonly string[] = rawFixtureCommand()): Promise<RawWrap> {
  const dir = await mkdtemp(join(tmpdir(), 'toolpin-rawwrap-'));
  const callLog = join(dir, 'calls.log');
  const pin = stdioPinFor('raw', command, [RAW_ECHO], { TOOLPIN_RAW_CALL_LOG: callLog });
  const wrap = runWrapInProcess(await writePin(dir, pin), undefined);
  let received = '';
  wrap.stdout.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
  const lines = (): Line[] =>
    received
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as Line);
  const raw: RawWrap = {
    wrap,
    lines,
    answersTo: (id) =>
      lines()
        .flatMap((line) => (Array.isArray(line) ? line : [line]))
        .filter((m) => m.id === id),
    calls: async () => (await readFile(callLog, 'utf8').catch(() => '')).split('\n').filter((l) => l !== ''),
    write: (bytes) => void wrap.stdin.write(bytes),
    close: async () => {
      await wrap.end();
      await rm(dir, { recursive: true, force: true });
    },
  };
  raw.write(`${JSON.stringify(initializeRequest(0))}\n`);
  await until(() => (raw.answersTo(0).length > 0 ? true : undefined), 'the initialize answer');
  raw.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
  return raw;
}

/** A describe's raw wrap (see {@link startRawWrap}): started before its tests, closed after them. */
export function useRawWrap(): RawWrap {
  return useScoped(() => startRawWrap());
}

/** A tools/call of echo as one line's JSON, under any `id` (refusal tests send ids JSON-RPC forbids). */
export function echoCall(id: unknown, text: string): string {
  return JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: 'echo', arguments: { text } },
  });
}
