import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** config/demo-server/server.mjs, resolved from this file. */
export const DEMO_SERVER_PATH = fileURLToPath(
  new URL('../../config/demo-server/server.mjs', import.meta.url),
);
/** config/demo-server/catalog.json: what the non-drifted demo server serves. */
export const DEMO_CATALOG_PATH = fileURLToPath(
  new URL('../../config/demo-server/catalog.json', import.meta.url),
);

export interface DemoServerHandle {
  url: string;
  close(): Promise<void>;
}

/** Runs the demo server as `node config/demo-server/server.mjs --port 0 [--drift]` and reads its URL off stderr. */
export async function startDemoServerProcess(options: { drift?: boolean } = {}): Promise<DemoServerHandle> {
  const child = spawn(
    process.execPath,
    [DEMO_SERVER_PATH, '--port', '0', ...(options.drift ? ['--drift'] : [])],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const close = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
    child.stderr.destroy();
  };
  let stderr = '';
  child.stderr.setEncoding('utf8');
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`demo server did not start:\n${stderr}`)), 10_000);
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`demo server exited with ${code}:\n${stderr}`));
      });
      child.stderr.on('data', (chunk: string) => {
        stderr += chunk;
        const match = /listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(stderr);
        if (match?.[1] !== undefined) {
          clearTimeout(timer);
          resolve(match[1]);
        }
      });
    });
    return { url, close };
  } catch (error) {
    await close();
    throw error;
  }
}
