import { Ajv, type AnySchema, type ValidateFunction } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { LRUCache } from 'lru-cache';
import type { PinView } from '../policy/pinView.js';
import { validationModeOf } from '../policy/validationMode.js';
import { problemsFromFindings, type SchemaCheck } from '../policy/schemaProblems.js';
import { linearRegExp } from './linearRegExp.js';
import { exceededBudget, usesUniqueItems, type ValidationBudget } from './validationBudget.js';

/** Which schema of a pinned definition: `inputSchema` (the call's arguments) or `outputSchema` (its result). */
export type SchemaSide = 'input' | 'output';

/** Options of {@link PinnedSchemas}. */
export interface PinnedSchemasOptions {
  /** Compiled schemas kept (least recently used dropped). @default 2000 */
  readonly max?: number;
  /** What one validation may cost, checked before it runs. @default the defaults of {@link ValidationBudget} */
  readonly budget?: ValidationBudget;
}

type Dialect = '2020-12' | '2019-09' | 'draft-07';

// `$schema` URIs as written in the wild: http or https, with or without the empty fragment.
const DIALECTS: ReadonlyMap<string, Dialect> = new Map([
  ['json-schema.org/draft/2020-12/schema', '2020-12'],
  ['json-schema.org/draft/2019-09/schema', '2019-09'],
  ['json-schema.org/draft-07/schema', 'draft-07'],
]);

const MAX_PROBLEM_LENGTH = 300;

/**
 * Why a schema cannot be compiled, or undefined when it can. No network is ever used: a `$ref`
 * to anything outside the schema (and the dialect's meta-schemas) makes it uncompilable.
 */
export function schemaCompileProblem(schema: unknown): string | undefined {
  const compiled = compileSchema(schema);
  return typeof compiled === 'string' ? compiled : undefined;
}

/** The dialect of a schema: JSON Schema 2020-12 unless its `$schema` names another (MCP 2025-11-25). */
function dialectOf(schema: unknown): Dialect | string {
  if (typeof schema !== 'object' || schema === null || !('$schema' in schema)) return '2020-12';
  const uri = (schema as { $schema: unknown }).$schema;
  if (typeof uri !== 'string') return 'a $schema that is not a string';
  const bare = uri.replace(/^https?:\/\//, '').replace(/#$/, '');
  return DIALECTS.get(bare) ?? `unsupported $schema ${JSON.stringify(uri.slice(0, 100))}`;
}

const OPTIONS = {
  // Unknown keywords are annotations (the JSON Schema specs), not errors.
  strict: false,
  // The first problem only: with allErrors a client could make the gateway list a million of them
  // for one large argument (Ajv's own advice for untrusted data).
  allErrors: false,
  // Schemas are compiled on their own: a `$id` shared by two servers' schemas must not collide.
  addUsedSchema: false,
  // `format` is an annotation by default in 2019-09 and 2020-12; asserting it would refuse calls
  // the server accepts.
  validateFormats: false,
  // A number that is not finite (Infinity: JSON's 1e400) is not a number: what the gateway sends
  // would be null. The fronts refuse such values as they parse; the validator agrees with them.
  strictNumbers: true,
  // Patterns run in linear time (RE2JS): no pinned pattern can make a check backtrack for seconds.
  code: { regExp: linearRegExp },
  logger: false,
} as const;

// One validator instance per dialect, created on first use (each costs tens of milliseconds).
const instances = new Map<Dialect, Ajv>();

function instanceFor(dialect: Dialect): Ajv {
  let ajv = instances.get(dialect);
  if (ajv === undefined) {
    ajv =
      dialect === '2020-12'
        ? new Ajv2020(OPTIONS)
        : dialect === '2019-09'
          ? new Ajv2019(OPTIONS)
          : new Ajv(OPTIONS);
    instances.set(dialect, ajv);
  }
  return ajv;
}

function compileSchema(schema: unknown): ValidateFunction | string {
  if (typeof schema !== 'boolean' && (typeof schema !== 'object' || schema === null || Array.isArray(schema)))
    return 'a schema must be an object or a boolean';
  const dialect = dialectOf(schema);
  if (!DIALECT_NAMES.has(dialect)) return dialect;
  const ajv = instanceFor(dialect as Dialect);
  try {
    return ajv.compile(schema as AnySchema);
  } catch (error) {
    const missing = (error as { missingRef?: unknown }).missingRef;
    const problem =
      typeof missing === 'string'
        ? `a $ref outside the schema (${JSON.stringify(missing)}); references are never fetched`
        : error instanceof Error
          ? error.message
          : String(error);
    return problem.length <= MAX_PROBLEM_LENGTH ? problem : `${problem.slice(0, MAX_PROBLEM_LENGTH)}…`;
  } finally {
    // The compiled function keeps what it needs; the instance must not keep every schema ever seen.
    if (typeof schema === 'object') ajv.removeSchema(schema as object);
  }
}

const DIALECT_NAMES: ReadonlySet<string> = new Set(DIALECTS.values());

/**
 * The pinned schemas of every server, compiled once per pinned digest and kept in a bounded cache.
 * Checks a call's arguments against the pinned `inputSchema` and a result's `structuredContent`
 * against the pinned `outputSchema` (the pin file's definitions, never the live catalog).
 */
export class PinnedSchemas {
  readonly #compiled: LRUCache<
    string,
    { readonly validate: ValidateFunction; readonly uniqueItems: boolean } | { readonly problem: string }
  >;
  readonly #budget: ValidationBudget;

  constructor(options: PinnedSchemasOptions = {}) {
    this.#compiled = new LRUCache({ max: options.max ?? 2000 });
    this.#budget = options.budget ?? {};
  }

  /**
   * Checks `value` against the pinned schema of the tool under fold key `key`, within the budget
   * (`over_budget`: not validated). Never throws.
   */
  check(pin: PinView, key: string, side: SchemaSide, value: unknown): SchemaCheck {
    if (validationModeOf(pin, key) === 'off') return { kind: 'unchecked', why: 'opted_out' };
    const definition = pin.definitions[key];
    const digest = pin.pin.tools[key];
    if (definition === undefined || digest === undefined) return { kind: 'unchecked', why: 'no_definition' };
    const schema = side === 'input' ? definition.inputSchema : definition.outputSchema;
    if (schema === undefined) return { kind: 'unchecked', why: 'no_schema' };
    // The digest covers both schemas (under the profile), so it names this very schema.
    const cacheKey = `${pin.profile}\n${digest}\n${side}`;
    let entry = this.#compiled.get(cacheKey);
    if (entry === undefined) {
      const compiled = compileSchema(schema);
      entry =
        typeof compiled === 'string'
          ? { problem: compiled }
          : { validate: compiled, uniqueItems: usesUniqueItems(schema) };
      this.#compiled.set(cacheKey, entry);
    }
    if ('problem' in entry) return { kind: 'uncompilable', problem: entry.problem };
    // Validation runs on the event loop: a value whose check would cost more than its budget is
    // not checked at all (every other session waits while one runs).
    const bound = exceededBudget(value, entry.uniqueItems, this.#budget);
    if (bound !== undefined) return { kind: 'over_budget', bound };
    if (entry.validate(value)) return { kind: 'fits' };
    return { kind: 'misfit', problems: problemsFromFindings(entry.validate.errors ?? []) };
  }

  /** How many compiled schemas are cached. */
  get size(): number {
    return this.#compiled.size;
  }
}
