import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { freePort } from './freePort.js';

const require = createRequire(import.meta.url);

/** Absolute path of the server-everything CLI (`mcp-server-everything` bin → dist/index.js). */
function everythingEntry(): string {
  return require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
}

/**
 * Preloaded into the child: server-everything calls `app.listen(PORT)` (all interfaces, no host option),
 * so force a 127.0.0.1 host when a listen call gives only a port.
 */
const LOOPBACK_PRELOAD =
  'data:text/javascript,' +
  encodeURIComponent(
    `import net from 'node:net';
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if ((typeof args[0] === 'number' || /^\\d+$/.test(String(args[0]))) && typeof args[1] !== 'string') args.splice(1, 0, '127.0.0.1');
  return listen.apply(this, args);
};`,
  );

/** [command, ...args] that runs server-everything over stdio. */
export function everythingStdioCommand(): [string, ...string[]] {
  return [process.execPath, everythingEntry(), 'stdio'];
}

export interface EverythingServerHandle {
  url: string;
  close(): Promise<void>;
}

/** Runs @modelcontextprotocol/server-everything in `streamableHttp` mode (env PORT) as a child process. */
export async function startEverythingServer(): Promise<EverythingServerHandle> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', LOOPBACK_PRELOAD, everythingEntry(), 'streamableHttp'], {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => {
    stderr += chunk;
  });
  const close = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
    child.stderr.destroy();
  };
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`server-everything did not start:\n${stderr}`)),
        10_000,
      );
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`server-everything exited with ${code}:\n${stderr}`));
      });
      child.stderr.on('data', () => {
        if (stderr.includes('listening on port')) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
  } catch (error) {
    await close();
    throw error;
  }
  return { url: `http://127.0.0.1:${port}/mcp`, close };
}
