import { PROMPT_PROFILE } from './profiles.js';
import { restrictMembers } from './restrictTool.js';
import {
  digestSurfaceItem,
  digestSurfaceItems,
  surfaceKey,
  type SurfaceDigestResult,
  type SurfaceProfile,
} from './surfaceDigest.js';
import { isObject } from './isObject.js';

/** The members of a prompt definition that are hashed. */
export const PROMPT_MEMBERS = ['name', 'title', 'description', 'arguments'] as const;

/** The members of each prompt argument that are hashed. */
export const PROMPT_ARGUMENT_MEMBERS = ['name', 'title', 'description', 'required'] as const;

/** One hashed prompt member. */
export type PromptMember = (typeof PROMPT_MEMBERS)[number];

/** A prompt definition restricted to the hashed members (and each argument to its own). */
export type RestrictedPrompt = Partial<Record<PromptMember, unknown>>;

/**
 * Restricts a prompt to `name`, `title`, `description`, `arguments`, and each argument that is an
 * object to `name`, `title`, `description`, `required`; null and absent members are omitted,
 * anything else kept as is (an `arguments` that is not an array, an argument that is not an
 * object: hashed as served, so a change to them is still drift).
 */
export function restrictPrompt(prompt: Readonly<Record<string, unknown>>): RestrictedPrompt {
  const restricted: RestrictedPrompt = restrictMembers(prompt, PROMPT_MEMBERS);
  if (Array.isArray(restricted.arguments)) {
    restricted.arguments = restricted.arguments.map((argument: unknown) =>
      isObject(argument) ? restrictMembers(argument, PROMPT_ARGUMENT_MEMBERS) : argument,
    );
  }
  return restricted;
}

/** The fold's overflow key of this surface (entries beyond the first 500). */
export const PROMPTS_OVERFLOW_KEY = 'prompts:overflow';

const PROMPT_SURFACE: SurfaceProfile<RestrictedPrompt> = {
  noun: 'prompt',
  label: PROMPT_PROFILE,
  member: 'prompt',
  nameMember: 'name',
  keyPrefix: 'prompt',
  overflowKey: PROMPTS_OVERFLOW_KEY,
  restrict: restrictPrompt,
};

/** The fold key of a prompt name: `prompt:` + the name encoded as tool names are (`prompt:unnamed`). */
export function encodePromptKey(name: unknown): string {
  return surfaceKey(PROMPT_SURFACE, { name });
}

/** The per-prompt digest: `sha256:` + hex over JCS `{"profile":"toolpin.mcp-prompt-definition.v1","prompt":<restricted>}`. */
export function digestPrompt(prompt: unknown): string {
  return digestSurfaceItem(PROMPT_SURFACE, prompt);
}

/** Digests the `prompts` of a prompts/list result (every page): per-prompt entries and the catalog digest. */
export function digestPromptCatalog(prompts: unknown): SurfaceDigestResult {
  return digestSurfaceItems(PROMPT_SURFACE, prompts);
}
