#!/usr/bin/env node
// The README's run command: starts the demo MCP server on 127.0.0.1:3001 and the gateway on
// 127.0.0.1:8080 in front of it (config/gateway.yaml, pin config/servers/demo.yaml).
//
//   node config/demo-server/run.mjs [--drift]
//
// --drift starts the demo server with a poisoned get_weather description (a rug pull): the
// gateway hides that tool and blocks its calls. Ctrl-C stops both processes.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const drift = process.argv.includes('--drift');
const children = [];

function start(args, name) {
  const child = spawn(process.execPath, args, { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
  child.on('exit', (code, signal) => {
    if (stopping) return;
    process.stderr.write(`demo: ${name} exited (${signal ?? code}); stopping\n`);
    stop(code ?? 1);
  });
  children.push(child);
  return child;
}

let stopping = false;
function stop(code) {
  stopping = true;
  for (const child of children) child.kill('SIGTERM');
  setTimeout(() => process.exit(code), 300).unref();
}

start(
  [join('config', 'demo-server', 'server.mjs'), '--port', '3001', ...(drift ? ['--drift'] : [])],
  'demo server',
);
// Give the upstream a moment so the gateway's first requests find it; the gateway itself does not need it up.
setTimeout(
  () =>
    start(
      [
        join('packages', 'gateway', 'dist', 'cli', 'main.js'),
        'serve',
        '--config',
        join('config', 'gateway.yaml'),
      ],
      'gateway',
    ),
  300,
);
process.on('SIGINT', () => stop(0));
process.on('SIGTERM', () => stop(0));
