#!/usr/bin/env node
// The "client" path of `pnpm conformance:auth`: toolpin itself is the OAuth client under test
// (pin file `auth.mode: client`). As a user would: `toolpin login <pin-file> --no-browser` (the
// harness plays the browser: it opens the printed URL and follows the authorization server's
// redirect to toolpin's loopback listener), then a real SDK stdio client spawns `toolpin wrap`
// on the pin file, lists the tools and calls one. toolpin discovers, registers, authorizes and
// presents its token to the scenario's MCP server; the SDK client never sees OAuth.
//
//   node viaToolpinClient.mjs <v1|v2> <scenario-server-url>
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runClientProgram } from './clientProgram.mjs';
import { loadSdk } from './loadSdk.mjs';
import { scenarioPin } from './scenarioPin.mjs';

const TOOLPIN_CLI = fileURLToPath(new URL('../../../packages/gateway/dist/cli/main.js', import.meta.url));
const SECRET_ENV = 'TOOLPIN_CONFORMANCE_CLIENT_SECRET';
// The suite's client ID metadata document URL, offered as the direct SDK client offers it.
const CIMD_CLIENT_METADATA_URL = 'https://conformance-test.local/client-metadata.json';
const LOGIN_TIMEOUT_MS = 40_000;

// Grants toolpin's client mode does not run (it is the authorization code flow of a user); the
// scenario is reported not applicable rather than failed.
const NOT_CLIENT_MODE = {
  'auth/client-credentials-jwt':
    'the client-credentials grant (private_key_jwt) is a service credential, not a login',
  'auth/client-credentials-basic': 'the client-credentials grant is a service credential, not a login',
  'auth/cross-app-access-complete-flow':
    'cross-app access (SEP-990) starts from an IdP ID token toolpin does not hold',
};

function clientAuth(scenario) {
  const auth = { mode: 'client', clientMetadataUrl: CIMD_CLIENT_METADATA_URL };
  if (scenario !== 'auth/pre-registration') return auth;
  const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}');
  process.env[SECRET_ENV] = context.client_secret;
  return { mode: 'client', clientId: context.client_id, clientSecretEnv: SECRET_ENV };
}

/** Runs `toolpin login --no-browser`, opens the URL it prints and follows the redirect; resolves on exit 0. */
function login(pinFile, env) {
  return new Promise((resolve, reject) => {
    const args = [TOOLPIN_CLI, 'login', pinFile, '--no-browser', '--timeout', String(LOGIN_TIMEOUT_MS)];
    const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let browsing;
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      const url = /^(https?:\/\/\S+)$/m.exec(stdout)?.[1];
      if (url !== undefined && browsing === undefined) browsing = playBrowser(url).catch((error) => error);
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.on('close', async (code) => {
      const browserError = await browsing;
      if (code === 0) resolve();
      else
        reject(
          new Error(
            `toolpin login exited ${code}: ${stderr.trim()}${browserError ? ` (${browserError.message})` : ''}`,
          ),
        );
    });
  });
}

/** The user's browser: the authorization server redirects at once; the redirect goes to toolpin. */
async function playBrowser(authorizationUrl) {
  const response = await fetch(authorizationUrl, { redirect: 'manual' });
  const location = response.headers.get('location');
  if (location === null)
    throw new Error(`the authorization endpoint answered ${response.status} without a redirect`);
  const callback = await fetch(location);
  await callback.body?.cancel();
}

async function wrapListAndCall(sdk, pinFile, env) {
  const client = new sdk.Client(
    { name: `toolpin-conformance-${sdk.name}`, version: '1.0.0' },
    { capabilities: {} },
  );
  const transport = new sdk.StdioClientTransport({
    command: process.execPath,
    args: [TOOLPIN_CLI, 'wrap', '--pin', pinFile, '--log-level', 'warn'],
    env,
    stderr: 'inherit',
  });
  await client.connect(transport);
  try {
    const { tools } = await client.listTools();
    if (!tools.some((tool) => tool.name === 'test-tool'))
      throw new Error('test-tool is not listed through wrap');
    const result = await client.callTool({ name: 'test-tool', arguments: {} });
    if (result.isError === true)
      throw new Error(`test-tool answered an error: ${JSON.stringify(result.content)}`);
  } finally {
    await client.close();
  }
}

async function main(sdkName, upstreamUrl, scenario) {
  if (NOT_CLIENT_MODE[scenario] !== undefined) return { notApplicable: NOT_CLIENT_MODE[scenario] };
  const sdk = await loadSdk(sdkName);
  const dir = await mkdtemp(join(tmpdir(), 'toolpin-conformance-client-'));
  try {
    const pinFile = join(dir, 'conformance.json');
    await writeFile(
      pinFile,
      JSON.stringify(scenarioPin('conformance', upstreamUrl, clientAuth(scenario)), null, 2),
    );
    const env = { ...process.env, TOOLPIN_TOKEN_STORE: join(dir, 'oauth-tokens.json') };
    await login(pinFile, env);
    await wrapListAndCall(sdk, pinFile, env);
    return undefined;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

runClientProgram(main);
