/**
 * Hosted data (docs/compatibility.md §5). Files and folders live in a *space*: an account's collections, an
 * algorithm's own `.algo` space (temp and perm), or the `.session` space of one request tree.
 * Each space charges its bytes to one account (its quota). Folder and file records are in the
 * metadata store; file contents are blobs under opaque keys, never derived from names.
 */
import { invalid } from '../errors.js';

export type SpaceKind = 'account' | 'algo' | 'session';

export interface SpaceRef {
  kind: SpaceKind;
  /** Account id, algorithm id or session id. */
  id: string;
}

export interface Space extends SpaceRef {
  /** The account whose quota the space's bytes count against. */
  accountId: string;
}

export interface FolderRecord {
  id: string;
  space: SpaceRef;
  accountId: string;
  /** Names from the space root joined with "/": `coll`, `coll/sub`, `temp/models`. */
  path: string;
  /** The path of the folder holding it; '' at the space root. */
  parent: string;
  name: string;
  /** Read ACL of a collection (top-level folder of an account space); null elsewhere. */
  aclRead: string[] | null;
  createdAt: string;
  updatedAt: string;
}

export interface FileRecord {
  space: SpaceRef;
  accountId: string;
  /** The path of the folder holding it; '' at the space root (`.session` only). */
  folder: string;
  name: string;
  size: number;
  /** ISO 8601 UTC with milliseconds: exactly the `last_modified` of the API. */
  lastModified: string;
  blobKey: string;
}

/** Anyone with an account may read (docs/compatibility.md §5 "public"). */
export const ACL_PUBLIC = 'user://*';
/** Algorithms owned by the collection's owner may read, whoever calls them ("my algorithms"). */
export const ACL_MY_ALGORITHMS = 'algo://.my/*';
export const DEFAULT_ACL: readonly string[] = [ACL_MY_ALGORITHMS];
const KNOWN_ACL_ENTRIES = [ACL_PUBLIC, ACL_MY_ALGORITHMS];

/** `{"read": [...]}` of a request; only the entries of docs/compatibility.md §5 are understood. */
export function parseAcl(acl: unknown): string[] {
  const read = (acl as { read?: unknown } | null | undefined)?.read;
  if (typeof acl !== 'object' || acl === null || Array.isArray(acl) || !Array.isArray(read)) {
    throw invalid('acl must be {"read": [...]}: [] private, ["algo://.my/*"] my algorithms, ["user://*"] public');
  }
  const out: string[] = [];
  for (const entry of read) {
    if (typeof entry !== 'string' || !KNOWN_ACL_ENTRIES.includes(entry)) {
      throw invalid(`unsupported ACL entry ${JSON.stringify(entry)}: use "user://*" (public) or "algo://.my/*" (my algorithms)`);
    }
    if (!out.includes(entry)) out.push(entry);
  }
  return out;
}
