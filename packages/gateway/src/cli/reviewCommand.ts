import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import express from 'express';
import { DEFAULT_PINS_FOLDER, DEFAULT_TIMEOUT_MS, ExitCodes } from '../defaults.js';
import { GatewayError } from '../errors.js';
import { listen } from '../ingress/createGateway.js';
import { listenFailure } from '../ingress/listenFailure.js';
import { createLogger } from '../observe/logger.js';
import { LiveListings } from '../review/liveListings.js';
import { createReviewApp, type ReviewApp } from '../review/reviewApp.js';
import type { CliIo } from './cliIo.js';
import { reportInputError } from './cliInputError.js';
import { parsePort, parseTimeout } from './commonOptions.js';
import { openBrowser } from './openBrowser.js';

/** Options of {@link runReview}, as given on the command line. */
export interface ReviewCommandOptions {
  /** The folder of pin files. @default ~/.toolpin */
  readonly dir?: string;
  /** The page's port on 127.0.0.1. @default 0 (a free one, printed) */
  readonly port?: string;
  /** Open the page in the browser (`--no-open`: only print its address). @default true */
  readonly open?: boolean;
  /** Per request timeout of each listing, in milliseconds. @default 30000 */
  readonly timeout?: string;
}

/** The page, served on loopback: its address and what stops it. */
interface ServedReview {
  readonly url: string;
  readonly app: ReviewApp;
  readonly server: Server;
}

/** Mounts the review page at /ui on 127.0.0.1 with a fresh admin token (the page writes pins). */
async function serveReview(
  listings: LiveListings,
  timeoutMs: number,
  port: number,
  io: CliIo,
): Promise<ServedReview> {
  const logger = createLogger({ level: 'info', destination: io.stderr });
  const app = createReviewApp({
    mode: 'review',
    // Loopback is not private (every local user, and any page by DNS rebinding, reaches it):
    // the page reads and writes only for a browser signed in with this process's own token.
    token: randomBytes(24).toString('base64url'),
    observer: listings,
    logger,
    servers: () => listings.servers,
    timeoutMs,
    // An approval lists every server again: the page shows the listing after it, never the one before.
    reload: () => listings.refresh(),
  });
  const web = express();
  web.use('/ui', app.router);
  web.get('/', (_req, res) => res.redirect(303, '/ui'));
  try {
    const { server, url } = await listen(web, '127.0.0.1', port);
    return { url, app, server };
  } catch (error) {
    app.close();
    throw listenFailure(error, { listener: 'review', setting: '--port' }, '127.0.0.1', port);
  }
}

/** Resolves with 0 once SIGINT or SIGTERM stopped the page. */
function untilStopped(served: ServedReview, io: CliIo): Promise<number> {
  return new Promise((done) => {
    const stop = (): void => {
      served.app.close();
      served.server.close(() => done(ExitCodes.OK));
      served.server.closeAllConnections();
    };
    io.signals.once('SIGINT', stop);
    io.signals.once('SIGTERM', stop);
  });
}

/**
 * `toolpin review [--dir <folder>]`: lists every server of a folder of pin files (`~/.toolpin`, where
 * `protect` writes them) as `toolpin approve` does, and serves the review page for them on
 * 127.0.0.1: each drift explained, Approve rewriting the pin through the same plan as `approve
 * --tool`, then every server listed again. Opens the page signed in (a one-time link) unless
 * `--no-open`. Runs until SIGINT/SIGTERM: exit 0; 2 when the folder or the port cannot be used.
 */
export async function runReview(options: ReviewCommandOptions, io: CliIo): Promise<number> {
  let port: number;
  let timeoutMs: number;
  try {
    port = parsePort('--port', options.port) ?? 0;
    timeoutMs = parseTimeout(options.timeout, DEFAULT_TIMEOUT_MS);
  } catch (error) {
    return reportInputError('review', error, io);
  }
  const dir = resolve(options.dir ?? join(homedir(), DEFAULT_PINS_FOLDER));
  const listings = new LiveListings({
    dir,
    timeoutMs,
    logger: createLogger({ level: 'warn', destination: io.stderr }),
  });
  let served: ServedReview;
  try {
    await listings.refresh();
    served = await serveReview(listings, timeoutMs, port, io);
  } catch (error) {
    if (!(error instanceof GatewayError)) throw error;
    io.stderr.write(`toolpin review: ${error.code}: ${error.message}\n`);
    return ExitCodes.BAD_INPUT;
  }
  const link = `${served.url}${served.app.signInLink()}`;
  io.stderr.write(
    `toolpin review: ${listings.servers.length} server(s) from ${dir}\n` +
      `toolpin review: the review page is at ${served.url}/ui; this link signs a browser in once: ${link}\n` +
      'toolpin review: Ctrl-C stops it\n',
  );
  if (options.open !== false) openBrowser(link);
  return untilStopped(served, io);
}

/** Registers `toolpin review` on the program: hands the options to {@link runReview}, then ends the process. */
export function registerReviewCommand(program: Command, io: CliIo, done: (code: number) => void): void {
  program
    .command('review')
    .description(
      'list every server of a folder of pins (~/.toolpin) and serve the review page on 127.0.0.1 for them: drift explained, approve in the browser',
    )
    .option('--dir <folder>', 'the folder of pin files (default: ~/.toolpin)')
    .option('-p, --port <port>', 'the port on 127.0.0.1 (default: a free one, printed)')
    .option('--no-open', 'print the address and sign-in link; do not open the browser')
    .option('--timeout <ms>', 'per request timeout of each listing (default: 30000)')
    .action(async (options: ReviewCommandOptions) => {
      const code = await runReview(options, io);
      done(code);
      io.exit(code);
    });
}
