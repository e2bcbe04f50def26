import type { RestrictedTool } from '@toolpin/digest';
import { schemaCompileProblem } from '../state/pinnedSchemas.js';

/** A pinned schema the gateway cannot compile, so cannot check calls or results against. */
export interface UncheckedSchema {
  readonly tool: string;
  /** The fold key, as `pin.tools` and `validate` spell it. */
  readonly key: string;
  readonly member: 'inputSchema' | 'outputSchema';
  readonly problem: string;
}

/**
 * The pinned schemas of `definitions` (key -> definition) that cannot be compiled, in key order.
 * Each distinct schema is compiled once (many tools of one server share a schema, and compiling is
 * about a millisecond: seconds for a pin of 5,000 tools).
 */
export function findUncheckedSchemas(
  definitions: Readonly<Record<string, RestrictedTool>>,
): UncheckedSchema[] {
  const found: UncheckedSchema[] = [];
  // The same JSON text is the same schema, so it has the same problem (or none).
  const problems = new Map<string, string | undefined>();
  const problemOf = (schema: unknown): string | undefined => {
    const text = JSON.stringify(schema);
    if (!problems.has(text)) problems.set(text, schemaCompileProblem(schema));
    return problems.get(text);
  };
  for (const key of Object.keys(definitions).sort()) {
    const definition = definitions[key];
    if (definition === undefined) continue;
    for (const member of ['inputSchema', 'outputSchema'] as const) {
      const schema = definition[member];
      if (schema === undefined) continue;
      const problem = problemOf(schema);
      if (problem !== undefined)
        found.push({
          tool: typeof definition.name === 'string' ? definition.name : key,
          key,
          member,
          problem,
        });
    }
  }
  return found;
}

/**
 * Says on stderr, one line per schema, which tools the gateway cannot check against their pinned
 * schemas and what that means (the pin still records their digests).
 */
export function reportUncheckedSchemas(
  definitions: Readonly<Record<string, RestrictedTool>>,
  write: (line: string) => void = (line) => process.stderr.write(line),
): void {
  for (const { tool, key, member, problem } of findUncheckedSchemas(definitions)) {
    const effect =
      member === 'inputSchema'
        ? `its calls are refused as unverifiable in enforce mode unless the pin file sets validate: { ${JSON.stringify(key)}: false }`
        : 'its results are not checked';
    write(
      `unverifiable: tool ${JSON.stringify(tool)}: its ${member} cannot be compiled (${problem}); ${effect}\n`,
    );
  }
}
