import { restrictTool } from '@toolpin/digest';
import { isMap, parseDocument, type Document } from 'yaml';
import { extraMembersOf, joinDefinition, type PinnedDefinition } from '../explain/extraMembers.js';
import type { PinConfig } from './types.js';
import { isObject } from '../wire/isObject.js';

/** What a pin rewrite changes: the whole new pin, and the definitions to set (every member) or drop. */
export interface PinDocumentUpdate {
  readonly pin: PinConfig;
  readonly definitions: {
    readonly set: Readonly<Record<string, PinnedDefinition>>;
    readonly remove: readonly string[];
  };
}

function orderMembers(definition: PinnedDefinition): PinnedDefinition {
  return joinDefinition(restrictTool(definition), extraMembersOf(definition));
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

function updateJson(text: string, update: PinDocumentUpdate): string {
  const document = JSON.parse(text) as Record<string, unknown>;
  const current = isObject(document.pin) && isObject(document.pin.tools) ? document.pin.tools : {};
  document.pin = { catalog: update.pin.catalog, tools: mergeTools(current, update.pin.tools) };
  const definitions = isObject(document.definitions) ? document.definitions : {};
  for (const key of update.definitions.remove) delete definitions[key];
  for (const [key, definition] of Object.entries(sorted(update.definitions.set)))
    definitions[key] = orderMembers(definition);
  if (isObject(document.definitions) || Object.keys(definitions).length > 0)
    document.definitions = definitions;
  return JSON.stringify(document, null, 2) + '\n';
}

function updateYamlTools(doc: Document, tools: Readonly<Record<string, string>>): void {
  const node = doc.getIn(['pin', 'tools'], true);
  if (!isMap(node)) {
    doc.setIn(['pin', 'tools'], doc.createNode(sorted(tools)));
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
    updateYamlTools(doc, update.pin.tools);
  } else {
    // `pin: trust-on-first-use` (or anything else that is not a mapping) becomes the pin.
    doc.set('pin', doc.createNode({ catalog: update.pin.catalog, tools: sorted(update.pin.tools) }));
  }
  const { set, remove } = update.definitions;
  if (!isMap(doc.get('definitions', true)) && Object.keys(set).length > 0)
    doc.set('definitions', doc.createNode({}));
  for (const key of remove) if (doc.hasIn(['definitions', key])) doc.deleteIn(['definitions', key]);
  for (const [key, definition] of Object.entries(sorted(set))) {
    doc.setIn(['definitions', key], doc.createNode(orderMembers(definition)));
  }
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
