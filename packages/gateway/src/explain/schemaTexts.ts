import { isObject } from '../wire/isObject.js';

/** The keywords of a JSON Schema whose value is text the model reads. */
export const SCHEMA_TEXT_KEYWORDS: readonly string[] = ['description', 'title'];

// Where a schema holds subschemas (JSON Schema 2020-12 and draft-07 applicators), so that a
// property named `description` is told apart from the keyword.
const ONE_SCHEMA = [
  'additionalProperties',
  'propertyNames',
  'contains',
  'not',
  'if',
  'then',
  'else',
  'unevaluatedItems',
  'unevaluatedProperties',
  'additionalItems',
  'contentSchema',
];
const SCHEMA_MAPS = [
  'properties',
  'patternProperties',
  '$defs',
  'definitions',
  'dependentSchemas',
  'dependencies',
];
const SCHEMA_LISTS = ['allOf', 'anyOf', 'oneOf', 'prefixItems'];

/** Escapes one reference token of an RFC 6901 JSON Pointer. */
export function pointerToken(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}

function collect(schema: unknown, at: string, out: Map<string, unknown>): void {
  if (!isObject(schema)) return;
  for (const keyword of SCHEMA_TEXT_KEYWORDS)
    if (Object.hasOwn(schema, keyword)) out.set(`${at}/${keyword}`, schema[keyword]);
  for (const keyword of ONE_SCHEMA)
    if (Object.hasOwn(schema, keyword)) collect(schema[keyword], `${at}/${keyword}`, out);
  for (const keyword of SCHEMA_MAPS) {
    const map = schema[keyword];
    if (!isObject(map)) continue;
    for (const [name, value] of Object.entries(map))
      collect(value, `${at}/${keyword}/${pointerToken(name)}`, out);
  }
  const lists = Array.isArray(schema.items) ? [...SCHEMA_LISTS, 'items'] : SCHEMA_LISTS;
  if (!Array.isArray(schema.items) && Object.hasOwn(schema, 'items'))
    collect(schema.items, `${at}/items`, out);
  for (const keyword of lists) {
    const list = schema[keyword];
    if (Array.isArray(list)) list.forEach((value, index) => collect(value, `${at}/${keyword}/${index}`, out));
  }
}

/**
 * The texts (`description`, `title`) of a JSON Schema by pointer (prefixed with `at`), found only
 * where the schema holds a subschema: a property named `title` is not text, its `description` is.
 */
export function schemaTexts(schema: unknown, at: string): Map<string, unknown> {
  const out = new Map<string, unknown>();
  collect(schema, at, out);
  return out;
}
