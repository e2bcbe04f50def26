import { createLogger, startGateway, type RunningGateway } from '@toolpin/gateway';
import { writeGatewayFiles } from './gatewayFiles.js';

/** The pin watcher's settle time in the gateways tests start (StartGatewayOptions.settleMs). */
export const HARNESS_SETTLE_MS = 20;

/** One parsed JSON log line of the gateway. */
export type LogLine = Record<string, unknown> & { event?: string; msg?: string };

/** A gateway started in-process on 127.0.0.1:0 from real files, with its log lines captured. */
export interface GatewayHarness {
  readonly running: RunningGateway;
  /** Base URL; a server named `demo` is at `${url}/demo/mcp`. */
  readonly url: string;
  readonly logs: LogLine[];
  readonly dir: string;
  /** Log lines with this `event`. */
  events(event: string): LogLine[];
  close(): Promise<void>;
}

/**
 * Writes a gateway file and one pin file per server into a temp folder (`<name>.json`, or
 * `<name>.yaml` written by toolpin's own serializer with `format: 'yaml'`), then starts the gateway.
 */
export async function startGatewayHarness(
  pins: readonly Record<string, unknown>[],
  extra: Record<string, unknown> = {},
  options: { readonly format?: 'json' | 'yaml' } = {},
): Promise<GatewayHarness> {
  const { dir, file: gatewayFile, remove } = await writeGatewayFiles(pins, extra, options);
  const logs: LogLine[] = [];
  const logger = createLogger({
    level: 'debug',
    destination: {
      write(line: string) {
        logs.push(JSON.parse(line) as LogLine);
      },
    },
  });
  // A reload reads each pin file twice, settleMs apart (a file still being written is read again
  // later); this harness's files are written whole before any reload, so it waits 20 ms, not 200.
  const running = await startGateway(gatewayFile, { logger, settleMs: HARNESS_SETTLE_MS });
  return {
    running,
    url: running.url,
    logs,
    dir,
    events: (event) => logs.filter((line) => line.event === event),
    close: async () => {
      await running.close();
      await remove();
    },
  };
}
