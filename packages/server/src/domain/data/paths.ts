/**
 * Data addresses (docs/compatibility.md §5): the path after `/v1/data/`, still percent-encoded, becomes one of
 * the data spaces and the names inside it. Every name is checked here, once, so nothing later
 * can meet a relative segment, a NUL character or an over-long name: storage keys never derive from
 * names anyway, but a refused name is a clear 400 instead of a surprise further down.
 *
 * Some official clients percent-encode the whole path, every `/` as `%2F`, so `%2F` (either
 * case) separates names exactly like `/`: a data name can never hold a `/` in any form. The
 * path is split on both first and each segment is then decoded exactly once, so `%2E%2E%2F`
 * and `..%2F` meet the same `..` check as `../`, and `%252F` stays the three characters `%2F`.
 */
import { invalid } from '../errors.js';

/**
 * Characters (Unicode code points) of one folder or file name. Counted in characters, as JSON
 * Schema's maxLength counts, so the OpenAPI document states the limit exactly; names never
 * become file names (storage keys are opaque), so no file-system byte limit applies.
 */
export const MAX_NAME_CHARS = 255;
/** Characters of a whole path inside its space. */
export const MAX_PATH_CHARS = 1024;

/** Code points, not UTF-16 units: "é" and "😀" are one character each. */
const charCount = (s: string) => {
  let n = 0;
  for (const _ of s) n++;
  return n;
};

export type DataAddress =
  /** `data://.my/…` and the bare `/v1/data/`: the caller's own account. */
  | { form: 'my'; segments: string[] }
  /** `data://{owner}/{collection}/…` */
  | { form: 'owner'; owner: string; segments: string[] }
  /** `data://.algo/{owner}/{algorithm}/temp|perm/…` */
  | { form: 'algo'; owner: string; algorithm: string; segments: string[] }
  /** `data://.algo/temp|perm/…`: the algorithm that is running (only inside a call). */
  | { form: 'algo-self'; segments: string[] }
  /** `data://.session/…`: the request tree of the running call. */
  | { form: 'session'; segments: string[] };

export const ALGO_ROOTS = ['perm', 'temp'] as const;

export function parseDataPath(raw: string): DataAddress {
  // Twelve encoded bytes are the most one character takes (%F0%9F%98%80).
  if (raw.length > MAX_PATH_CHARS * 12 + 64) throw invalid(`data path too long: at most ${MAX_PATH_CHARS} characters`);
  // Every percent sign of a well-formed path starts a triple, so no `%2F` found here straddles
  // two of them; an ill-formed one fails in decodeSegment whichever way it is split.
  const slashed = raw.replace(/%2F/gi, '/');
  const trimmed = slashed.replace(/^\/+/, '').replace(/\/$/, '');
  const segments = trimmed === '' ? [] : trimmed.split('/').map(decodeSegment);
  const first = segments[0];
  if (first === undefined || first === '.my') return checked({ form: 'my', segments: segments.slice(1) });
  if (first === '.session') return checked({ form: 'session', segments: segments.slice(1) });
  if (first === '.algo') {
    const second = segments[1];
    if (second === 'temp' || second === 'perm') return checked({ form: 'algo-self', segments: segments.slice(1) });
    if (second === undefined || segments[2] === undefined) {
      throw invalid('data://.algo needs an algorithm: data://.algo/{owner}/{algorithm}/temp|perm/… (inside an algorithm: data://.algo/temp|perm/…)');
    }
    return checked({ form: 'algo', owner: second, algorithm: segments[2], segments: segments.slice(3) });
  }
  if (first.startsWith('.')) throw invalid(`unknown data space "${first}": use .my, .algo or .session, or an account name`);
  return checked({ form: 'owner', owner: first, segments: segments.slice(1) });
}

/** A name given in a body (POST {"name"}): the same rules as a path segment. */
export function checkName(name: unknown): string {
  if (typeof name !== 'string') throw invalid('name is required: {"name": "<folder name>"}');
  if (name.includes('/')) throw invalid(`name "${printable(name)}" must not contain "/": create one folder at a time`);
  return checkSegment(name);
}

export const joinPath = (segments: readonly string[]) => segments.join('/');

function decodeSegment(encoded: string): string {
  let name: string;
  try {
    name = decodeURIComponent(encoded);
  } catch {
    throw invalid(`malformed percent-encoding in data path segment "${printable(encoded)}"`);
  }
  // `%2F` was a separator already, and decodeURIComponent refuses overlong forms such as %C0%AF,
  // so a decoded name holds no "/".
  return checkSegment(name);
}

function checkSegment(name: string): string {
  if (name === '') throw invalid('empty name in data path: remove the doubled "/"');
  if (name === '.' || name === '..') throw invalid(`"${name}" is not allowed in a data path: paths are absolute, never relative`);
  if (name.includes('\u0000')) throw invalid('data names cannot contain NUL bytes');
  // eslint-disable-next-line no-control-regex
  if (/[\u0001-\u001f\u007f]/.test(name)) throw invalid(`data name "${printable(name)}" contains a control character`);
  const chars = charCount(name);
  if (chars > MAX_NAME_CHARS) {
    throw invalid(`data name "${printable(name.slice(0, 40))}…" is ${chars} characters long: at most ${MAX_NAME_CHARS} characters per name`);
  }
  return name;
}

function checked<T extends DataAddress>(address: T): T {
  const chars = charCount(joinPath(address.segments));
  if (chars > MAX_PATH_CHARS) throw invalid(`data path is ${chars} characters long: at most ${MAX_PATH_CHARS} characters`);
  return address;
}

/** For messages: a name cut short, with control characters shown as "?". */
function printable(s: string): string {
  // eslint-disable-next-line no-control-regex
  const clean = s.replace(/[\u0000-\u001f\u007f]/g, '?');
  return clean.length > 60 ? `${clean.slice(0, 60)}…` : clean;
}
