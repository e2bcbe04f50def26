/** JSON-RPC error codes the gateway answers with. Documented in the package README. */
export const ErrorCodes = {
  /** Malformed JSON (JSON-RPC 2.0). */
  PARSE_ERROR: -32700,
  /** Not a JSON-RPC 2.0 message (JSON-RPC 2.0). */
  INVALID_REQUEST: -32600,
  /** Mcp-Method / Mcp-Name headers missing or disagreeing with the body (MCP 2026-07-28). */
  HEADER_MISMATCH: -32020,
  /** A tools/call or tools/list refused by the pin policy; `error.data.reason` says why. */
  PIN_POLICY_BLOCKED: -32040,
  /** The upstream could not be reached or died before answering. */
  UPSTREAM_UNAVAILABLE: -32041,
} as const;
