/** JSON-RPC error codes the gateway answers with. Documented in the package README and docs/boundary.md. */
export const ErrorCodes = {
  /** Malformed JSON (JSON-RPC 2.0). */
  PARSE_ERROR: -32700,
  /** Not a JSON-RPC 2.0 message (JSON-RPC 2.0). */
  INVALID_REQUEST: -32600,
  /** A method the server does not serve (JSON-RPC 2.0): the aggregate's answer to one it does not carry. */
  METHOD_NOT_FOUND: -32601,
  /** Invalid method parameters (JSON-RPC 2.0), e.g. a tools/call without a tool name. */
  INVALID_PARAMS: -32602,
  /** The gateway failed on its own side (JSON-RPC 2.0). */
  INTERNAL_ERROR: -32603,
  /**
   * A request without a session where the bridged Streamable HTTP front needs one (initialize
   * first), as the SDK's server answers it (MCP Streamable HTTP, session management).
   */
  SESSION_REQUIRED: -32000,
  /** The session named by Mcp-Session-Id (or `?sessionId=`) is unknown or has ended: HTTP 404. */
  SESSION_NOT_FOUND: -32001,
  /** Mcp-Method / Mcp-Name headers missing or disagreeing with the body (MCP 2026-07-28). */
  HEADER_MISMATCH: -32020,
  /** A tools/call or tools/list refused by the pin policy; `error.data.reason` says why. */
  PIN_POLICY_BLOCKED: -32040,
  /** The upstream could not be reached, died, or timed out before answering (`error.data.reason`). */
  UPSTREAM_UNAVAILABLE: -32041,
  /**
   * The upstream answered, but not with something the gateway can verify: a redirect, a media type
   * other than JSON or SSE, a body that is not JSON, a message that is not valid JSON-RPC, or one
   * nested deeper than the gateway's bound. Nothing of that answer reaches the client.
   */
  UPSTREAM_INVALID: -32042,
} as const;
