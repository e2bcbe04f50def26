#!/usr/bin/env node
// The "gateway" path of the 2026-07-28 tool-call scenarios: the client under test
// (sdkToolCallsClient.mjs) talks to a toolpin route in front of the scenario's server. As an
// operator would, the harness first pins the server with toolpin's own `pin` (in-process, the
// program the binary runs), then starts the gateway on that pin file in enforce mode.
//
//   node viaGateway.mjs v2 <scenario-server-url>
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger, startGateway } from '@toolpin/gateway';
import { processIo } from '../../../packages/gateway/dist/cli/cliIo.js';
import { runCli } from '../../../packages/gateway/dist/cli/program.js';
import { runClientProgram } from './clientProgram.mjs';
import { runToolCalls, scenarioToolCalls } from './sdkToolCallsClient.mjs';

const ROUTE = 'conformance';

/** `toolpin pin` in-process, as the binary runs it; its report on stderr. Throws when it fails. */
async function pin(upstreamUrl, out) {
  const io = { ...processIo(), stdout: process.stderr };
  const code = await runCli(['pin', '--name', ROUTE, '--url', upstreamUrl, '--out', out], io);
  if (code !== 0) throw new Error(`toolpin pin exited ${code}`);
}

/** Pins `upstreamUrl` and starts a gateway on the pin; resolves to the route URL and a close(). */
export async function startPinnedGateway(upstreamUrl) {
  const dir = await mkdtemp(join(tmpdir(), 'toolpin-conformance-gw-'));
  await mkdir(join(dir, 'servers'));
  await pin(upstreamUrl, join(dir, 'servers', `${ROUTE}.yaml`));
  const gatewayFile = join(dir, 'gateway.json');
  await writeFile(
    gatewayFile,
    JSON.stringify({ listen: { host: '127.0.0.1', port: 0 }, servers: './servers' }),
  );
  const logger = createLogger({
    level: 'warn',
    destination: { write: (line) => process.stderr.write(line) },
  });
  const running = await startGateway(gatewayFile, { adminPort: 0, logger, watch: false });
  return {
    url: `${running.url}/${ROUTE}/mcp`,
    close: async () => {
      await running.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

runClientProgram(async (sdkName, upstreamUrl) => {
  const gateway = await startPinnedGateway(upstreamUrl);
  try {
    await runToolCalls(sdkName, gateway.url, scenarioToolCalls());
  } finally {
    await gateway.close();
  }
});
