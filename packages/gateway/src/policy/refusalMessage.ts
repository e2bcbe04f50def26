import type { DenyData } from './decision.js';
import type { PinView } from './pinView.js';

/** What a refusal's sentence may say beyond its data: known only where the refusal is decided. */
export interface RefusalContext {
  /** `tool_drifted`: the members that differ from the pinned definition (as in the drift event). */
  readonly members?: readonly string[];
  /** `tool_drifted`: the tool itself is verified, but `onDrift: block-server` blocks the whole server. */
  readonly serverBlocked?: boolean;
  /** The refusal is of a call's result (its structuredContent), not of the call. */
  readonly result?: boolean;
}

// How a member is named to a person; any other member name is not repeated (it came from upstream).
const MEMBER_WORDS: Readonly<Record<string, string>> = {
  name: 'name',
  title: 'title',
  description: 'description',
  inputSchema: 'input schema',
  outputSchema: 'output schema',
  annotations: 'annotations',
  icons: 'icons',
  execution: 'execution settings',
  _meta: '_meta',
  arguments: 'arguments',
  uriTemplate: 'URI template',
  mimeType: 'MIME type',
};

/**
 * A tool name as a sentence repeats it: plain when it is a plain identifier, else JSON-quoted and
 * cut at 64 characters (a name may come from the client's request or the upstream's listing).
 */
export function quoteName(name: string): string {
  if (/^[A-Za-z0-9_.:/-]{1,64}$/.test(name)) return name;
  const cut = name.length > 64 ? `${name.slice(0, 64)}…` : name;
  // JSON escapes control characters, not format ones (bidi overrides) nor line separators.
  return JSON.stringify(cut).replace(
    /[\p{Cf}\u2028\u2029]/gu,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** A name the suggested command may repeat: at most 64 characters, none of them control or format. */
function repeatable(name: string): boolean {
  return /^[^\p{Cc}\p{Cf}\u2028\u2029]{1,64}$/u.test(name);
}

/** A shell word for the command a sentence suggests: single-quoted unless it is plain. */
export function shellWord(word: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(word)) return word;
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

function listWords(words: readonly string[]): string {
  if (words.length <= 1) return words.join('');
  return `${words.slice(0, -1).join(', ')} and ${words.at(-1) ?? ''}`;
}

function changedMembers(members: readonly string[] | undefined): string {
  const words = [...new Set((members ?? []).map((member) => MEMBER_WORDS[member] ?? 'other members'))];
  return words.length === 0 ? 'definition' : listWords(words);
}

/** What a refusal names: the item's kind (its approve option), how the sentence names it, its name. */
function subjectOf(data: DenyData): {
  item: 'tool' | 'prompt' | 'template';
  subject: string;
  itemName: string;
} {
  if (data.prompt !== undefined)
    return { item: 'prompt', subject: `the prompt ${quoteName(data.prompt)}`, itemName: data.prompt };
  if (data.template !== undefined)
    return {
      item: 'template',
      subject: `the resource template ${quoteName(data.template)}`,
      itemName: data.template,
    };
  return { item: 'tool', subject: quoteName(data.tool ?? '(unnamed)'), itemName: data.tool ?? '' };
}

/**
 * The refusal's `error.message`: one sentence a model can repeat to its user, naming the tool,
 * what happened, and the command that reviews it. The stable parts are `error.code` and
 * `error.data.reason`; this text may change (docs/boundary.md#error-codes).
 */
export function refusalMessage(pin: PinView, data: DenyData, context: RefusalContext = {}): string {
  // A prompts/get names its prompt (data.prompt), a completion a prompt or a template
  // (data.template); a tools/call its tool.
  const { item, subject, itemName } = subjectOf(data);
  const file = pin.file === undefined ? 'the pin file' : shellWord(pin.file);
  const review = (what: string): string => `run \`toolpin approve ${file}${what}\` to review`;
  // A name too long or with control characters is not repeated: the command then reviews the pin.
  const approveItem = review(repeatable(itemName) ? ` --${item} ${shellWord(itemName)}` : '');
  switch (data.reason) {
    case 'tool_drifted':
    case 'prompt_drifted':
    case 'template_drifted':
      if (context.serverBlocked === true)
        return `toolpin blocked ${subject}: the ${item}s of ${pin.name} changed since they were approved, and its pin blocks the whole server on drift; ${review('')}.`;
      return `toolpin blocked ${subject}: its ${changedMembers(context.members)} changed since it was approved; ${approveItem}.`;
    case 'tool_not_pinned':
    case 'prompt_not_pinned':
    case 'template_not_pinned':
      return `toolpin blocked ${subject}: it is not one of the ${item}s approved for ${pin.name}; ${approveItem}.`;
    case 'wrong_subject':
      return `toolpin blocked ${subject}: the server answering as ${pin.name} shares no ${item} with its pin, so it is not the approved server; check the upstream in ${file}.`;
    case 'unverifiable':
      if (data.bound !== undefined) return overBudgetMessage(subject, data.bound, context.result === true);
      return `toolpin blocked ${subject}: it could not verify the definition of this ${item} (as served, or its pinned schema); ${approveItem}.`;
    case 'catalog_unavailable':
      return `toolpin blocked ${subject}: it could not get the ${item} list of ${pin.name} to check the ${item === 'tool' ? 'call' : 'request'} against the pin; try again later.`;
    case 'arguments_invalid':
      return `toolpin blocked ${subject}: the call's arguments do not fit the inputSchema approved for it; correct them and call again.`;
    case 'output_invalid':
      return `toolpin blocked the result of ${subject}: its structuredContent does not fit the outputSchema approved for it.`;
    case 'not_in_scope':
      return data.principal === null || data.principal === undefined
        ? `toolpin blocked ${subject}: this request matches no principal of the gateway, so no ${item} of ${pin.name} is in its scope.`
        : `toolpin blocked ${subject}: it is not in the scope of ${quoteName(data.principal)} on ${pin.name}.`;
  }
}

/** Why a value was not checked against its pinned schema: too large, or too costly for that schema. */
function overBudgetMessage(subject: string, bound: string, result: boolean): string {
  // `evaluations`: the schema applies its subschemas to the value too many times (a recursion
  // through branches), which a smaller or less nested value avoids.
  const costly = bound === 'evaluations';
  return result
    ? `toolpin blocked the result of ${subject}: its structuredContent ${costly ? 'would cost too much' : 'is too large'} to check against the outputSchema approved for it.`
    : `toolpin blocked ${subject}: the call's arguments ${costly ? 'would cost too much' : 'are too large'} to check against the inputSchema approved for it; send smaller${costly ? ', less nested' : ''} arguments.`;
}
