import { _, Name, type Ajv, type KeywordCxt, type ValidateFunction } from 'ajv';
import { allSchemaObjects, comparedValues } from './schemaCost.js';
import { comparedWeight, shallowWeight, sizeWithin } from './validationBudget.js';

/**
 * The keyword the gateway writes into every schema object of a metered copy of a pinned schema
 * (its value says what that schema object reads whole). Defined only on the validators that
 * compile metered copies: in a pinned schema as written it is an annotation like any other.
 */
export const METER_KEYWORD = 'x-toolpin-meter';

/** Work left for the validation under way; the meter throws past it. */
let fuel = 0;

class OutOfFuel extends Error {}

/**
 * What one gathered error costs each time a metered schema object is applied, in work: errors are
 * objects Ajv copies and collects (measured: a failing recursion costs about this many times
 * more per application than a passing one).
 */
const ERROR_WEIGHT = 4;

/** The count of errors gathered so far, a local of every function Ajv generates. */
const ERRORS = new Name('errors');

/**
 * Charged each time a metered schema object is applied to a value: 1, the value's items, members
 * or characters, and what `const`, `enum` or `uniqueItems` compare (the same weights as the bound
 * worked out before validation, {@link weighValue}); and the errors gathered so far, which Ajv
 * copies as branches fail (an `anyOf` whose branches fail deep down gathers errors by thousands).
 */
function charge(data: unknown, reads: number, errors: number): void {
  fuel -= 1 + shallowWeight(data) + errors * ERROR_WEIGHT;
  // `reads`: how many values `const` and `enum` compare this one with, times 2, plus 1 for `uniqueItems`.
  if (reads !== 0 && fuel >= 0) {
    const compares = reads >>> 1;
    const unique = (reads & 1) === 1 && Array.isArray(data);
    if (compares > 0 || unique) {
      const size = typeof data === 'object' && data !== null ? sizeWithin(data, fuel) : 0;
      fuel -= compares * comparedWeight(data, size) + (unique ? data.length * size : 0);
    }
  }
  if (fuel < 0) throw new OutOfFuel('validation work budget spent');
}

/**
 * Defines the meter on a validator instance, as the first keyword of every schema object (before
 * `$ref` and the applicators, so an application is charged before it recurses).
 */
export function addMeter(ajv: Ajv): void {
  const first = ajv.RULES.rules.find((group) => group.type === undefined)?.rules[0]?.keyword;
  ajv.addKeyword({
    keyword: METER_KEYWORD,
    schemaType: 'number',
    ...(first === undefined ? {} : { before: first }),
    code(cxt: KeywordCxt) {
      const meter = cxt.gen.scopeValue('keyword', { ref: charge });
      cxt.gen.code(_`${meter}(${cxt.data}, ${cxt.schema as number}, ${ERRORS})`);
    },
  });
}

/**
 * A copy of `schema` with the meter in every schema object (every place a `$ref` can land:
 * `referenceProblem` refuses the others).
 */
export function meteredCopy(schema: unknown): unknown {
  const copy = structuredClone(schema);
  for (const object of allSchemaObjects(copy)) {
    object[METER_KEYWORD] = comparedValues(object) * 2 + (object.uniqueItems === true ? 1 : 0);
  }
  return copy;
}

/**
 * Runs a validator compiled from a {@link meteredCopy} with `budget` work: true or false as the
 * validator says, or undefined when the work ran out (or the schema recursed in place until the
 * stack did) before it could say.
 */
export function validateMetered(
  validate: ValidateFunction,
  value: unknown,
  budget: number,
): boolean | undefined {
  fuel = budget;
  try {
    return validate(value);
  } catch (error) {
    if (error instanceof OutOfFuel || error instanceof RangeError) return undefined;
    throw error;
  } finally {
    fuel = 0;
  }
}
