/**
 * Booleans in query strings (`?force=`, `?stdout=`, `?published=`, `?callable=`, `?acl=`), parsed
 * one way everywhere: `true`/`false` and `1`/`0`, case-insensitively (the Python client sends
 * `True`). Absent or empty is "not given"; anything else is a 400 naming the parameter and the
 * accepted values, never a silent `false`.
 */
import { invalid } from '../domain/errors.js';

const TRUE = new Set(['true', '1']);
const FALSE = new Set(['false', '0']);

/** The accepted spellings, for messages and schema descriptions. */
export const QUERY_BOOLEAN_VALUES = 'true or false (any case), 1 or 0';

/** The flag's value; undefined when it is absent or empty. */
export function queryBoolean(name: string, value: string | undefined): boolean | undefined {
  if (value === undefined || value === '') return undefined;
  const v = value.toLowerCase();
  if (TRUE.has(v)) return true;
  if (FALSE.has(v)) return false;
  const shown = value.length > 40 ? `${value.slice(0, 40)}…` : value;
  throw invalid(`the query parameter ${name} must be ${QUERY_BOOLEAN_VALUES}; got "${shown}"`);
}
