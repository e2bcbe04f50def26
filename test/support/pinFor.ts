import {
  digestCatalog,
  digestInstructions,
  digestPromptCatalog,
  digestTemplateCatalog,
  restrictPrompt,
  restrictTemplate,
  restrictTool,
  TRACE_PROFILE,
} from '@toolpin/digest';

/** Options of {@link pinFor}. */
export interface PinForOptions {
  mode?: 'enforce' | 'monitor';
  /** One action, or one per severity (`{ high: 'filter', low: 'flag' }`). @default 'filter' */
  onDrift?:
    'filter' | 'block-server' | { high: 'filter' | 'block-server'; low: 'filter' | 'block-server' | 'flag' };
  profile?: string;
  /** Keep the pinned definitions in the pin (for drift explanations). @default true */
  definitions?: boolean;
  /**
   * Record the members outside the six (`_meta`, `icons`…) in the definitions, as `toolpin pin`
   * does; false writes a pin of the earlier format, whose tools reach clients with six members. @default true
   */
  extraMembers?: boolean;
}

// A definition as a pin file records it: every member with a value, or the six hashed ones only.
function pinnedDefinition(tool: Record<string, unknown>, extraMembers: boolean): Record<string, unknown> {
  if (!extraMembers) return restrictTool(tool);
  return Object.fromEntries(
    Object.entries(tool).filter(([, value]) => value !== null && value !== undefined),
  );
}

/** A pin-file object approving exactly `tools` for the server at `url`. */
export function pinFor(
  name: string,
  url: string,
  tools: readonly object[],
  options: PinForOptions = {},
): Record<string, unknown> {
  const profile = options.profile ?? TRACE_PROFILE;
  const digest = digestCatalog(tools, { profile });
  const pin: Record<string, unknown> = {
    name,
    upstream: { url },
    mode: options.mode ?? 'enforce',
    profile,
    onDrift: options.onDrift ?? 'filter',
    pin: { catalog: digest.catalog, tools: digest.entries },
  };
  if (options.definitions ?? true) {
    pin.definitions = Object.fromEntries(
      digest.tools.map((tool, index) => [
        tool.key,
        pinnedDefinition(tools[index] as Record<string, unknown>, options.extraMembers ?? true),
      ]),
    );
  }
  return pin;
}

/** What a server tells the model besides its tools, as listed (see {@link withSurfaces}). */
export interface ServedSurfaces {
  readonly prompts?: readonly object[];
  readonly resourceTemplates?: readonly object[];
  /** The instructions text; null pins their absence. */
  readonly instructions?: string | null;
}

/**
 * A pin-file object (see {@link pinFor}) that also pins `surfaces`, as `toolpin pin` records them:
 * each surface's catalog digest and items, the definitions under `prompt:` / `template:` keys,
 * the instructions' digest and text.
 */
export function withSurfaces(
  pin: Record<string, unknown>,
  surfaces: ServedSurfaces,
): Record<string, unknown> {
  const section = { ...(pin.pin as Record<string, unknown>) };
  const definitions = { ...((pin.definitions as Record<string, unknown> | undefined) ?? {}) };
  const out: Record<string, unknown> = { ...pin };
  if (surfaces.prompts !== undefined) {
    const digest = digestPromptCatalog(surfaces.prompts);
    section.prompts = { catalog: digest.catalog, items: digest.entries };
    digest.items.forEach((item, index) => {
      definitions[item.key] = restrictPrompt(surfaces.prompts?.[index] as Record<string, unknown>);
    });
  }
  if (surfaces.resourceTemplates !== undefined) {
    const digest = digestTemplateCatalog(surfaces.resourceTemplates);
    section.resourceTemplates = { catalog: digest.catalog, items: digest.entries };
    digest.items.forEach((item, index) => {
      definitions[item.key] = restrictTemplate(
        surfaces.resourceTemplates?.[index] as Record<string, unknown>,
      );
    });
  }
  if (surfaces.instructions !== undefined) {
    section.instructions = digestInstructions(surfaces.instructions ?? undefined);
    if (surfaces.instructions !== null) out.instructions = surfaces.instructions;
  }
  out.pin = section;
  out.definitions = definitions;
  return out;
}
