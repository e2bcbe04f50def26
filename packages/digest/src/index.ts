/** Preimage label of the trace.mcp-tool-definition.v1 derivation (the default). */
export { TRACE_PROFILE } from './profiles.js';
/** Preimage label AgentAvow publishes for the same derivation. */
export { AGENTAVOW_PROFILE } from './profiles.js';
/** Options shared by every hashing function: the profile label. */
export type { DigestOptions } from './profiles.js';
/** The six members of a tool definition that are hashed. */
export { HASHED_MEMBERS } from './restrictTool.js';
/** One hashed member name, and a definition restricted to them. */
export type { HashedMember, RestrictedTool } from './restrictTool.js';
/** Restricts a tool to the hashed members, omitting null and absent ones. */
export { restrictTool } from './restrictTool.js';
/** RFC 8785 (JCS) serialization, byte-identical to the canonicalize package, and faster. */
export { canonicalizeJson } from './canonicalizeJson.js';
/** How deep a value may nest to have a digest (deeper: DigestError DIGEST_TOO_DEEP). */
export { MAX_CANONICAL_DEPTH } from './canonicalizeJson.js';
/** The per-tool digest: `sha256:` + hex over the JCS form of {profile, tool}. */
export { digestTool } from './toolDigest.js';
/** The printable-ASCII, bounded fold key of a tool name (`tool:…`). */
export { encodeToolKey } from './toolKey.js';
/** Folds per-tool {key, digest} pairs into the catalog digest (duplicates and overflow rules). */
export { foldCatalog } from './catalogFold.js';
/** The result of folding a catalog, and the fold's options (profile, overflow key). */
export type { CatalogFold, FoldOptions } from './catalogFold.js';
/** How many folded entries a catalog keeps before the rest fold into its overflow entry (500). */
export { MAX_CATALOG_ENTRIES } from './catalogFold.js';
/** The key of the tools' overflow entry (`tools:overflow`): every entry beyond the first 500 folds into it. */
export { TOOLS_OVERFLOW_KEY } from './catalogFold.js';
/** Digests a whole tools array: per-tool entries and the catalog digest. */
export { digestCatalog } from './catalogDigest.js';
/** One tool of a digested catalog, and the whole result. */
export type { ToolEntry, CatalogDigestResult } from './catalogDigest.js';
/** RFC 6901 pointers of the deepest places where two JSON values differ. */
export { changedPointers } from './definitionPaths.js';
/** Compares a pinned catalog side with an observed one, naming changed members and paths. */
export { diffCatalogs } from './catalogDiff.js';
/** The definition a catalog side records under a tool key, if any. */
export { definitionOf } from './catalogDiff.js';
/** Inputs and output of diffCatalogs. */
export type { CatalogSide, ToolChange, CatalogDiff, DiffOptions } from './catalogDiff.js';
/** The package's single error class, with a stable `code` and `data`. */
export { DigestError } from './digestError.js';
/** The stable error codes, and the data an error carries. */
export type { DigestErrorCode, DigestErrorData } from './digestError.js';
/** toolpin's preimage labels of the other pinned surfaces: prompts, resource templates, server instructions. */
export { PROMPT_PROFILE, TEMPLATE_PROFILE, INSTRUCTIONS_PROFILE } from './profiles.js';
/** The fold key of a name under any prefix (`tool`, `prompt`, `template`): the tool-name encoding. */
export { encodeFoldKey } from './foldKey.js';
/** The hashed members of a prompt and of each of its arguments. */
export { PROMPT_MEMBERS, PROMPT_ARGUMENT_MEMBERS, PROMPTS_OVERFLOW_KEY } from './promptDigest.js';
/** One hashed prompt member, and a prompt restricted to them. */
export type { PromptMember, RestrictedPrompt } from './promptDigest.js';
/** Restricts, keys and digests prompts (`prompt:<name>`), one or a whole prompts/list. */
export { restrictPrompt, encodePromptKey, digestPrompt, digestPromptCatalog } from './promptDigest.js';
/** The hashed members of a resource template, and the overflow key of their fold. */
export { TEMPLATE_MEMBERS, TEMPLATES_OVERFLOW_KEY } from './templateDigest.js';
/** One hashed resource template member, and a template restricted to them. */
export type { TemplateMember, RestrictedTemplate } from './templateDigest.js';
/** Restricts, keys and digests resource templates (`template:<uriTemplate>`), one or a whole list. */
export {
  restrictTemplate,
  encodeTemplateKey,
  digestTemplate,
  digestTemplateCatalog,
} from './templateDigest.js';
/** The digest of a server's instructions (absent and "" differ). */
export { digestInstructions } from './instructionsDigest.js';
/** One item of a digested prompt or template listing, and the whole result. */
export type { SurfaceEntry, SurfaceDigestResult } from './surfaceDigest.js';
