/**
 * Hosted data (docs/compatibility.md §5): the requests on a data address (read, list, upload,
 * create a folder, set a collection's ACL, delete) and the sweeps that expire `.algo/…/temp`
 * files and ended `.session` spaces. The parts, each with one job:
 *   - places.ts: which space and folder an address names and who may read and write it;
 *   - listing.ts: directory listings with paging;
 *   - files.ts: the bytes, streamed uploads under a per-account quota;
 *   - sweeper.ts: removing what nobody will read again.
 */
import crypto from 'node:crypto';
import type { Readable } from 'node:stream';
import { type Clock, isoNow } from '../clock.js';
import { Errors, invalid } from '../errors.js';
import type { Principal } from '../accounts/principal.js';
import type { OwnerAccess } from '../accounts/access.js';
import type { Account } from '../accounts/model.js';
import type { AccountStore } from '../accounts/ports.js';
import type { AlgorithmStore } from '../algorithms/ports.js';
import { DataFiles } from './files.js';
import { listFolder, type Listing, type ListingQuery } from './listing.js';
import { DEFAULT_ACL, parseAcl } from './model.js';
import { checkName, joinPath } from './paths.js';
import { DataPlaces, holdsFiles, implicitFolder, missing, requireRead, requireWrite, uri } from './places.js';
import type { BlobStore, DataStore } from './ports.js';
import { DataSweeper, type SweepResult } from './sweeper.js';
import type { Logger } from '../logger.js';

export interface DataSettings {
  /** Bytes each account may store; 0 = unlimited. */
  quotaBytes: number;
  /** How long a file under `.algo/…/temp` lives after its last change. */
  tempTtlMs: number;
}

export type DataEntry =
  | { type: 'directory'; listing: Listing }
  | { type: 'file'; size: number; lastModified: string; body: Readable };

export interface DataStat {
  type: 'directory' | 'file';
  size?: number;
  lastModified?: string;
}

/** What DataService is made from (named, so the composition root reads as a list of parts). */
export interface DataServiceDeps {
  store: DataStore;
  blobs: BlobStore;
  accounts: AccountStore;
  algorithms: AlgorithmStore;
  access: OwnerAccess;
  settings: DataSettings;
  clock: Clock;
  /** Where failures that must not fail a request (a leftover blob, a session not yet deleted) are reported. */
  log: Logger;
}

export class DataService {
  private readonly store: DataStore;
  private readonly clock: Clock;
  private readonly places: DataPlaces;
  private readonly files: DataFiles;
  private readonly sweeper: DataSweeper;
  /**
   * Sessions that stored something through this node. A call key lives only on the node that
   * issued it, so a session's data is written here; ending any other session needs no query.
   */
  private readonly sessionsWithData = new Set<string>();

  constructor(deps: DataServiceDeps) {
    this.store = deps.store;
    this.clock = deps.clock;
    this.places = new DataPlaces(deps.store, deps.accounts, deps.algorithms, deps.access);
    this.files = new DataFiles(deps.store, deps.blobs, deps.settings.quotaBytes, deps.clock, this.sessionsWithData, deps.log);
    this.sweeper = new DataSweeper(deps.store, deps.blobs, this.files, deps.settings.tempTtlMs, deps.clock, this.sessionsWithData, deps.log);
  }

  // --- requests ---------------------------------------------------------------------------

  /** GET: a directory listing or a file's content. */
  async get(p: Principal, path: string, q: ListingQuery): Promise<DataEntry> {
    const place = await this.places.locate(p, path);
    requireRead(p, place);
    const node = await this.places.nodeAt(place);
    if (!node) throw missing(place);
    if (node.type === 'folder') return { type: 'directory', listing: await listFolder(this.store, p, place, q) };
    const content = await this.files.open(place, node.file);
    return { type: 'file', size: content.size, lastModified: content.lastModified, body: content.body };
  }

  /** HEAD: whether it exists and what it is. */
  async stat(p: Principal, path: string): Promise<DataStat> {
    const place = await this.places.locate(p, path);
    requireRead(p, place);
    const node = await this.places.nodeAt(place);
    if (!node) throw missing(place);
    if (node.type === 'folder') return { type: 'directory' };
    return { type: 'file', size: node.file.size, lastModified: node.file.lastModified };
  }

  /**
   * PUT: streams `body` into the file, replacing it only once the whole body is stored. The
   * quota is checked against the declared length first and enforced on the bytes as they come.
   */
  async put(p: Principal, path: string, body: Readable, declaredLength?: number): Promise<string> {
    const place = await this.places.locate(p, path);
    requireWrite(p, place);
    const { space, segments } = place;
    const name = segments[segments.length - 1];
    const folderSegments = segments.slice(0, -1);
    if (name === undefined || implicitFolder(place, segments) || (await this.store.findFolder(space, joinPath(segments)))) {
      throw Errors.dataExists(`${uri(place, segments)} is a folder, not a file`);
    }
    if (!holdsFiles(place, folderSegments)) {
      throw invalid(
        space.kind === 'account'
          ? `files live in collections: PUT ${place.base}/{collection}/${name}`
          : `files live in temp or perm: PUT ${place.base}/temp/${name}`,
      );
    }
    if (!(await this.places.folderExists(place, folderSegments))) {
      throw Errors.dataNotFound(
        `folder ${uri(place, folderSegments)} does not exist: create it first (POST {"name": "${folderSegments[folderSegments.length - 1]}"} on its parent)`,
      );
    }
    await this.files.write(space, joinPath(folderSegments), name, body, declaredLength);
    return uri(place, segments);
  }

  /** POST on a folder: creates the folder `name` in it (a collection at an account's root). */
  async createFolder(p: Principal, parentPath: string, body: { name?: unknown; acl?: unknown }): Promise<string> {
    const place = await this.places.locate(p, parentPath);
    requireWrite(p, place);
    const name = checkName(body.name);
    const { space, segments } = place;
    const node = await this.places.nodeAt(place);
    if (!node) throw missing(place);
    // The path's state, not its form, decides this: a conflict, as PUT onto a folder is.
    if (node.type === 'file') throw Errors.dataExists(`${uri(place, segments)} is a file: folders are created in folders`);
    if (space.kind === 'algo' && segments.length === 0) {
      throw invalid(`${place.base} holds only the folders temp and perm; create folders inside them`);
    }
    const path = [...segments, name];
    const isCollection = space.kind === 'account' && segments.length === 0;
    if (body.acl !== undefined && body.acl !== null && !isCollection) {
      throw invalid(`read ACLs belong to collections: set them on the collection, not on ${uri(place, path)}`);
    }
    const aclRead = isCollection ? (body.acl === undefined || body.acl === null ? [...DEFAULT_ACL] : parseAcl(body.acl)) : null;
    if (await this.store.findFile(space, joinPath(segments), name)) {
      throw Errors.dataExists(`${uri(place, path)} already exists as a file`);
    }
    const now = isoNow(this.clock);
    if (space.kind === 'session') this.sessionsWithData.add(space.id);
    await this.store.insertFolder({
      id: crypto.randomUUID(),
      space,
      accountId: space.accountId,
      path: joinPath(path),
      parent: joinPath(segments),
      name,
      aclRead,
      createdAt: now,
      updatedAt: now,
    });
    return uri(place, path);
  }

  /** PATCH: replaces a collection's read ACL. */
  async updateAcl(p: Principal, path: string, body: { acl?: unknown }): Promise<string> {
    const place = await this.places.locate(p, path);
    requireWrite(p, place);
    if (place.space.kind !== 'account' || place.segments.length !== 1) {
      throw invalid(`${uri(place, place.segments)} has no ACL of its own: read ACLs belong to collections (data://{owner}/{collection})`);
    }
    if (!place.collection) throw missing(place);
    const aclRead = parseAcl(body.acl);
    await this.store.setAcl(place.collection.id, aclRead, isoNow(this.clock));
    return uri(place, place.segments);
  }

  /** DELETE: a file, or a folder (with `force` when it is not empty). Returns the files deleted. */
  async delete(p: Principal, path: string, force: boolean): Promise<number> {
    const place = await this.places.locate(p, path);
    requireWrite(p, place);
    const { space, segments } = place;
    const node = await this.places.nodeAt(place);
    if (!node) throw missing(place);
    if (node.type === 'file') {
      await this.store.deleteFile(space, node.file.folder, node.file.name);
      await this.files.discard(node.file.blobKey);
      return 1;
    }
    if (!node.record) throw invalid(`${uri(place, segments)} always exists and cannot be deleted; delete what is inside it`);
    const folderPath = node.record.path;
    if (!force && (await this.store.hasChildren(space, folderPath))) {
      throw Errors.dataExists(`${uri(place, segments)} is not empty: add ?force=true to delete it with everything in it`);
    }
    const files = await this.store.filesUnder(space, folderPath);
    // Records first: a blob whose record is gone is invisible (and collected later); the
    // other order could show files whose content is missing.
    await this.store.deleteTree(space, folderPath);
    for (const f of files) await this.files.discard(f.blobKey);
    return files.length;
  }

  // --- sweeps -------------------------------------------------------------------------------

  /**
   * Deletes `.algo/…/temp` files unchanged for the temp lifetime, `.session` files of ended
   * request trees, the spaces of deleted algorithms and folders left empty by all that; once an
   * hour (or when asked) also blobs that no record names (left by a crash or a lost race). Run
   * by the `data.sweep` job (`jobs/catalog.ts`); an aborted `signal` ends it between steps
   * (the next sweep picks up where it stopped).
   */
  sweep(opts: { collectGarbage?: boolean; signal?: AbortSignal } = {}): Promise<SweepResult> {
    return this.sweeper.sweep(opts);
  }

  /** The request tree's `.session` space is deleted when its outermost call ends (in the background). */
  sessionEnded(session: string): void {
    this.sweeper.sessionEnded(session);
  }

  /** Deletes every file and folder charged to the account (the account is being deleted). */
  deleteAllOf(account: Account): Promise<void> {
    return this.sweeper.deleteAllOf(account.id);
  }

  /** Blobs older than `before` (ms) that no file record names. */
  collectGarbage(before: number): Promise<number> {
    return this.sweeper.collectGarbage(before);
  }
}
