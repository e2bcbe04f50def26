import { asDigestError, quoteJsonString, writeJson } from './canonicalizeJson.js';
import { DigestError, describeJsonType, describeTool } from './digestError.js';
import { resolveProfile, type DigestOptions } from './profiles.js';
import { sha256Digest } from './sha256.js';

// The hashed members in JCS order (UTF-16 code-unit order). Writing them in this fixed order
// skips building the restricted object and sorting its keys for every tool.
const MEMBERS_IN_JCS_ORDER = ['annotations', 'description', 'inputSchema', 'name', 'outputSchema', 'title'];
const MEMBER_PREFIXES = MEMBERS_IN_JCS_ORDER.map((member) => JSON.stringify(member) + ':');

// The wrapper {"profile":…,"tool":…} is written as a literal prefix and suffix, which is valid
// JCS only because "profile" sorts before "tool". The prefix is cached per label.
let cachedProfile = '';
let cachedPrefix = '';

function wrapperPrefix(profile: string): string {
  if (profile !== cachedProfile || cachedPrefix === '') {
    cachedPrefix = '{"profile":' + quoteJsonString(profile) + ',"tool":';
    cachedProfile = profile;
  }
  return cachedPrefix;
}

/** True for a value that can be a tool definition: a non-null, non-array object. */
function isToolObject(tool: unknown): tool is Record<string, unknown> {
  return typeof tool === 'object' && tool !== null && !Array.isArray(tool);
}

/** The canonical preimage of one tool, without validating that it is an object. */
function toolPreimage(tool: Record<string, unknown>, profile: string): string {
  let out = wrapperPrefix(profile) + '{';
  let first = true;
  for (let i = 0; i < MEMBERS_IN_JCS_ORDER.length; i++) {
    const value = tool[MEMBERS_IN_JCS_ORDER[i] as string];
    // null and absent are the same (spec section 3, step 1).
    if (value === null || value === undefined) continue;
    if (first) first = false;
    else out += ',';
    out += MEMBER_PREFIXES[i] as string;
    // The tool object is depth 1, so its members' containers start at 2.
    out += writeJson(value, 2);
  }
  return out + '}}';
}

function nameOf(tool: Record<string, unknown>): { name?: string } {
  return typeof tool.name === 'string' ? { name: tool.name } : {};
}

/**
 * The per-tool digest (spec section 3): `sha256:` + 64 lowercase hex over the JCS form of
 * `{"profile":<label>,"tool":<restricted tool>}`. Throws DigestError DIGEST_TOOL_NOT_OBJECT,
 * DIGEST_NOT_CANONICAL or DIGEST_TOO_DEEP (naming the tool).
 */
export function digestTool(tool: unknown, options?: DigestOptions): string {
  if (!isToolObject(tool)) {
    const reason = `a tool definition must be a JSON object, got ${describeJsonType(tool)}`;
    throw new DigestError('DIGEST_TOOL_NOT_OBJECT', reason, { reason });
  }
  let preimage: string;
  try {
    preimage = toolPreimage(tool, resolveProfile(options));
  } catch (caught) {
    const error = asDigestError(caught);
    if (!(error instanceof DigestError)) throw error;
    const data = { ...nameOf(tool), ...error.data };
    throw new DigestError(error.code, `${describeTool(data)} has no digest: ${error.message}`, data, {
      cause: error,
    });
  }
  return sha256Digest(preimage);
}
