/** The preimage label defined by the derivation (spec section 3). */
export const TRACE_PROFILE = 'trace.mcp-tool-definition.v1';

/** AgentAvow's label for the same derivation; only the preimage label differs. */
export const AGENTAVOW_PROFILE = 'agentavow.mcp-tool-definition.v1';

/** Options shared by every function that hashes under a profile label. */
export interface DigestOptions {
  /**
   * The profile label carried literally in every preimage.
   * @default TRACE_PROFILE
   */
  profile?: string;
}

/** Resolves the profile label of `options`, defaulting to {@link TRACE_PROFILE}. */
export function resolveProfile(options: DigestOptions | undefined): string {
  return options?.profile ?? TRACE_PROFILE;
}

/** toolpin's preimage label for one prompt definition (`prompts/list`). */
export const PROMPT_PROFILE = 'toolpin.mcp-prompt-definition.v1';

/** toolpin's preimage label for one resource template (`resources/templates/list`). */
export const TEMPLATE_PROFILE = 'toolpin.mcp-resource-template.v1';

/** toolpin's preimage label for the server's `instructions` (the `initialize` result). */
export const INSTRUCTIONS_PROFILE = 'toolpin.mcp-server-instructions.v1';
