import { ExitCodes } from '../defaults.js';
import { stopAllChildren } from '../transports/childRegistry.js';
import type { CliIo } from './cliIo.js';

/** How long the servers a command started get to exit after SIGTERM before SIGKILL. */
const CHILD_GRACE_MS = 2000;

const EXIT_CODES = { SIGINT: ExitCodes.INTERRUPTED, SIGTERM: ExitCodes.TERMINATED } as const;

/**
 * Ends what a short command (pin, check, approve, protect…) started when it is interrupted: on
 * SIGINT or SIGTERM, every stdio server it spawned is stopped with its process group (they run in
 * groups of their own, so a terminal's Ctrl-C reaches toolpin alone), then the process exits 130
 * or 143. A second signal exits at once (the exit hook of transports/childRegistry.ts kills what
 * is left). Returns the function that removes the handlers once the command is done.
 */
export function stopOnSignal(io: CliIo): () => void {
  let stopping = false;
  const handlers = (['SIGINT', 'SIGTERM'] as const).map((signal) => {
    const handler = (): void => {
      if (stopping) return io.exit(EXIT_CODES[signal]);
      stopping = true;
      io.stderr.write(`toolpin: ${signal}: stopping the servers this command started\n`);
      void stopAllChildren(CHILD_GRACE_MS).finally(() => io.exit(EXIT_CODES[signal]));
    };
    io.signals.on(signal, handler);
    return { signal, handler };
  });
  return () => {
    for (const { signal, handler } of handlers) io.signals.off(signal, handler);
  };
}
