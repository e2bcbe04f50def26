#!/usr/bin/env node
// The `toolpin` binary: the command line (program.ts) run with the process's own io, in a process
// whose heap grows steadily (observe/heapGrowth.ts).
import { steadyHeapGrowth } from '../observe/heapGrowth.js';
import { processIo } from './cliIo.js';
import { runCli } from './program.js';

steadyHeapGrowth();
process.exitCode = await runCli(process.argv.slice(2), processIo());
