// `node --import <this file> conformance/dist/index.js ...`: lets the conformance CLI load on Node 20.
import { register } from 'node:module';

register('./globSyncHooks.mjs', import.meta.url);
