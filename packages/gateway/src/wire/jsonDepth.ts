/**
 * How deep a JSON value may nest (arrays and objects) before the gateway refuses it. Real tool
 * schemas nest a few dozen levels at most; recursive code (digest, explanation, serialization,
 * the SDK's validation) must never meet a value deep enough to exhaust the stack.
 */
export const MAX_JSON_DEPTH = 256;

/**
 * What makes a parsed JSON value unfit to act on: it nests deeper than the bound, or it holds a
 * number that does not survive a round trip. `JSON.parse` reads `1e400` as Infinity and
 * `JSON.stringify` writes Infinity as `null`: the gateway would decide on one value and send
 * another. `pointer` (RFC 6901) says where the number is, never what it was.
 */
export type JsonValueProblem =
  { readonly kind: 'too_deep' } | { readonly kind: 'non_finite'; readonly pointer: string };

/** A container on the walk's stack, with what it needs to name its path when a problem is found. */
interface Frame {
  readonly value: object;
  readonly depth: number;
  readonly parent: Frame | undefined;
  readonly key: string;
}

function pointerOf(frame: Frame | undefined, key: string): string {
  const segments = [key];
  for (let at = frame; at !== undefined && at.parent !== undefined; at = at.parent) segments.push(at.key);
  return segments
    .reverse()
    .map((segment) => `/${segment.replace(/~/g, '~0').replace(/\//g, '~1')}`)
    .join('');
}

/** The first problem among a container's members, pushing its child containers on the stack. */
function visitMembers(frame: Frame, stack: Frame[]): JsonValueProblem | undefined {
  const { value, depth } = frame;
  // Keys are made only for containers and for the problem found: a large array costs no strings.
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) {
      const child: unknown = value[index];
      if (typeof child === 'number' && !Number.isFinite(child))
        return { kind: 'non_finite', pointer: pointerOf(frame, String(index)) };
      if (typeof child === 'object' && child !== null)
        stack.push({ value: child, depth: depth + 1, parent: frame, key: String(index) });
    }
    return undefined;
  }
  for (const key of Object.keys(value)) {
    const child: unknown = (value as Record<string, unknown>)[key];
    if (typeof child === 'number' && !Number.isFinite(child))
      return { kind: 'non_finite', pointer: pointerOf(frame, key) };
    if (typeof child === 'object' && child !== null)
      stack.push({ value: child, depth: depth + 1, parent: frame, key });
  }
  return undefined;
}

/**
 * The first problem of a parsed JSON value (see {@link JsonValueProblem}), or undefined when it is
 * fine. One iterative walk: a value of any depth is measured without recursion. Every message the
 * gateway parses, from a client or an upstream, passes here before anything acts on it.
 */
export function jsonValueProblem(
  value: unknown,
  maxDepth: number = MAX_JSON_DEPTH,
): JsonValueProblem | undefined {
  if (typeof value === 'number')
    return Number.isFinite(value) ? undefined : { kind: 'non_finite', pointer: '' };
  if (typeof value !== 'object' || value === null) return undefined;
  const stack: Frame[] = [{ value, depth: 1, parent: undefined, key: '' }];
  while (stack.length > 0) {
    const frame = stack.pop() as Frame;
    if (frame.depth > maxDepth) return { kind: 'too_deep' };
    const problem = visitMembers(frame, stack);
    if (problem !== undefined) return problem;
  }
  return undefined;
}
