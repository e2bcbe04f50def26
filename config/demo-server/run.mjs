#!/usr/bin/env node
// The README's run command: starts the demo MCP server on 127.0.0.1:3001 and the gateway on
// 127.0.0.1:8080 in front of it (config/gateway.yaml, pin config/servers/demo.yaml), admin and
// review page on 127.0.0.1:8081.
//
//   node config/demo-server/run.mjs [--drift] [--port 8080] [--admin-port 8081] [--server-port 3001]
//
// --drift starts the demo server with a poisoned get_weather description (a rug pull): the
// gateway hides that tool and blocks its calls. The gateway runs with a fresh admin token, printed,
// so the review page (/ui) can approve: sign in with it. Ctrl-C stops both processes. When either
// exits on its own (the gateway cannot start: a port in use), the other is stopped and the demo
// exits with that process's code (never 0).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { parse, stringify } from 'yaml';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const { values } = parseArgs({
  options: {
    drift: { type: 'boolean', default: false },
    port: { type: 'string', default: '8080' },
    'admin-port': { type: 'string', default: '8081' },
    'server-port': { type: 'string', default: '3001' },
  },
});
const children = [];

// config/gateway.yaml with an admin token of this run (the page writes pins only for a reader who
// gave it), in a folder of its own; the pins are still config/servers.
const token = randomBytes(18).toString('base64url');
const folder = mkdtempSync(join(tmpdir(), 'toolpin-demo-'));
const gatewayFile = join(folder, 'gateway.yaml');
const gateway = parse(readFileSync(join(root, 'config', 'gateway.yaml'), 'utf8'));
gateway.admin = { ...gateway.admin, token };
gateway.servers = join(root, 'config', 'servers');
writeFileSync(gatewayFile, stringify(gateway), { mode: 0o600 });

let stopping = false;
function stop(code) {
  if (!stopping) process.exitCode = code;
  stopping = true;
  for (const child of children) child.kill('SIGTERM');
  rmSync(folder, { recursive: true, force: true });
  setTimeout(() => process.exit(), 2000).unref();
}

function start(args, name) {
  const child = spawn(process.execPath, args, { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
  child.on('exit', (code, signal) => {
    if (stopping) return;
    process.stderr.write(`demo: ${name} exited (${signal ?? code}); stopping\n`);
    // It was not asked to stop: whatever its code, the demo failed.
    stop(code === null || code === 0 ? 1 : code);
  });
  children.push(child);
  return child;
}

start(
  [
    join('config', 'demo-server', 'server.mjs'),
    '--port',
    values['server-port'],
    ...(values.drift ? ['--drift'] : []),
  ],
  'demo server',
);
const adminPort = values['admin-port'];
process.stderr.write(
  `demo: the review page (/ui on the admin listener${adminPort === '0' ? '' : `, http://127.0.0.1:${adminPort}/ui`}) approves once signed in with this run's admin token: ${token}\n`,
);
// Both start at once: the gateway connects upstream on a client's first request, not at start
// (and a server down then is answered as such), so it needs no head start for the server.
start(
  [
    join('packages', 'gateway', 'dist', 'cli', 'main.js'),
    'serve',
    '--config',
    gatewayFile,
    '--port',
    values.port,
    '--admin-port',
    adminPort,
  ],
  'gateway',
);
process.on('SIGINT', () => stop(0));
process.on('SIGTERM', () => stop(0));
