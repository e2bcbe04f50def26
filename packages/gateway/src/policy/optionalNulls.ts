import { isObject } from '../wire/isObject.js';

/**
 * The arguments as a `lenient` check reads them: each member whose value is `null`, named in the
 * `properties` of the schema object that describes it and absent from that object's `required`,
 * left out, as if the client had not sent it (models and clients send `null` for "no value"; MCP
 * SEP-2243 omits the header of a null argument). Nested objects are read the same way where the
 * schema's `properties` describe them, down a chain of `properties` only (not through `$ref`,
 * `allOf`, `items`…, whose reading would need the validator's own evaluation). Members the schema
 * does not declare keep their `null` (an undeclared member is never hidden from the check). Pure:
 * returns `value` itself when nothing is left out, else a copy; the input is never modified.
 */
export function withoutOptionalNulls(schema: unknown, value: unknown): unknown {
  if (!isObject(schema) || !isObject(value) || !isObject(schema.properties)) return value;
  const properties = schema.properties;
  const required = new Set(
    Array.isArray(schema.required) ? schema.required.filter((name) => typeof name === 'string') : [],
  );
  let copy: Record<string, unknown> | undefined;
  for (const [name, member] of Object.entries(value)) {
    if (!Object.hasOwn(properties, name)) continue;
    const read =
      member === null && !required.has(name) ? OMITTED : withoutOptionalNulls(properties[name], member);
    if (read === member) continue;
    // Object.entries keeps own members only, in order; defineProperty keeps a "__proto__" member a member.
    copy ??= Object.fromEntries(Object.entries(value));
    if (read === OMITTED) delete copy[name];
    else
      Object.defineProperty(copy, name, {
        value: read,
        enumerable: true,
        writable: true,
        configurable: true,
      });
  }
  return copy ?? value;
}

const OMITTED = Symbol('omitted');
