// The baseline proxy, run as its own process: express + http-proxy-middleware 3 with a keep-alive
// agent and changeOrigin, no inspection at all. It is what "a plain reverse proxy" costs.
// Usage: node --import tsx bench/passthrough.ts <upstream origin>
import http from 'node:http';
import { serveChild } from './serveChild.js';
import express from 'express';
import { createProxyMiddleware } from 'http-proxy-middleware';

const target = process.argv[2];
if (target === undefined) {
  process.stderr.write('usage: passthrough.ts <upstream origin>\n');
  process.exit(2);
}

const app = express();
app.disable('x-powered-by');
app.set('etag', false);
app.use(
  createProxyMiddleware({
    target,
    changeOrigin: true,
    agent: new http.Agent({ keepAlive: true, maxSockets: 512 }),
  }),
);

serveChild(http.createServer(app), 'passthrough');
