#!/usr/bin/env node
// The client under test for the MCP conformance suite's 2026-07-28 tool-call client scenarios
// (http-custom-headers): an SDK v2 client pinned to 2026-07-28 lists the tools and makes the calls
// the scenario asks for in MCP_CONFORMANCE_CONTEXT (`toolCalls`), as an application would. The SDK
// mirrors the `x-mcp-header` arguments into `Mcp-Param-*` headers (SEP-2243); the scenario's
// server judges what it received.
//
//   node sdkToolCallsClient.mjs v2 <server-url>
import { runClientProgram } from './clientProgram.mjs';
import { loadSdk } from './loadSdk.mjs';

const REVISION = '2026-07-28';

/** The calls the scenario asks for, from MCP_CONFORMANCE_CONTEXT. */
export function scenarioToolCalls() {
  const raw = process.env.MCP_CONFORMANCE_CONTEXT;
  if (raw === undefined) throw new Error('MCP_CONFORMANCE_CONTEXT not set');
  const { toolCalls } = JSON.parse(raw);
  if (!Array.isArray(toolCalls)) throw new Error('MCP_CONFORMANCE_CONTEXT has no toolCalls');
  return toolCalls;
}

/** Connects SDK `sdkName` (v2 only: v1 does not speak 2026-07-28) to `url`, lists, and makes every call. */
export async function runToolCalls(sdkName, url, toolCalls) {
  if (sdkName !== 'v2') throw new Error('2026-07-28 scenarios need SDK v2');
  const sdk = await loadSdk(sdkName);
  const client = new sdk.Client(
    { name: 'toolpin-conformance-client', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: REVISION } } },
  );
  await client.connect(new sdk.StreamableHTTPClientTransport(new URL(url)));
  try {
    // The SDK mirrors only the parameters of a tool it listed.
    const { tools } = await client.listTools();
    for (const call of toolCalls) {
      if (!tools.some((tool) => tool.name === call.name)) throw new Error(`tool ${call.name} not listed`);
      const result = await client.callTool({ name: call.name, arguments: call.arguments });
      if (result.isError === true) throw new Error(`${call.name} answered isError`);
    }
  } finally {
    await client.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`)
  runClientProgram((sdkName, serverUrl) => runToolCalls(sdkName, serverUrl, scenarioToolCalls()));
