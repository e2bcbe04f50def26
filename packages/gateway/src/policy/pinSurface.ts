import {
  PROMPT_PROFILE,
  TEMPLATE_PROFILE,
  digestPrompt,
  digestTemplate,
  digestTool,
  encodePromptKey,
  encodeTemplateKey,
  encodeToolKey,
  restrictPrompt,
  restrictTemplate,
  restrictTool,
} from '@toolpin/digest';
import type { DenyReason } from './decision.js';
import type { PinView, SurfacePin } from './pinView.js';

/** The listed surfaces a pin may pin (each listed by its own method, paged, filtered the same way). */
export type ListedSurface = 'tools' | 'prompts' | 'resourceTemplates';

/** Every surface a pin may pin: the listed ones and the server's instructions. */
export type PinnedSurface = ListedSurface | 'instructions';

/** What differs between the listed surfaces; everything else takes one path (docs/pin-surfaces.md). */
export interface SurfaceSpec {
  readonly surface: ListedSurface;
  /** The listing method: `tools/list`, `prompts/list`, `resources/templates/list`. */
  readonly listMethod: string;
  /** The array of the listing result: `tools`, `prompts`, `resourceTemplates`. */
  readonly member: string;
  /** What one item is called in messages. */
  readonly noun: string;
  /**
   * The request that uses one item by name, screened before it goes upstream, and its refusal
   * reasons (none for templates: a resources/read names a URI, not a template).
   */
  readonly use?: {
    readonly method: string;
    readonly drifted: DenyReason;
    readonly notPinned: DenyReason;
  };
  /** The member that names an item (and its key): `name`, or a template's `uriTemplate`. */
  readonly nameMember: string;
  /** The key prefix before `:` (`tool`, `prompt`, `template`). */
  readonly keyPrefix: string;
  /** The key of the fold's overflow entry (`tools:overflow`, `prompts:overflow`, `templates:overflow`). */
  readonly overflowKey: string;
  readonly encodeKey: (name: unknown) => string;
  /** The item's hashed members (what a pinned definition holds). */
  readonly restrict: (item: Readonly<Record<string, unknown>>) => Record<string, unknown>;
  /** The item's digest; throws DigestError when it has none. `profile`: the tool profile of the pin. */
  readonly digest: (item: Readonly<Record<string, unknown>>, profile: string) => string;
}

export const SURFACES: Readonly<Record<ListedSurface, SurfaceSpec>> = {
  tools: {
    surface: 'tools',
    listMethod: 'tools/list',
    member: 'tools',
    noun: 'tool',
    use: { method: 'tools/call', drifted: 'tool_drifted', notPinned: 'tool_not_pinned' },
    nameMember: 'name',
    keyPrefix: 'tool',
    overflowKey: 'tools:overflow',
    encodeKey: encodeToolKey,
    restrict: restrictTool as SurfaceSpec['restrict'],
    digest: (tool, profile) => digestTool(tool, { profile }),
  },
  prompts: {
    surface: 'prompts',
    listMethod: 'prompts/list',
    member: 'prompts',
    noun: 'prompt',
    use: { method: 'prompts/get', drifted: 'prompt_drifted', notPinned: 'prompt_not_pinned' },
    nameMember: 'name',
    keyPrefix: 'prompt',
    overflowKey: 'prompts:overflow',
    encodeKey: encodePromptKey,
    restrict: restrictPrompt,
    digest: (prompt) => digestPrompt(prompt),
  },
  resourceTemplates: {
    surface: 'resourceTemplates',
    listMethod: 'resources/templates/list',
    member: 'resourceTemplates',
    noun: 'resource template',
    nameMember: 'uriTemplate',
    keyPrefix: 'template',
    overflowKey: 'templates:overflow',
    encodeKey: encodeTemplateKey,
    restrict: restrictTemplate,
    digest: (template) => digestTemplate(template),
  },
};

const LISTED: readonly SurfaceSpec[] = Object.values(SURFACES);

/** The surface listed by this method, if any. */
export function surfaceOfListing(method: string): SurfaceSpec | undefined {
  return LISTED.find((spec) => spec.listMethod === method);
}

/** The surface whose item this request uses (`tools/call`, `prompts/get`), if any. */
export function surfaceOfUse(method: string): SurfaceSpec | undefined {
  return LISTED.find((spec) => spec.use?.method === method);
}

/**
 * The surfaces an upstream notification says changed: `resources/list_changed` covers the resource
 * templates too (the specification has no notification of its own for them).
 */
export function surfacesChangedBy(method: string): readonly ListedSurface[] {
  if (method === 'notifications/tools/list_changed') return ['tools'];
  if (method === 'notifications/prompts/list_changed') return ['prompts'];
  if (method === 'notifications/resources/list_changed') return ['resourceTemplates'];
  return [];
}

/** Requests whose result carries the server's instructions (2025: initialize; 2026-07-28: server/discover). */
export function carriesInstructions(method: string): boolean {
  return method === 'initialize' || method === 'server/discover';
}

// One view per pin and surface, made once: the guard compares views by identity (a catalog judged
// under one pin is not reused under another), so the same pin must always give the same view.
const views = new WeakMap<PinView, Map<ListedSurface, PinView>>();

/**
 * The pin of one listed surface, in the shape the tool policy reads (items as `pin.tools`, the
 * surface's catalog digest as `pin.catalog`, its definitions), or undefined when the pin does not
 * pin that surface: a surface the pin does not pin is not enforced (a pin written before).
 */
export function surfacePin(pin: PinView, surface: ListedSurface): PinView | undefined {
  if (surface === 'tools') return pin;
  const section: SurfacePin | undefined = pin.pin[surface];
  if (section === undefined) return undefined;
  let byPin = views.get(pin);
  if (byPin === undefined) {
    byPin = new Map();
    views.set(pin, byPin);
  }
  let view = byPin.get(surface);
  if (view === undefined) {
    view = {
      name: pin.name,
      mode: pin.mode,
      profile: surface === 'prompts' ? PROMPT_PROFILE : TEMPLATE_PROFILE,
      // A prompt's or template's drift is never judged low (the severity rules are the tools').
      onDrift: pin.onDrift,
      pin: { catalog: section.catalog, tools: section.items },
      definitions: ((surface === 'prompts' ? pin.promptDefinitions : pin.templateDefinitions) ??
        {}) as PinView['definitions'],
      extraMembers: {},
    };
    byPin.set(surface, view);
  }
  return view;
}
