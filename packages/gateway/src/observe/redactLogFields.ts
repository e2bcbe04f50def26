import { redactUrlsInText } from '../wire/redactUrl.js';

// Log fields are small objects; a bound keeps a deep or cyclic value from costing more than that.
const MAX_DEPTH = 6;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/**
 * A log value with every URL in its strings redacted (see redactUrl), in plain objects and arrays
 * down to a bounded depth. Returns the same value when nothing changed, and never modifies it: the
 * objects logged are often live ones (alert events, configurations).
 */
export function redactLogFields<T>(value: T, depth = 0): T {
  if (typeof value === 'string') return redactUrlsInText(value) as T;
  if (depth >= MAX_DEPTH) return value;
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    value.forEach((item: unknown, index) => {
      const redacted = redactLogFields(item, depth + 1);
      if (redacted !== item) (copy ??= [...value])[index] = redacted;
    });
    return (copy ?? value) as T;
  }
  if (!isPlainObject(value)) return value;
  let copy: Record<string, unknown> | undefined;
  for (const [key, item] of Object.entries(value)) {
    const redacted = redactLogFields(item, depth + 1);
    if (redacted !== item) (copy ??= { ...value })[key] = redacted;
  }
  return (copy ?? value) as T;
}
