import type { Readable } from 'node:stream';
import type { FileRecord, FolderRecord, SpaceKind, SpaceRef } from './model.js';

export interface BlobInfo {
  key: string;
  size: number;
  lastModified: Date;
}

export interface BlobContent extends BlobInfo {
  body: Readable;
}

export interface BlobPage {
  items: BlobInfo[];
  /** Pass as `after` for the next page; null on the last page. */
  next: string | null;
}

/**
 * Where blob contents live (docs/design/cluster.md): a local directory or an S3-compatible bucket. Keys are
 * "/"-separated, relative, without empty, "." or ".." segments. Both directions stream: no
 * implementation may hold a whole blob in memory.
 */
export interface BlobStore {
  /** Checks the store can be used (directory writable, bucket reachable); called once at start. */
  open(): Promise<void>;
  /**
   * Streams `body` into `key`. The blob appears whole or not at all: until `body` has ended
   * and been stored, readers see the previous blob; when `body` errors (a dropped connection, a
   * quota) or storing fails, the previous blob stays and nothing partial is left behind.
   */
  put(key: string, body: Readable): Promise<BlobInfo>;
  /** The content as a stream, or undefined when there is no such blob. */
  get(key: string): Promise<BlobContent | undefined>;
  stat(key: string): Promise<BlobInfo | undefined>;
  /** Blobs whose keys start with `prefix`, in key order, after the key `after`. */
  list(prefix: string, opts?: { after?: string; limit?: number }): Promise<BlobPage>;
  /** Removes the blob; no error when it does not exist. */
  delete(key: string): Promise<void>;
  /** Releases connections; called once when the service stops. */
  close(): Promise<void>;
}

const KEY_SEGMENT = /^[A-Za-z0-9_~-][A-Za-z0-9._~-]*$/;

/**
 * Blob keys are made by the service (never from user names): "/"-separated segments of
 * letters, digits and `._~-`, none empty, none starting with "." (so none is "." or "..").
 * Stores refuse anything else, which keeps a disk store inside its directory.
 */
export function assertBlobKey(key: string): void {
  if (key.length === 0 || key.length > 1024 || !key.split('/').every((s) => KEY_SEGMENT.test(s))) {
    throw new Error(`invalid blob key ${JSON.stringify(key)}`);
  }
}

/** The folder and file records of every space (the metadata database). */
/** An upload's claim on its account's quota (DataStore.reserve). */
export interface ReservationRequest {
  id: string;
  accountId: string;
  /** Bytes the upload cannot go on without. */
  min: number;
  /** Bytes it would like (granted up to what fits). */
  max: number;
  /** The account's quota in bytes. */
  limit: number;
  at: string;
  /** Reservations not touched since then count as left by a crashed node. */
  staleBefore: string;
}

export interface ReservationGrant {
  granted: number;
  /** What the account's files and its other uploads hold. */
  used: number;
}

export interface DataStore {
  findFolder(space: SpaceRef, path: string): Promise<FolderRecord | undefined>;
  /** Throws DomainError conflict when a folder of that path exists. */
  insertFolder(folder: FolderRecord): Promise<void>;
  setAcl(folderId: string, aclRead: string[], at: string): Promise<void>;
  /** Up to `limit` folders in `parent`, by name, after the name `after`. */
  listFolders(space: SpaceRef, parent: string, after: string | undefined, limit: number): Promise<FolderRecord[]>;

  findFile(space: SpaceRef, folder: string, name: string): Promise<FileRecord | undefined>;
  /**
   * Inserts the file, or replaces the record of the same folder and name; in the same
   * transaction deletes the upload's quota reservation `reservationId`, so its bytes never
   * count twice nor not at all. Returns the blob key of the record it replaced.
   */
  upsertFile(file: FileRecord, reservationId?: string): Promise<string | undefined>;
  deleteFile(space: SpaceRef, folder: string, name: string): Promise<void>;
  listFiles(space: SpaceRef, folder: string, after: string | undefined, limit: number): Promise<FileRecord[]>;

  /** Whether anything (file or folder) is inside the folder at `path` ('' = the space root). */
  hasChildren(space: SpaceRef, path: string): Promise<boolean>;
  /** Every file in the folder at `path` and below it ('' = the whole space). */
  filesUnder(space: SpaceRef, path: string): Promise<FileRecord[]>;
  /** Deletes the folder at `path` with every folder and file record below it ('' = the whole space). */
  deleteTree(space: SpaceRef, path: string): Promise<void>;

  /** Bytes of every file charged to the account. */
  usage(accountId: string): Promise<number>;
  /**
   * Adds between `min` and `max` bytes (as many as fit) to the upload reservation `id`,
   * creating it, if the account's files, its reservations not older than `staleBefore` and
   * these bytes stay within `limit`. Atomic against every other reservation of the account, on
   * every node. `used` is what the account's files and its other uploads hold.
   */
  reserve(r: ReservationRequest): Promise<ReservationGrant>;
  /** Marks the reservation as still in use (an upload that is still running). */
  touchReservation(id: string, at: string): Promise<void>;
  releaseReservation(id: string): Promise<void>;
  /** Deletes reservations not touched since `before` (left by a crashed node); how many. */
  deleteStaleReservations(before: string): Promise<number>;
  /** Every file charged to the account (for deleting an account). */
  filesOfAccount(accountId: string): Promise<FileRecord[]>;
  deleteAllOfAccount(accountId: string): Promise<void>;

  /** Up to `limit` files of spaces of `kind`, under the folder `root` of their space ('' = all), last modified before `before`. */
  filesModifiedBefore(kind: SpaceKind, root: string, before: string, limit: number): Promise<FileRecord[]>;
  /** Folders of spaces of `kind` strictly below `root` ('' = all), created before `before`. */
  foldersCreatedBefore(kind: SpaceKind, root: string, before: string): Promise<FolderRecord[]>;
  deleteFolderRecord(id: string): Promise<void>;
  /** Algorithm spaces whose algorithm no longer exists. */
  orphanAlgorithmSpaces(): Promise<string[]>;
  /** Which of these blob keys no file record names. */
  unreferencedBlobKeys(keys: string[]): Promise<string[]>;
}
