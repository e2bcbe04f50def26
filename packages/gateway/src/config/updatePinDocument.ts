import { restrictTool } from '@toolpin/digest';
import { PIN_SURFACES, type PinnedSurface } from './pinSurfaces.js';
import { isMap, parseDocument, type Document } from 'yaml';
import { extraMembersOf, joinDefinition, type PinnedDefinition } from '../explain/extraMembers.js';
import { pinDocument } from './serializePinFile.js';
import type { ApprovedBy, PinConfig, SurfacePinConfig } from './types.js';
import { isObject } from '../wire/isObject.js';

/**
 * What a pin rewrite changes: the new pin, and the definitions to set (every member) or drop, of
 * any surface (keys `tool:`, `prompt:`, `template:`). `pin.catalog` and `pin.tools` are always
 * written; `pin.prompts`, `pin.resourceTemplates`, `pin.instructions` and `pin.artifact` are written when present
 * and left as the file has them when absent (an update never unpins a surface).
 */
export interface PinDocumentUpdate {
  readonly pin: PinConfig;
  readonly definitions: {
    readonly set: Readonly<Record<string, PinnedDefinition>>;
    readonly remove: readonly string[];
  };
  /** The top-level instructions text: a string is written, `null` removes it, absent leaves it. */
  readonly instructions?: string | null;
  /** Where the first approval came from (a catalog manifest): written when present. */
  readonly approvedBy?: ApprovedBy;
}

// A definition is written in its surface's member order: a prompt or template has its hashed
// members only, a tool its six and then the members pinned by value.
function orderMembers(key: string, definition: PinnedDefinition): PinnedDefinition {
  const surface = PIN_SURFACES.find((candidate) => key.startsWith(candidate.prefix));
  if (surface !== undefined) return surface.restrict(definition);
  return joinDefinition(restrictTool(definition), extraMembersOf(definition));
}

/** The sections beside tools an update carries, each with its new pin. */
function surfacesOf(pin: PinConfig): [PinnedSurface, SurfacePinConfig][] {
  return PIN_SURFACES.flatMap(({ section }) => {
    const surface = pin[section];
    return surface === undefined ? [] : [[section, surface] as [PinnedSurface, SurfacePinConfig]];
  });
}

function sorted<T>(record: Readonly<Record<string, T>>): Record<string, T> {
  return Object.fromEntries(
    Object.keys(record)
      .sort()
      .map((key) => [key, record[key] as T]),
  );
}

// Existing keys keep their place (and, in YAML, their comments); new keys are appended sorted.
function mergeTools(
  existing: Record<string, unknown>,
  tools: Readonly<Record<string, string>>,
): Record<string, unknown> {
  const merged: Record<string, unknown> = {};
  for (const key of Object.keys(existing)) if (Object.hasOwn(tools, key)) merged[key] = tools[key];
  for (const key of Object.keys(tools).sort()) if (!Object.hasOwn(merged, key)) merged[key] = tools[key];
  return merged;
}

// The overflow entry follows its map: written beyond 500 items, gone when the map shrinks.
function setOverflow(section: Record<string, unknown>, overflow: string | undefined): void {
  if (overflow === undefined) delete section.overflow;
  else section.overflow = overflow;
}

function updateYamlOverflow(doc: Document, path: string[], overflow: string | undefined): void {
  if (overflow !== undefined) doc.setIn(path, overflow);
  else if (doc.hasIn(path)) doc.deleteIn(path);
}

function updateJson(text: string, update: PinDocumentUpdate): string {
  const document = JSON.parse(text) as Record<string, unknown>;
  const currentPin = isObject(document.pin) ? document.pin : {};
  const current = isObject(currentPin.tools) ? currentPin.tools : {};
  const pin: Record<string, unknown> = isObject(document.pin) ? { ...currentPin } : {};
  pin.catalog = update.pin.catalog;
  pin.tools = mergeTools(current, update.pin.tools);
  setOverflow(pin, update.pin.overflow);
  for (const [section, surface] of surfacesOf(update.pin)) {
    const old = isObject(currentPin[section]) ? currentPin[section] : {};
    const items = isObject(old.items) ? old.items : {};
    pin[section] = { catalog: surface.catalog, items: mergeTools(items, surface.items) };
    setOverflow(pin[section] as Record<string, unknown>, surface.overflow);
  }
  if (update.pin.instructions !== undefined) pin.instructions = update.pin.instructions;
  if (update.pin.artifact !== undefined) pin.artifact = { ...update.pin.artifact };
  document.pin = pin;
  const definitions = isObject(document.definitions) ? document.definitions : {};
  for (const key of update.definitions.remove) delete definitions[key];
  for (const [key, definition] of Object.entries(sorted(update.definitions.set)))
    definitions[key] = orderMembers(key, definition);
  if (isObject(document.definitions) || Object.keys(definitions).length > 0)
    document.definitions = definitions;
  if (update.instructions === null) delete document.instructions;
  else if (update.instructions !== undefined) document.instructions = update.instructions;
  if (update.approvedBy !== undefined) document.approvedBy = { ...update.approvedBy };
  return JSON.stringify(document, null, 2) + '\n';
}

function updateYamlTools(doc: Document, tools: Readonly<Record<string, string>>, path: string[]): void {
  const node = doc.getIn(path, true);
  if (!isMap(node)) {
    doc.setIn(path, doc.createNode(sorted(tools)));
    return;
  }
  const existing = (node.toJSON() ?? {}) as Record<string, unknown>;
  for (const key of Object.keys(existing)) if (!Object.hasOwn(tools, key)) node.delete(key);
  for (const [key, digest] of Object.entries(mergeTools(existing, tools))) {
    if (existing[key] !== digest) node.set(key, digest);
  }
}

function updateYaml(text: string, update: PinDocumentUpdate): string {
  const doc = parseDocument(text, { version: '1.2', merge: false, uniqueKeys: true });
  if (doc.errors.length > 0) throw doc.errors[0];
  if (isMap(doc.get('pin', true))) {
    doc.setIn(['pin', 'catalog'], update.pin.catalog);
    updateYamlTools(doc, update.pin.tools, ['pin', 'tools']);
    updateYamlOverflow(doc, ['pin', 'overflow'], update.pin.overflow);
    for (const [section, surface] of surfacesOf(update.pin)) {
      if (!isMap(doc.getIn(['pin', section], true))) doc.setIn(['pin', section], doc.createNode({}));
      doc.setIn(['pin', section, 'catalog'], surface.catalog);
      updateYamlTools(doc, surface.items, ['pin', section, 'items']);
      updateYamlOverflow(doc, ['pin', section, 'overflow'], surface.overflow);
    }
    if (update.pin.instructions !== undefined) doc.setIn(['pin', 'instructions'], update.pin.instructions);
    if (update.pin.artifact !== undefined)
      doc.setIn(['pin', 'artifact'], doc.createNode({ ...update.pin.artifact }));
  } else {
    // `pin: trust-on-first-use` (or anything else that is not a mapping) becomes the pin.
    doc.set('pin', doc.createNode(pinDocument(update.pin)));
  }
  const { set, remove } = update.definitions;
  if (!isMap(doc.get('definitions', true)) && Object.keys(set).length > 0)
    doc.set('definitions', doc.createNode({}));
  for (const key of remove) if (doc.hasIn(['definitions', key])) doc.deleteIn(['definitions', key]);
  for (const [key, definition] of Object.entries(sorted(set))) {
    doc.setIn(['definitions', key], doc.createNode(orderMembers(key, definition)));
  }
  if (update.instructions === null) doc.delete('instructions');
  else if (update.instructions !== undefined) doc.set('instructions', update.instructions);
  if (update.approvedBy !== undefined) doc.set('approvedBy', doc.createNode({ ...update.approvedBy }));
  // No line folding: a pin file is read and diffed by people.
  return doc.toString({ lineWidth: 0 });
}

/**
 * Rewrites the text of a pin file with a new pin and definitions, keeping everything else: in
 * YAML the comments, member order and style of the untouched parts (the `yaml` Document API); in
 * JSON the member order. Only the text is produced; see rewritePinFile for the checked write.
 */
export function updatePinDocument(text: string, format: 'yaml' | 'json', update: PinDocumentUpdate): string {
  return format === 'json' ? updateJson(text, update) : updateYaml(text, update);
}
