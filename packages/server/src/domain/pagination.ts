/**
 * Marker pagination (docs/compatibility.md §1): `{marker, next_link, results}`. A marker is an
 * opaque, URL-safe encoding of the sort key of the last item on the previous page.
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

export function parsePageRequest(limit: unknown, marker: unknown): PageRequest {
  let n = DEFAULT_PAGE_LIMIT;
  if (limit !== undefined && limit !== '') {
    n = Number(limit);
    if (!Number.isInteger(n) || n < 1 || n > MAX_PAGE_LIMIT) {
      throw Errors.invalidLimit({ limit: String(limit), max: MAX_PAGE_LIMIT });
    }
  }
  let after: string | undefined;
  if (marker !== undefined && marker !== '') {
    after = decodeMarker(String(marker));
  }
  return { limit: n, after };
}

export function encodeMarker(key: string): string {
  return Buffer.from(JSON.stringify({ k: key }), 'utf8').toString('base64url');
}

function decodeMarker(marker: string): string {
  try {
    const parsed = JSON.parse(Buffer.from(marker, 'base64url').toString('utf8')) as { k?: unknown };
    if (typeof parsed.k === 'string') return parsed.k;
  } catch {
    // fall through to the error below
  }
  throw Errors.invalidMarker({ marker });
}

/** Builds a page from `limit + 1` fetched rows: the extra row only tells that more exist. */
export function toPage<T>(rows: T[], limit: number, keyOf: (row: T) => string): Page<T> {
  if (rows.length <= limit) return { items: rows, nextMarker: null };
  const items = rows.slice(0, limit);
  return { items, nextMarker: encodeMarker(keyOf(items[items.length - 1]!)) };
}
