#!/usr/bin/env node
// Runnable example: toolpin's pin enforcement mounted inside an existing express app.
//
//   node config/demo-server/server.mjs --port 3001 &        # the upstream (bundled demo)
//   node packages/gateway/examples/embedded.mjs             # your app on 127.0.0.1:3000
//   node config/demo-server/client.mjs http://127.0.0.1:3000/agent-tools/mcp
import { readFileSync } from 'node:fs';
import express from 'express';
import { parse } from 'yaml';
import { pinGuard } from '@toolpin/gateway';

const app = express();
app.get('/health', (_req, res) => res.json({ ok: true })); // the rest of your app

// The pin file as an object (here read from the repo's demo pin); the upstream can be overridden.
const pin = parse(readFileSync(new URL('../../../config/servers/demo.yaml', import.meta.url), 'utf8'));
app.use('/agent-tools/mcp', pinGuard({ pin, upstream: 'http://127.0.0.1:3001/mcp' }));

app.listen(3000, '127.0.0.1', () => console.error('app on http://127.0.0.1:3000, MCP at /agent-tools/mcp'));
