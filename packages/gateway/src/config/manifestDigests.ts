import type { RestrictedPrompt, RestrictedTemplate, RestrictedTool } from '@toolpin/digest';
import { MANIFEST_FORMAT, type ManifestBody, type StatedDigests } from './catalogManifest.js';
import type { ApprovedBy, PinConfig, PinnedArtifact } from './types.js';

/** A pinned catalog with the definitions that name its keys: a pin file's, or one just listed. */
export interface NamedCatalog {
  readonly pin: PinConfig;
  readonly profile: string;
  readonly definitions: Readonly<Record<string, RestrictedTool>>;
  readonly promptDefinitions?: Readonly<Record<string, RestrictedPrompt>>;
  readonly templateDefinitions?: Readonly<Record<string, RestrictedTemplate>>;
}

/** Who serves the catalog, as a manifest names it. */
export interface ManifestServer {
  readonly name: string;
  readonly version?: string;
  readonly artifact?: PinnedArtifact;
}

// Every key must name one item: a key with no single definition (duplicate names, the overflow
// entry of a pin written before every tool was listed) cannot be stated by name.
function entriesOf<D, E>(
  items: Readonly<Record<string, string>>,
  definitions: Readonly<Record<string, D>>,
  entry: (definition: D, digest: string) => E,
  what: string,
): E[] {
  return Object.keys(items)
    .sort()
    .map((key) => {
      const definition = Object.hasOwn(definitions, key) ? definitions[key] : undefined;
      if (definition === undefined)
        throw new Error(`${what} ${key} has no single definition in the pin: a manifest names every item`);
      return entry(definition, items[key] ?? '');
    });
}

/**
 * The statement of a manifest for a pinned catalog (`toolpin manifest`): the server, the profile,
 * the tools' catalog digest and every tool's digest by name, and each other pinned surface likewise.
 * Throws an Error when an item of the pin has no definition to name it.
 */
export function manifestFromCatalog(
  catalog: NamedCatalog,
  server: ManifestServer,
  times: { readonly issuedAt: Date; readonly expiresAt?: Date },
): ManifestBody {
  const { pin } = catalog;
  const { prompts, resourceTemplates } = pin;
  return {
    format: MANIFEST_FORMAT,
    server: {
      name: server.name,
      ...(server.version === undefined ? {} : { version: server.version }),
      ...(server.artifact === undefined ? {} : { artifact: { ...server.artifact } }),
    },
    issuedAt: times.issuedAt.toISOString(),
    ...(times.expiresAt === undefined ? {} : { expiresAt: times.expiresAt.toISOString() }),
    profile: catalog.profile,
    catalog: pin.catalog,
    tools: entriesOf(
      pin.tools,
      catalog.definitions,
      (tool, digest) => ({ name: String(tool.name), digest }),
      'tool',
    ),
    ...(prompts === undefined
      ? {}
      : {
          prompts: {
            catalog: prompts.catalog,
            entries: entriesOf(
              prompts.items,
              catalog.promptDefinitions ?? {},
              (prompt, digest) => ({ name: String(prompt.name), digest }),
              'prompt',
            ),
          },
        }),
    ...(resourceTemplates === undefined
      ? {}
      : {
          resourceTemplates: {
            catalog: resourceTemplates.catalog,
            entries: entriesOf(
              resourceTemplates.items,
              catalog.templateDefinitions ?? {},
              (template, digest) => ({ uriTemplate: String(template.uriTemplate), digest }),
              'resource template',
            ),
          },
        }),
    ...(pin.instructions === undefined ? {} : { instructions: pin.instructions }),
  };
}

/** One way the live catalog differs from a manifest: an item, or a whole surface's digest. */
export interface ManifestDifference {
  /** `tools`, `prompts`, `resourceTemplates`, `instructions`, `profile`. */
  readonly surface: string;
  /** The item's fold key; absent for the surface's catalog digest. */
  readonly key?: string;
  /** What the manifest states (absent: it does not list the item). */
  readonly stated?: string;
  /** What the live server serves (absent: it does not serve the item). */
  readonly observed?: string;
}

function diffItems(
  surface: string,
  stated: Readonly<Record<string, string>>,
  observed: Readonly<Record<string, string>>,
): ManifestDifference[] {
  const keys = [...new Set([...Object.keys(stated), ...Object.keys(observed)])].sort();
  const differences: ManifestDifference[] = [];
  for (const key of keys) {
    const want = Object.hasOwn(stated, key) ? stated[key] : undefined;
    const have = Object.hasOwn(observed, key) ? observed[key] : undefined;
    if (want !== have)
      differences.push({
        surface,
        key,
        ...(want === undefined ? {} : { stated: want }),
        ...(have === undefined ? {} : { observed: have }),
      });
  }
  return differences;
}

/**
 * Compares the digests a manifest states with the pin of the live catalog (under the manifest's
 * profile): every item of every surface the manifest states, and each surface's catalog digest.
 * Empty: the live catalog is the published one. A surface the manifest does not state is not compared.
 */
export function diffAgainstManifest(stated: StatedDigests, observed: PinConfig): ManifestDifference[] {
  const differences = diffItems('tools', stated.tools, observed.tools);
  // The catalog digest folds the same entries: said apart only when no item explains it.
  if (differences.length === 0 && stated.catalog !== observed.catalog)
    differences.push({ surface: 'tools', stated: stated.catalog, observed: observed.catalog });
  for (const surface of ['prompts', 'resourceTemplates'] as const) {
    const want = stated[surface];
    if (want === undefined) continue;
    const have = observed[surface];
    const items = diffItems(surface, want.items, have?.items ?? {});
    differences.push(...items);
    if (items.length === 0 && want.catalog !== have?.catalog)
      differences.push({
        surface,
        stated: want.catalog,
        ...(have === undefined ? {} : { observed: have.catalog }),
      });
  }
  if (stated.instructions !== undefined && stated.instructions !== observed.instructions)
    differences.push({
      surface: 'instructions',
      stated: stated.instructions,
      ...(observed.instructions === undefined ? {} : { observed: observed.instructions }),
    });
  return differences;
}

const SURFACE_ITEM: Readonly<Record<string, string>> = {
  tools: 'tool',
  prompts: 'prompt',
  resourceTemplates: 'resource template',
  instructions: 'instructions',
};

// `sha256:` and 12 hex digits: enough to tell two digests apart on a terminal line.
const short = (digest: string | undefined): string => (digest === undefined ? '' : digest.slice(0, 19));

/** One line of the diff a refusal prints (`  ~ tool echo: …`, `  + …`, `  - …`). */
export function describeDifference(difference: ManifestDifference): string {
  const { surface, key, stated, observed } = difference;
  // The fold key without its prefix: the name as a terminal shows it (percent-encoded where it must be).
  const what =
    key === undefined
      ? `${surface} catalog`
      : `${SURFACE_ITEM[surface] ?? surface} ${key.slice(key.indexOf(':') + 1)}`;
  if (stated === undefined) return `  + ${what}: served, not in the manifest`;
  if (observed === undefined) return `  - ${what}: in the manifest, not served`;
  return `  ~ ${what}: the manifest states ${short(stated)}…, the server serves ${short(observed)}…`;
}

/** Where a pin's first approval came from, on one line (`toolpin check`, the review page). */
export function describeApprovedBy(approvedBy: ApprovedBy): string {
  return `approved by manifest ${approvedBy.manifest} of ${approvedBy.server ?? '?'} (key ${approvedBy.kid}, from ${approvedBy.source})`;
}
