/** Names of things as users write them: `owner/name[/version]` and `data://…` URIs. */
import { encodePath } from './transport.js';

export interface AlgorithmRef {
  owner: string;
  name: string;
  version?: string;
}

/** Parses `owner/name`, `owner/name/version` or `algo://owner/name/version` (a trailing `/` is ignored). */
export function parseAlgorithmRef(ref: string): AlgorithmRef {
  const parts = ref
    .replace(/^algo:\/\//, '')
    .replace(/\/+$/, '')
    .split('/');
  if (parts.length < 2 || parts.length > 3 || parts.some((p) => p === '')) {
    throw new TypeError(`"${ref}" is not an algorithm: write owner/name or owner/name/version`);
  }
  const [owner, name, version] = parts as [string, string, string | undefined];
  return version === undefined ? { owner, name } : { owner, name, version };
}

export interface DataRef {
  /** `data` for hosted data, or a connector's scheme (s3, dropbox…). */
  scheme: string;
  /** The path after `scheme://`, without leading or trailing slashes. */
  path: string;
}

/** Parses `data://owner/collection/file`; a bare path means `data://`. */
export function parseDataUri(uri: string): DataRef {
  const m = /^([a-z][a-z0-9+.-]*):\/\/(.*)$/i.exec(uri);
  const scheme = m ? m[1]!.toLowerCase() : 'data';
  const path = (m ? m[2]! : uri).replace(/^\/+/, '').replace(/\/+$/, '');
  return { scheme, path };
}

export function formatDataUri(ref: DataRef): string {
  return `${ref.scheme}://${ref.path}`;
}

/**
 * The API path of a data URI: `/v1/data/…` for data://, `/v1/connector/{scheme}/…` otherwise
 * (docs/compatibility.md §5). Throws TypeError for a `.` or `..` segment: URL parsing (in fetch) resolves those,
 * even percent-encoded, so `data://alice/x/../../bob/y` would silently reach `bob/y`.
 */
export function dataApiPath(uri: string): string {
  const { scheme, path } = parseDataUri(uri);
  for (const segment of path.split('/')) {
    if (segment === '.' || segment === '..') {
      throw new TypeError(`"${segment}" is not allowed in a data path: paths are absolute, never relative (${uri})`);
    }
  }
  const base = scheme === 'data' ? '/v1/data' : `/v1/connector/${encodeURIComponent(scheme)}`;
  return path ? `${base}/${encodePath(path)}` : base;
}

/** The parent URI and last name of a data URI (`data://a/b/c` → `data://a/b`, `c`). */
export function splitDataUri(uri: string): { parent: string; name: string } {
  const { scheme, path } = parseDataUri(uri);
  const slash = path.lastIndexOf('/');
  if (slash < 0) return { parent: `${scheme}://`, name: path };
  return { parent: `${scheme}://${path.slice(0, slash)}`, name: path.slice(slash + 1) };
}

/** Joins a name onto a data URI. */
export function joinDataUri(uri: string, name: string): string {
  const { scheme, path } = parseDataUri(uri);
  return `${scheme}://${path ? `${path}/` : ''}${name.replace(/^\/+/, '')}`;
}
