import { digestTool, encodeToolKey, restrictTool } from '@toolpin/digest';
import { pinSurfaceOf, type PinnedSurface as PinnedBeside } from '../config/pinSurfaces.js';
import { SURFACE_LISTINGS, type ListedSurface, type SurfaceListing } from '../wire/listedSurfaces.js';
import type { DenyReason } from './decision.js';
import type { PinView, SurfacePin } from './pinView.js';

export type { ListedSurface } from '../wire/listedSurfaces.js';

/** Every surface a pin may pin: the listed ones and the server's instructions. */
export type PinnedSurface = ListedSurface | 'instructions';

/**
 * What the gateway's one path needs of a listed surface (how it is listed: wire/listedSurfaces.ts;
 * how its items are keyed and digested: config/pinSurfaces.ts, the tool derivation for tools), and
 * the request that uses one of its items. Everything else takes the tools' path (docs/pin-surfaces.md).
 */
export interface SurfaceSpec extends SurfaceListing {
  /**
   * How a request that uses one item is refused, and the request that names it in `params.name`
   * (`tools/call`, `prompts/get`; none for templates: a resources/read names a URI, not a template,
   * and a completion/complete names one in `params.ref`: see {@link useOfRequest}).
   */
  readonly use: {
    readonly method?: string;
    readonly drifted: DenyReason;
    readonly notPinned: DenyReason;
  };
  /** The member that names an item (and its key): `name`, or a template's `uriTemplate`. */
  readonly nameMember: string;
  /** The hashed members of one item (prompts, templates; tools: the six of the tool derivation). */
  readonly members?: readonly string[];
  /** The key of the fold's overflow entry (`prompts:overflow`, `templates:overflow`; tools: the fold's own). */
  readonly overflowKey?: string;
  readonly encodeKey: (name: unknown) => string;
  /** The item's hashed members (what a pinned definition holds). */
  readonly restrict: (item: Readonly<Record<string, unknown>>) => Record<string, unknown>;
  /** The item's digest; throws DigestError when it has none. `profile`: the tool profile of the pin. */
  readonly digest: (item: Readonly<Record<string, unknown>>, profile: string) => string;
}

/** A surface beside tools: its listing and pin facts (config/pinSurfaces.ts), and the request that uses an item. */
function otherSurface(surface: PinnedBeside, use: SurfaceSpec['use']): SurfaceSpec {
  const pinned = pinSurfaceOf(surface);
  return {
    ...SURFACE_LISTINGS[surface],
    use,
    nameMember: pinned.nameMember,
    members: pinned.members,
    overflowKey: pinned.overflowKey,
    encodeKey: pinned.encodeKey,
    restrict: pinned.restrict,
    digest: (item) => pinned.digest(item),
  };
}

export const SURFACES: Readonly<Record<ListedSurface, SurfaceSpec>> = {
  tools: {
    ...SURFACE_LISTINGS.tools,
    use: { method: 'tools/call', drifted: 'tool_drifted', notPinned: 'tool_not_pinned' },
    nameMember: 'name',
    encodeKey: encodeToolKey,
    restrict: restrictTool as SurfaceSpec['restrict'],
    digest: (tool, profile) => digestTool(tool, { profile }),
  },
  prompts: otherSurface('prompts', {
    method: 'prompts/get',
    drifted: 'prompt_drifted',
    notPinned: 'prompt_not_pinned',
  }),
  resourceTemplates: otherSurface('resourceTemplates', {
    drifted: 'template_drifted',
    notPinned: 'template_not_pinned',
  }),
};

/** Every entry of {@link SURFACES}, once (no array to build per message). */
export const LISTED_SURFACES: readonly SurfaceSpec[] = Object.freeze(Object.values(SURFACES));

/** The surface listed by this method, if any. */
export function surfaceOfListing(method: string): SurfaceSpec | undefined {
  return LISTED_SURFACES.find((spec) => spec.method === method);
}

/** The surface whose item this request names in `params.name` (`tools/call`, `prompts/get`), if any. */
export function surfaceOfUse(method: string): SurfaceSpec | undefined {
  return LISTED_SURFACES.find((spec) => spec.use.method === method);
}

/**
 * The request that reads a resource by a concrete URI (`params.uri`): it names no template, so it
 * is screened apart, by the templates its URI matches (checkpoint/screenCall.ts, docs/scopes.md).
 */
export const READ_METHOD = 'resources/read';

/** The request that names a prompt or a resource template in `params.ref` (MCP completions). */
export const COMPLETION_METHOD = 'completion/complete';

/**
 * The item a request uses: its surface, and the name it gives (not checked yet: screenCall refuses
 * a name that is not a string). `tools/call` and `prompts/get` name it in `params.name`;
 * `completion/complete` in `params.ref`, a prompt (`{type: 'ref/prompt', name}`) or a resource
 * template (`{type: 'ref/resource', uri: <uriTemplate>}`). A completion whose ref is neither is
 * `malformed`: it names no item, so it is refused wherever prompts or templates are pinned.
 * Undefined: the request uses no item.
 */
export function useOfRequest(
  method: string,
  params: unknown,
):
  | {
      readonly spec: SurfaceSpec;
      readonly name: unknown;
      readonly malformed?: true;
      readonly lookalike?: true;
    }
  | undefined {
  const named = surfaceOfUse(method);
  if (named !== undefined) return { spec: named, name: memberOf(params, 'name') };
  if (method !== COMPLETION_METHOD) {
    const like = LOOKALIKES.get(foldMethod(method));
    return like === undefined ? undefined : { spec: like, name: undefined, lookalike: true };
  }
  const ref = memberOf(params, 'ref');
  const type = memberOf(ref, 'type');
  if (type === 'ref/prompt') return { spec: SURFACES.prompts, name: memberOf(ref, 'name') };
  if (type === 'ref/resource') return { spec: SURFACES.resourceTemplates, name: memberOf(ref, 'uri') };
  return { spec: SURFACES.prompts, name: undefined, malformed: true };
}

/**
 * A method that is not a screened one but reads as one to an upstream that folds case, width or
 * spacing (`Tools/Call`, `tools/call `, `ｔｏｏｌｓ/call`): it is refused, never forwarded unscreened.
 * Also the foldings of other readers: a C string ends at its first NUL (`tools/call\0…`); Java's
 * equalsIgnoreCase matches a char upper-cased or lower-cased (`ı` and `İ` read as `i`: upper then
 * lower, marks dropped); format characters (zero-width space, soft hyphen) are invisible; a Python
 * dispatcher that names handlers after methods (python-jsonrpc-server's MethodDispatcher: `/` as `__`,
 * `$` dropped) runs `tools__call` and `$tools/call` as `m_tools__call`.
 */
function foldMethod(method: string): string {
  const cString = method.split('\0', 1)[0] ?? '';
  return cString
    .normalize('NFKC')
    .toUpperCase()
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[\s\p{M}\p{Cf}]+/gu, '')
    .replace(/\$/g, '')
    .replace(/__/g, '/');
}

const LOOKALIKES: ReadonlyMap<string, SurfaceSpec> = new Map([
  ...LISTED_SURFACES.flatMap((spec) =>
    spec.use.method === undefined ? [] : [[spec.use.method, spec] as const],
  ),
  [COMPLETION_METHOD, SURFACES.prompts] as const,
]);

function memberOf(value: unknown, member: string): unknown {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)[member]
    : undefined;
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

// One view per pin and surface, made once: the checkpoint compares views by identity (a catalog judged
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
      profile: pinSurfaceOf(surface).label,
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
