#!/usr/bin/env node
// The `toolpin` binary: the command line (program.ts) run with the process's own io.
import { processIo } from './cliIo.js';
import { runCli } from './program.js';
import { holdServeHeap } from './serveHeap.js';

const args = process.argv.slice(2);
// The gateway is a long-running process of its own: its heap is held near its live size.
if (args[0] === 'serve') holdServeHeap(process.execArgv, process.env.NODE_OPTIONS);
process.exitCode = await runCli(args, processIo());
