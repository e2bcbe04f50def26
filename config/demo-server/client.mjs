#!/usr/bin/env node
// A real MCP client (the SDK's) that lists the demo's tools through the gateway and calls get_weather.
//
//   node config/demo-server/client.mjs [url]      (default http://127.0.0.1:8080/demo/mcp)
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const url = process.argv[2] ?? 'http://127.0.0.1:8080/demo/mcp';
const client = new Client({ name: 'toolpin-demo-client', version: '1.0.0' });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
const { tools } = await client.listTools();
console.log(`tools listed through the gateway: ${tools.map((tool) => tool.name).join(', ') || '(none)'}`);
try {
  const result = await client.callTool({ name: 'get_weather', arguments: { city: 'Paris' } });
  console.log(`get_weather: allowed -> ${result.content?.[0]?.text ?? JSON.stringify(result)}`);
} catch (error) {
  console.log(`get_weather: BLOCKED (${error.code}) ${error.message}`);
  if (error.data) console.log(`  ${JSON.stringify(error.data)}`);
}
await client.close();
