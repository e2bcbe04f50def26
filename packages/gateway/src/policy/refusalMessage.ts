import type { DenyData } from './decision.js';
import type { PinView } from './pinView.js';

/** What a refusal's sentence may say beyond its data: known only where the refusal is decided. */
export interface RefusalContext {
  /** `tool_drifted`: the members that differ from the pinned definition (as in the drift event). */
  readonly members?: readonly string[];
  /** `tool_drifted`: the tool itself is verified, but `onDrift: block-server` blocks the whole server. */
  readonly serverBlocked?: boolean;
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
};

/**
 * A tool name as a sentence repeats it: plain when it is a plain identifier, else JSON-quoted and
 * cut at 64 characters (a name may come from the client's request or the upstream's listing).
 */
export function quoteName(name: string): string {
  if (/^[A-Za-z0-9_.:/-]{1,64}$/.test(name)) return name;
  const cut = name.length > 64 ? `${name.slice(0, 64)}…` : name;
  return JSON.stringify(cut);
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

/**
 * The refusal's `error.message`: one sentence a model can repeat to its user, naming the tool,
 * what happened, and the command that reviews it. The stable parts are `error.code` and
 * `error.data.reason`; this text may change (docs/boundary.md#error-codes).
 */
export function refusalMessage(pin: PinView, data: DenyData, context: RefusalContext = {}): string {
  const tool = quoteName(data.tool ?? '(unnamed)');
  const file = pin.file === undefined ? 'the pin file' : shellWord(pin.file);
  const review = (what: string): string => `run \`toolpin approve ${file}${what}\` to review`;
  const approveTool = review(` --tool ${shellWord(data.tool ?? '')}`);
  switch (data.reason) {
    case 'tool_drifted':
      if (context.serverBlocked === true)
        return `toolpin blocked ${tool}: the tools of ${pin.name} changed since they were approved, and its pin blocks the whole server on drift; ${review('')}.`;
      return `toolpin blocked ${tool}: its ${changedMembers(context.members)} changed since it was approved; ${approveTool}.`;
    case 'tool_not_pinned':
      return `toolpin blocked ${tool}: it is not one of the tools approved for ${pin.name}; ${approveTool}.`;
    case 'wrong_subject':
      return `toolpin blocked ${tool}: the server answering as ${pin.name} shares no tool with its pin, so it is not the approved server; check the upstream in ${file}.`;
    case 'unverifiable':
      return `toolpin blocked ${tool}: it could not verify the definition of this tool (as served, or its pinned schema); ${approveTool}.`;
    case 'catalog_unavailable':
      return `toolpin blocked ${tool}: it could not get the tool list of ${pin.name} to check the call against the pin; try again later.`;
    case 'arguments_invalid':
      return `toolpin blocked ${tool}: the call's arguments do not fit the inputSchema approved for it; correct them and call again.`;
    case 'output_invalid':
      return `toolpin blocked the result of ${tool}: its structuredContent does not fit the outputSchema approved for it.`;
  }
}
