// The pin file of a conformance scenario's MCP server, as `toolpin pin` would write it: every auth
// scenario's server lists the same one tool (the suite's helpers/createServer.ts).
import { digestCatalog, TRACE_PROFILE } from '@toolpin/digest';

const SCENARIO_TOOLS = [{ name: 'test-tool', inputSchema: { type: 'object' } }];

/** A pin-file object for the server `name` at `upstreamUrl`, enforcing its catalog, with `auth`. */
export function scenarioPin(name, upstreamUrl, auth) {
  const digest = digestCatalog(SCENARIO_TOOLS, { profile: TRACE_PROFILE });
  return {
    name,
    upstream: { url: upstreamUrl },
    mode: 'enforce',
    profile: TRACE_PROFILE,
    onDrift: 'filter',
    pin: { catalog: digest.catalog, tools: digest.entries },
    auth,
  };
}
