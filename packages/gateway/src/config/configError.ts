import { distance } from 'fastest-levenshtein';
import type { z } from 'zod';
import { GatewayError, type GatewayErrorCode } from '../errors.js';
import { formatFieldPath } from './fieldPath.js';

/** The codes a config or pin file problem is reported under. */
export type ConfigErrorCode = Extract<
  GatewayErrorCode,
  'GW_CONFIG_INVALID' | 'GW_PIN_FILE_INVALID' | 'GW_MANIFEST_REFUSED'
>;

const KIND: Record<ConfigErrorCode, string> = {
  GW_CONFIG_INVALID: 'gateway file',
  GW_PIN_FILE_INVALID: 'pin file',
  GW_MANIFEST_REFUSED: 'catalog manifest',
};

/** Extras of an {@link invalidField} error. */
export interface InvalidFieldOptions {
  /** More members of `data`, beside `file`, `field` and `expected`. */
  readonly data?: Record<string, unknown>;
  /** Appended to the message only (e.g. what was found instead). */
  readonly note?: string;
  readonly cause?: unknown;
}

/** The error for a file or folder that cannot be read (`expected`: what it should have been); its errno code is `data.reason`. */
export function unreadable(
  code: ConfigErrorCode,
  path: string,
  expected: string,
  cause: unknown,
): GatewayError {
  const reason = (cause as NodeJS.ErrnoException).code ?? String(cause);
  return invalidField(code, path, '', expected, { data: { reason }, note: `(${reason})`, cause });
}

/** The error for one bad field: the message names the file, the field (`''` = the whole document) and what was expected. */
export function invalidField(
  code: ConfigErrorCode,
  file: string,
  field: string,
  expected: string,
  options: InvalidFieldOptions = {},
): GatewayError {
  const where = field === '' ? 'the document' : field;
  const note = options.note === undefined ? '' : ` ${options.note}`;
  const message = `Invalid ${KIND[code]} ${file}: ${where}: expected ${expected}${note}`;
  const data = { ...options.data, file, field, expected };
  return new GatewayError(
    code,
    message,
    data,
    options.cause === undefined ? undefined : { cause: options.cause },
  );
}

/** Turns the first issue of a failed schema parse into an {@link invalidField} error (all issues go in `data.issues`). */
export function fromZodError(
  code: ConfigErrorCode,
  file: string,
  error: z.ZodError,
  input: unknown,
): GatewayError {
  const missing = missingFields(error.issues, input);
  // An unknown key is usually the real problem (a typo), and what it leaves missing only follows
  // from it: unknown keys are reported first, each with the missing key it is closest to.
  const ordered = [
    ...error.issues.filter((issue) => issue.code === 'unrecognized_keys'),
    ...error.issues.filter((issue) => issue.code !== 'unrecognized_keys'),
  ];
  const issues = ordered.map((issue) => describeIssue(issue, input, missing));
  const first = issues[0] ?? { field: '', expected: 'a valid document' };
  const others = issues.length - 1;
  const note = others > 0 ? `(and ${others} more problem${others > 1 ? 's' : ''})` : undefined;
  return invalidField(code, file, first.field, first.expected, {
    data: { issues },
    ...(note === undefined ? {} : { note }),
    cause: error,
  });
}

interface IssueDescription {
  readonly field: string;
  readonly expected: string;
}

const NOUNS: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'a boolean',
  object: 'a mapping',
  record: 'a mapping',
  array: 'a list',
};

/** The required keys the document leaves out, by the path of the mapping that lacks them. */
function missingFields(issues: readonly z.core.$ZodIssue[], input: unknown): Map<string, string[]> {
  const missing = new Map<string, string[]>();
  for (const issue of issues) {
    const key = issue.path[issue.path.length - 1];
    if (issue.code !== 'invalid_type' || typeof key !== 'string' || valueAt(input, issue.path) !== undefined)
      continue;
    const parent = formatFieldPath(issue.path.slice(0, -1));
    missing.set(parent, [...(missing.get(parent) ?? []), key]);
  }
  return missing;
}

/** The missing key an unknown one most likely meant (a typo: at most two edits apart). */
function suggestion(key: string, candidates: readonly string[]): string {
  let best: string | undefined;
  for (const candidate of candidates) {
    const edits = distance(key.toLowerCase(), candidate.toLowerCase());
    if (edits <= 2 && (best === undefined || edits < distance(key.toLowerCase(), best.toLowerCase())))
      best = candidate;
  }
  return best === undefined ? '' : ` (did you mean ${JSON.stringify(best)}?)`;
}

function describeIssue(
  issue: z.core.$ZodIssue,
  input: unknown,
  missing: ReadonlyMap<string, readonly string[]>,
): IssueDescription {
  const field = formatFieldPath(issue.path);
  switch (issue.code) {
    case 'unrecognized_keys': {
      const key = issue.keys[0] ?? '';
      const candidates = missing.get(field) ?? [];
      const others =
        issue.keys.length > 1
          ? ` (also unknown: ${issue.keys
              .slice(1)
              .map((other) => `${other}${suggestion(other, candidates)}`)
              .join(', ')})`
          : '';
      return {
        field: formatFieldPath([...issue.path, key]),
        expected: `only known keys (unknown keys are rejected)${suggestion(key, candidates)}${others}`,
      };
    }
    case 'invalid_type': {
      const noun = NOUNS[issue.expected] ?? issue.expected;
      return { field, expected: valueAt(input, issue.path) === undefined ? `${noun} (required)` : noun };
    }
    case 'invalid_value':
      return { field, expected: `one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}` };
    case 'too_small':
    case 'too_big':
      return { field, expected: describeBound(issue) };
    case 'invalid_key':
      return { field, expected: `a key that is ${issue.issues[0]?.message ?? 'valid'}` };
    case 'invalid_element':
      return { field, expected: issue.issues[0]?.message ?? 'a valid value' };
    default:
      // Format and custom checks in our schemas carry their expectation as the message.
      return { field, expected: issue.message };
  }
}

function describeBound(issue: z.core.$ZodIssueTooSmall | z.core.$ZodIssueTooBig): string {
  const small = issue.code === 'too_small';
  const bound = small
    ? (issue as z.core.$ZodIssueTooSmall).minimum
    : (issue as z.core.$ZodIssueTooBig).maximum;
  const op = small ? (issue.inclusive ? '>=' : '>') : issue.inclusive ? '<=' : '<';
  if (issue.origin === 'string') return `a string of length ${op} ${String(bound)}`;
  if (issue.origin === 'array') return `a list of length ${op} ${String(bound)}`;
  return `a number ${op} ${String(bound)}`;
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let value = input;
  for (const segment of path) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<PropertyKey, unknown>)[segment];
  }
  return value;
}
