/**
 * How deep a JSON value may nest (arrays and objects) before the gateway refuses it. Real tool
 * schemas nest a few dozen levels at most; recursive code (digest, explanation, serialization,
 * the SDK's validation) must never meet a value deep enough to exhaust the stack.
 */
export const MAX_JSON_DEPTH = 256;

/**
 * True when a parsed JSON value nests deeper than `maxDepth` (a scalar is depth 0, `[]` is 1).
 * Iterative: a value of any depth is measured without recursion.
 */
export function exceedsJsonDepth(value: unknown, maxDepth: number = MAX_JSON_DEPTH): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop() as [unknown, number];
    if (depth > maxDepth) return true;
    const children = Array.isArray(current) ? current : Object.values(current as object);
    for (const child of children)
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
  }
  return false;
}
