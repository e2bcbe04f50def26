import { Ajv, type AnySchema, type ValidateFunction } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { LRUCache } from 'lru-cache';
import type { PinView } from '../policy/pinView.js';
import { validationModeOf } from '../policy/validationMode.js';
import { problemsFromFindings, type SchemaCheck } from '../policy/schemaProblems.js';
import { DEFAULT_MAX_CHECKED_BYTES, DEFAULT_VALIDATION_WORK_FACTOR } from '../defaults.js';
import { linearRegExp } from './linearRegExp.js';
import { addMeter, meteredCopy, validateMetered } from './meteredValidation.js';
import { costProfile, referenceProblem, type CostProfile } from './schemaCost.js';
import { usesUniqueItems, weighValue, workAllowed, type ValidationBudget } from './validationBudget.js';

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

// One validator instance per dialect, and one that meters (meteredValidation.ts), created on first
// use (each costs tens of milliseconds).
const instances = new Map<string, Ajv>();

function instanceFor(dialect: Dialect, metered: boolean): Ajv {
  const name = `${dialect}${metered ? ' metered' : ''}`;
  let ajv = instances.get(name);
  if (ajv === undefined) {
    ajv =
      dialect === '2020-12'
        ? new Ajv2020(OPTIONS)
        : dialect === '2019-09'
          ? new Ajv2019(OPTIONS)
          : new Ajv(OPTIONS);
    if (metered) addMeter(ajv);
    instances.set(name, ajv);
  }
  return ajv;
}

function compileSchema(schema: unknown, metered = false): ValidateFunction | string {
  if (typeof schema !== 'boolean' && (typeof schema !== 'object' || schema === null || Array.isArray(schema)))
    return 'a schema must be an object or a boolean';
  const dialect = dialectOf(schema);
  if (!DIALECT_NAMES.has(dialect)) return dialect;
  // (A metered copy is compiled from a schema that compiled as written.)
  const problem = metered ? undefined : referenceProblem(schema);
  if (problem !== undefined) return problem;
  const ajv = instanceFor(dialect as Dialect, metered);
  const compiled = rooted(metered ? meteredCopy(schema) : schema);
  try {
    const validate = ajv.compile(compiled as AnySchema);
    // An $async schema's validator answers a promise: every value would look valid.
    return (validate as { $async?: boolean }).$async === true
      ? 'an $async schema (it cannot be checked before the call is decided)'
      : validate;
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
    if (typeof compiled === 'object') ajv.removeSchema(compiled as object);
  }
}

/** A URI naming a pinned schema that names none: never fetched, never registered. */
const ROOT_ID = 'urn:toolpin:pinned-schema';

/**
 * The schema with a base URI: Ajv resolves `$ref: "#"` (the root, the usual spelling of a
 * recursive schema) only in a schema with an `$id` when schemas are compiled apart.
 */
function rooted(schema: unknown): unknown {
  if (typeof schema !== 'object' || schema === null || '$id' in schema) return schema;
  return { ...schema, $id: ROOT_ID };
}

const DIALECT_NAMES: ReadonlySet<string> = new Set(DIALECTS.values());

/** The metered validator of a compiled schema, compiled on first need. */
function meteredOf(entry: Compiled): ValidateFunction | string {
  entry.metered ??= compileSchema(entry.schema, true);
  return entry.metered;
}

/**
 * The pinned schemas of every server, compiled once per pinned digest and kept in a bounded cache.
 * Checks a call's arguments against the pinned `inputSchema` and a result's `structuredContent`
 * against the pinned `outputSchema` (the pin file's definitions, never the live catalog).
 */
/** A pinned schema compiled: as written, and (when a value needs it) metered. */
interface Compiled {
  readonly schema: unknown;
  readonly validate: ValidateFunction;
  readonly uniqueItems: boolean;
  /** What validating may cost depth by depth; undefined when it cannot be worked out (always metered). */
  readonly profile: CostProfile | undefined;
  metered?: ValidateFunction | string;
}

export class PinnedSchemas {
  readonly #compiled: LRUCache<string, Compiled | { readonly problem: string }>;
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
      entry = this.#compile(schema);
      this.#compiled.set(cacheKey, entry);
    }
    if ('problem' in entry) return { kind: 'uncompilable', problem: entry.problem };
    // Validation runs on the event loop: a value whose check would cost more than its budget is
    // not checked at all (every other session waits while one runs).
    const weighed = weighValue(value, entry.uniqueItems, this.#budget, entry.profile);
    if (weighed.bound !== undefined) return { kind: 'over_budget', bound: weighed.bound };
    const maxWork = workAllowed(weighed.weight, this.#budget);
    // Within the bound worked out from the schema, validated as written; past it (a schema that
    // may apply its subschemas to one value many times), metered: refused once the work runs out.
    const validate = weighed.work <= maxWork ? entry.validate : meteredOf(entry);
    if (typeof validate === 'string') return { kind: 'uncompilable', problem: validate };
    const valid = validate === entry.validate ? validate(value) : validateMetered(validate, value, maxWork);
    if (valid === undefined) return { kind: 'over_budget', bound: 'evaluations' };
    if (valid) return { kind: 'fits' };
    return { kind: 'misfit', problems: problemsFromFindings(validate.errors ?? []) };
  }

  #compile(schema: unknown): Compiled | { readonly problem: string } {
    const compiled = compileSchema(schema);
    if (typeof compiled === 'string') return { problem: compiled };
    // Counts past what the largest value may be allowed are as good as Infinity.
    const cap = workAllowed(DEFAULT_MAX_CHECKED_BYTES, this.#budget);
    const factor = this.#budget.workFactor ?? DEFAULT_VALIDATION_WORK_FACTOR;
    return {
      schema,
      validate: compiled,
      uniqueItems: usesUniqueItems(schema),
      profile: costProfile(schema, cap, factor),
    };
  }

  /** How many compiled schemas are cached. */
  get size(): number {
    return this.#compiled.size;
  }
}
