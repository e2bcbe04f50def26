import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A listener on 127.0.0.1 for the authorization server's redirect (RFC 8252 loopback redirect). */
export interface LoopbackRedirect {
  /** `http://127.0.0.1:<port>/callback`: the redirect_uri of the login. */
  readonly redirectUrl: string;
  /**
   * Resolves with the authorization code of the redirect whose `state` is `state`; rejects on an
   * error, or after `timeoutMs`. Called before the authorization URL is shown, so no redirect is missed.
   */
  code(state: string, timeoutMs: number): Promise<string>;
  close(): Promise<void>;
}

const PAGE = (text: string): string =>
  `<!doctype html><meta charset="utf-8"><title>toolpin login</title><p>${text}</p>\n`;

/** Listens on 127.0.0.1 (`port`, or any free one) for one redirect to `/callback`. */
export async function listenForRedirect(port = 0): Promise<LoopbackRedirect> {
  let settle: ((outcome: { code: string } | { error: string }) => void) | undefined;
  let expectedState = '';
  let timer: NodeJS.Timeout | undefined;
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (req.method !== 'GET' || url.pathname !== '/callback') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    const state = url.searchParams.get('state');
    const code = url.searchParams.get('code');
    const error = url.searchParams.get('error');
    // Another page's redirect (no or another state) is not this login's answer.
    if (state !== expectedState || settle === undefined) {
      res
        .writeHead(400, { 'content-type': 'text/html' })
        .end(PAGE('toolpin: this is not the login toolpin started.'));
      return;
    }
    if (code === null) {
      res
        .writeHead(400, { 'content-type': 'text/html' })
        .end(PAGE('toolpin: the authorization was not granted.'));
      settle({ error: error ?? 'no code in the redirect' });
      return;
    }
    res
      .writeHead(200, { 'content-type': 'text/html' })
      .end(PAGE('toolpin: authorized. You may close this tab.'));
    settle({ code });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const { port: bound } = server.address() as AddressInfo;
  return {
    redirectUrl: `http://127.0.0.1:${bound}/callback`,
    code: (state, timeoutMs) =>
      new Promise<string>((resolve, reject) => {
        expectedState = state;
        timer = setTimeout(
          () => reject(new Error(`no redirect came back within ${Math.round(timeoutMs / 1000)} s`)),
          timeoutMs,
        );
        settle = (outcome) => {
          settle = undefined;
          clearTimeout(timer);
          if ('code' in outcome) resolve(outcome.code);
          else reject(new Error(`the authorization server answered: ${outcome.error.slice(0, 200)}`));
        };
      }),
    close: () =>
      new Promise<void>((resolve) => {
        clearTimeout(timer);
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
