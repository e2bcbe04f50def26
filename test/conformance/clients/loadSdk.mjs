// The two MCP TypeScript SDKs under one shape, for the conformance clients: v1 is
// @modelcontextprotocol/sdk (subpath modules), v2 is @modelcontextprotocol/client (one barrel).

/** Loads the client classes and OAuth helpers of SDK `v1` or `v2`. */
export async function loadSdk(name) {
  if (name === 'v1') {
    const [client, http, stdio, auth, extensions] = await Promise.all([
      import('@modelcontextprotocol/sdk/client/index.js'),
      import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
      import('@modelcontextprotocol/sdk/client/stdio.js'),
      import('@modelcontextprotocol/sdk/client/auth.js'),
      import('@modelcontextprotocol/sdk/client/auth-extensions.js'),
    ]);
    return { name, ...client, ...http, ...stdio, ...auth, ...extensions };
  }
  if (name === 'v2') {
    const [client, stdio] = await Promise.all([
      import('@modelcontextprotocol/client'),
      import('@modelcontextprotocol/client/stdio'),
    ]);
    return { name, ...client, ...stdio };
  }
  throw new Error(`unknown SDK "${name}" (v1 or v2)`);
}
