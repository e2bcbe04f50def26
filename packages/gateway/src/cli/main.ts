#!/usr/bin/env node
// The `toolpin` binary: the command line (program.ts) run with the process's own io.
import { processIo } from './cliIo.js';
import { runCli } from './program.js';

process.exitCode = await runCli(process.argv.slice(2), processIo());
