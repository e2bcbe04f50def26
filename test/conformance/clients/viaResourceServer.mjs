#!/usr/bin/env node
// The "resource-server" path of `pnpm conformance:auth`: the SDK client under test talks to a toolpin
// route in resource-server mode with upstreamCredential forward, in front of the scenario's MCP server.
// The "exchange" path (viaExchange.mjs) is the same route with upstreamCredential exchange.
//
//   node viaResourceServer.mjs <v1|v2> <scenario-server-url>
//
// Like an operator, the harness reads the upstream's authorization server (and the scopes it asks
// for) and configures the route with them; the route's own protected resource metadata and
// challenges are then all the client sees. Tokens are validated by introspection at
// introspectionOracle.mjs (the scenarios' tokens are opaque).
import { randomBytes } from 'node:crypto';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createLogger, startGateway } from '@toolpin/gateway';
import { runClientProgram } from './clientProgram.mjs';
import { grantedScopes } from './headlessOAuthProvider.mjs';
import { startIntrospectionOracle } from './introspectionOracle.mjs';
import { loadSdk } from './loadSdk.mjs';
import { scenarioPin } from './scenarioPin.mjs';
import { runScenario } from './sdkAuthClient.mjs';
import { readUpstreamAuthorization } from './upstreamAuthorization.mjs';

const ROUTE = 'conformance';
const SECRET_ENV = 'TOOLPIN_CONFORMANCE_INTROSPECTION_SECRET';
function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.on('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

/**
 * What the upstream receives, by path: the client's token (`forward`), or an RFC 8693 exchange of
 * it at the scenario's own token endpoint (`exchange`, found in its authorization server's
 * metadata; the gateway a public client). The scenarios' token endpoints answer any grant with a
 * token of the scope of the last authorization, registered with their MCP server: the exchanged
 * token takes the client's scope, as an identity provider's exchange does.
 */
const CREDENTIALS = {
  forward: { kind: 'forward' },
  exchange: { kind: 'exchange', clientId: 'toolpin-gateway' },
};

/** Starts the gateway in front of `upstreamUrl`; resolves to its route URL and a close(). */
export async function startResourceServerGateway(sdk, upstreamUrl, credential = 'forward') {
  const { issuer, scopes } = await readUpstreamAuthorization(sdk, upstreamUrl);
  const port = await freePort();
  const resource = `http://127.0.0.1:${port}/${ROUTE}/mcp`;
  const secret = randomBytes(16).toString('hex');
  process.env[SECRET_ENV] = secret;
  const oracle = await startIntrospectionOracle({
    clientId: 'toolpin-gateway',
    clientSecret: secret,
    claims: (token) => {
      const scope = grantedScopes.get(token) ?? scopes.join(' ');
      return { iss: issuer, aud: resource, ...(scope === '' ? {} : { scope }) };
    },
  });
  const auth = {
    mode: 'resource-server',
    resource,
    issuer,
    introspection: { endpoint: oracle.endpoint, clientId: 'toolpin-gateway', clientSecretEnv: SECRET_ENV },
    scopes,
    upstreamCredential: CREDENTIALS[credential],
  };
  const dir = await mkdtemp(join(tmpdir(), 'toolpin-conformance-gw-'));
  await mkdir(join(dir, 'servers'));
  await writeFile(
    join(dir, 'servers', `${ROUTE}.json`),
    JSON.stringify(scenarioPin(ROUTE, upstreamUrl, auth), null, 2),
  );
  const gatewayFile = join(dir, 'gateway.json');
  await writeFile(gatewayFile, JSON.stringify({ listen: { host: '127.0.0.1', port }, servers: './servers' }));
  const logger = createLogger({
    level: 'warn',
    destination: { write: (line) => process.stderr.write(line) },
  });
  const running = await startGateway(gatewayFile, { adminPort: 0, logger, watch: false });
  return {
    url: resource,
    oracle,
    close: async () => {
      await running.close();
      await oracle.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The client program of a path: the scenario's client through a route whose upstream gets `credential`. */
export function runThroughRoute(credential) {
  runClientProgram(async (sdkName, upstreamUrl, scenario) => {
    const gateway = await startResourceServerGateway(await loadSdk(sdkName), upstreamUrl, credential);
    try {
      await runScenario(sdkName, scenario, gateway.url);
    } finally {
      await gateway.close();
    }
  });
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runThroughRoute('forward');
}
