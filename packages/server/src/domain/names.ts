/** Naming rules shared by users, organizations and algorithms (docs/compatibility.md §1). */
import { invalid } from './errors.js';

export const NAME_PATTERN = /^[A-Za-z][A-Za-z0-9_]*$/;
export const MAX_ACCOUNT_NAME = 30;
export const MAX_ALGORITHM_NAME = 100;

export function assertName(what: string, name: unknown, max: number): string {
  if (typeof name !== 'string' || name.length === 0) throw invalid(`${what} is required`);
  if (!NAME_PATTERN.test(name)) {
    throw invalid(`${what} "${name}" is invalid: it must start with a letter and contain only letters, digits and underscores`);
  }
  if (name.length > max) throw invalid(`${what} "${name}" is too long: at most ${max} characters`);
  return name;
}

/** Names are unique regardless of case; this is the key they are stored and looked up by. */
export const nameKey = (name: string) => name.toLowerCase();
