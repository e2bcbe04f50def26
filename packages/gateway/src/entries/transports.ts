// @toolpin/gateway/transports: a pin's upstream as the gateway reaches it, and the stdio front.

/** An SDK Client connected to a pin's upstream (a spawned command in its own process group, or a URL). */
export { connectUpstreamClient } from '../transports/upstreamClient.js';
export type { ConnectUpstreamClientOptions } from '../transports/upstreamClient.js';
/** Runs toolpin as a stdio MCP server in front of one upstream (what `toolpin wrap` runs). */
export { runStdioFront } from '../ingress/stdioFront.js';
export type { StdioFront, StdioFrontOptions } from '../ingress/stdioFront.js';
/** Who ended a session (`StdioFront.ended`). */
export type { BridgeEnd } from '../transports/messageBridge.js';
