/** Free-text fields of requests: strings of bounded length. */
import { invalid } from './errors.js';

/**
 * Undefined/null → undefined; otherwise a string of at most `max` characters. NUL characters
 * are refused everywhere alike, because PostgreSQL text cannot hold them.
 */
export function optionalText(field: string, value: unknown, max = 500): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw invalid(`${field} must be a string`);
  if (value.length > max) throw invalid(`${field} is too long: at most ${max} characters`);
  if (value.includes('\u0000')) throw invalid(`${field} must not contain NUL characters`);
  return value;
}
