/**
 * Marker pagination (docs/compatibility.md §1): `{marker, next_link, results}`. A marker is the
 * sort key of the last item on the previous page, as base64url (RFC 4648 §5, no padding): opaque
 * to clients, and every string of that alphabet is a position, so any marker the OpenAPI document
 * calls valid (MARKER_PATTERN) is accepted. Characters outside it are refused (5002).
 */
import { Errors } from './errors.js';

export const DEFAULT_PAGE_LIMIT = 50;
export const MAX_PAGE_LIMIT = 1000;

export interface PageRequest {
  limit: number;
  /** Sort key of the last item already seen; undefined for the first page. */
  after: string | undefined;
}

export interface Page<T> {
  items: T[];
  /** Marker for the next page, or null when this is the last page. */
  nextMarker: string | null;
}

/** A page size the API accepts: 1 to MAX_PAGE_LIMIT in decimal (leading zeros allowed). */
export const LIMIT_PATTERN = '^0*(?:[1-9][0-9]{0,2}|1000)$';
/** The base64url alphabet; the empty string means no marker. */
export const MARKER_PATTERN = '^[A-Za-z0-9_-]*$';
/** Longer than any marker issued (a data name of 255 bytes with its prefix is 344 characters). */
export const MAX_MARKER_LENGTH = 2048;

export function parsePageRequest(limit: unknown, marker: unknown): PageRequest {
  let n = DEFAULT_PAGE_LIMIT;
  if (limit !== undefined && limit !== '') {
    if (typeof limit !== 'string' || !new RegExp(LIMIT_PATTERN).test(limit)) {
      throw Errors.invalidLimit({ limit: String(limit), max: MAX_PAGE_LIMIT });
    }
    n = Number(limit);
  }
  let after: string | undefined;
  if (marker !== undefined && marker !== '') {
    after = decodeMarker(String(marker));
  }
  return { limit: n, after };
}

export function encodeMarker(key: string): string {
  return Buffer.from(key, 'utf8').toString('base64url');
}

/**
 * The key a marker stands for. One that was never issued still names a position: bytes that are
 * not UTF-8 become U+FFFD, and the key ends before a NUL (no name holds one, so for the stores'
 * "after this key" comparisons the shorter key is the same position, and PostgreSQL text cannot
 * hold NUL anyway).
 */
function decodeMarker(marker: string): string {
  if (marker.length > MAX_MARKER_LENGTH || !new RegExp(MARKER_PATTERN).test(marker)) throw Errors.invalidMarker({ marker });
  const key = Buffer.from(marker, 'base64url').toString('utf8');
  const nul = key.indexOf('\u0000');
  return nul < 0 ? key : key.slice(0, nul);
}

/** Builds a page from `limit + 1` fetched rows: the extra row only tells that more exist. */
export function toPage<T>(rows: T[], limit: number, keyOf: (row: T) => string): Page<T> {
  if (rows.length <= limit) return { items: rows, nextMarker: null };
  const items = rows.slice(0, limit);
  return { items, nextMarker: encodeMarker(keyOf(items[items.length - 1]!)) };
}
