#!/usr/bin/env node
// The "exchange" path of `pnpm conformance:auth`: the SDK client under test talks to a toolpin route
// in resource-server mode with upstreamCredential exchange (RFC 8693 at the scenario's own token
// endpoint), in front of the scenario's MCP server. Otherwise as viaResourceServer.mjs.
//
//   node viaExchange.mjs <v1|v2> <scenario-server-url>
import { runThroughRoute } from './viaResourceServer.mjs';

runThroughRoute('exchange');
