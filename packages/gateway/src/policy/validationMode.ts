import type { PinView } from './pinView.js';

/**
 * How a tool's calls and results are checked against its pinned schemas (the pin file's
 * `validate`): `off` not checked; `lenient` (the default) checked, with `null` for a property the
 * schema declares but does not require read as its absence; `strict` checked, `null` a value like
 * any other.
 */
export type ValidationMode = 'off' | 'lenient' | 'strict';

/** The validation mode of the tool under fold key `key`: its own entry, else the server's. */
export function validationModeOf(pin: Pick<PinView, 'validate'>, key: string): ValidationMode {
  const { validate } = pin;
  if (validate === 'strict') return 'strict';
  // Own entries only: a tool key is never an Object.prototype member, but the map may be any object.
  const setting = validate !== undefined && Object.hasOwn(validate, key) ? validate[key] : undefined;
  return setting === false ? 'off' : setting === 'strict' ? 'strict' : 'lenient';
}
