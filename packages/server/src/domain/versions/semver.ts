/**
 * Semantic version numbers of published algorithm versions (docs/compatibility.md §9.6) and
 * the version forms a call may name (docs/compatibility.md §2). Pure functions: no I/O.
 */
import { invalid } from '../errors.js';

export interface SemVer {
  major: number;
  minor: number;
  patch: number;
}

export type VersionType = 'major' | 'minor' | 'patch';

/** docs/compatibility.md §3: `revision` is the platform's other word for patch; a missing type means minor. */
export function parseVersionType(value: unknown): VersionType {
  if (value === undefined || value === null || value === '') return 'minor';
  if (value === 'major' || value === 'minor' || value === 'patch') return value;
  if (value === 'revision') return 'patch';
  throw invalid(`version_info.version_type must be one of major, minor, revision, patch; got ${JSON.stringify(value)}`);
}

/** The next number after `latest` (or after 0.0.0 for a first publish): always strictly higher. */
export function bump(latest: SemVer | undefined, type: VersionType): SemVer {
  const v = latest ?? { major: 0, minor: 0, patch: 0 };
  if (type === 'major') return { major: v.major + 1, minor: 0, patch: 0 };
  if (type === 'minor') return { major: v.major, minor: v.minor + 1, patch: 0 };
  return { major: v.major, minor: v.minor, patch: v.patch + 1 };
}

export const formatSemVer = (v: SemVer) => `${v.major}.${v.minor}.${v.patch}`;

const EXACT = /^(\d{1,9})\.(\d{1,9})\.(\d{1,9})$/;

export function parseExact(text: string): SemVer | undefined {
  const m = EXACT.exec(text);
  return m ? { major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3]) } : undefined;
}

/** Sorts numerically as text on both databases: zero-padded parts. */
export const sortKeyOf = (v: SemVer) => [v.major, v.minor, v.patch].map((n) => String(n).padStart(10, '0')).join('.');

export const compareSemVer = (a: SemVer, b: SemVer) => a.major - b.major || a.minor - b.minor || a.patch - b.patch;

/**
 * What a call's version segment asks for (docs/compatibility.md §2): nothing or `latest` = the newest public
 * version; `latestPrivate` = the newest of any callability; `x.y.z` exactly; `x.y.*`, `x.y`,
 * `x.*`, `x` = the newest public version in that range; a 40-hex commit SHA = a build.
 */
export type VersionQuery =
  | { kind: 'latest' }
  | { kind: 'latestPrivate' }
  | { kind: 'exact'; version: SemVer }
  | { kind: 'range'; major: number; minor?: number }
  | { kind: 'commit'; sha: string };

export function parseVersionQuery(text: string | undefined): VersionQuery {
  if (text === undefined || text === '' || text === 'latest') return { kind: 'latest' };
  if (text === 'latestPrivate') return { kind: 'latestPrivate' };
  if (/^[0-9a-f]{40}$/.test(text)) return { kind: 'commit', sha: text };
  const exact = parseExact(text);
  if (exact) return { kind: 'exact', version: exact };
  // Ranges: `x`, `x.*`, `x.y`, `x.y.*`.
  const m = /^(\d{1,9})(?:\.(\*|\d{1,9}(?:\.\*)?))?$/.exec(text);
  if (m) {
    const minor = m[2] === undefined || m[2] === '*' ? undefined : Number(m[2].replace('.*', ''));
    return { kind: 'range', major: Number(m[1]), minor };
  }
  throw invalid(`"${text}" is not a version: use x.y.z, x.y.*, x.*, latest, latestPrivate or a commit SHA`);
}

export function inRange(v: SemVer, q: { major: number; minor?: number }): boolean {
  return v.major === q.major && (q.minor === undefined || v.minor === q.minor);
}
