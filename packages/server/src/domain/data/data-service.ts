/**
 * Hosted data (docs/compatibility.md §5): which space and folder an address names, who may read and write
 * it, listings with paging, streamed uploads under a per-account quota, and the sweeps that
 * expire `.algo/…/temp` files and ended `.session` spaces.
 *
 * Access: the owning account, members of an owning organization and cluster admins read and
 * write an account's collections; a collection's read ACL lets everyone ("user://*") or the
 * owner's algorithms, whoever calls them ("algo://.my/*"), read it. A collection the caller may
 * not read is answered exactly like one that does not exist (404, for reads and writes alike),
 * so names cannot be probed; where the caller may read it, a write is refused with 403. A
 * per-call key acts as the caller (so `.my` is the caller's) and also reaches the running
 * algorithm's own `.algo` space and its request tree's `.session`.
 */
import crypto from 'node:crypto';
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import { type Clock, isoNow } from '../clock.js';
import { DomainError, Errors, forbidden, invalid } from '../errors.js';
import { isAdmin, requireCapability, type Principal } from '../accounts/principal.js';
import type { OwnerAccess } from '../accounts/access.js';
import type { Account } from '../accounts/model.js';
import type { AccountStore } from '../accounts/ports.js';
import type { Algorithm } from '../algorithms/model.js';
import type { AlgorithmStore } from '../algorithms/ports.js';
import { encodeMarker, parsePageRequest } from '../pagination.js';
import { ACL_MY_ALGORITHMS, ACL_PUBLIC, DEFAULT_ACL, type FileRecord, type FolderRecord, parseAcl, type Space } from './model.js';
import { ALGO_ROOTS, checkName, joinPath, parseDataPath } from './paths.js';
import type { BlobStore, DataStore } from './ports.js';
import { QuotaReservation, RESERVATION_STALE_MS } from './quota-reservation.js';
import type { Logger } from '../logger.js';

export interface DataSettings {
  /** Bytes each account may store; 0 = unlimited. */
  quotaBytes: number;
  /** How long a file under `.algo/…/temp` lives after its last change. */
  tempTtlMs: number;
}

/**
 * Call keys live at most the longest call timeout plus a minute (3000 s + 60 s), so a session
 * file untouched for longer belongs to a request tree that has ended.
 */
const SESSION_MAX_AGE_MS = 2 * 60 * 60 * 1000;
/** Blobs no record names are deleted only when older than this: an upload may still be finishing. */
const ORPHAN_BLOB_MIN_AGE_MS = 60 * 60 * 1000;
const SWEEP_BATCH = 500;

/** Where an address points: a space, the names inside it, and what the caller may do there. */
interface Place {
  space: Space;
  segments: string[];
  /** `data://…` of the space root as addressed, for results and messages. */
  base: string;
  read: boolean;
  write: boolean;
  /** Skip the key's read_data/write_data check: the algorithm's own space and its session. */
  own: boolean;
  /** Account spaces: the owner, whether the caller acts for it, and the addressed collection. */
  owner?: Account;
  member?: boolean;
  collection?: FolderRecord;
  /** A collection the caller may not read (or one that does not exist): answered as missing. */
  hidden?: boolean;
}

type Node = { type: 'folder'; record?: FolderRecord } | { type: 'file'; file: FileRecord };

export interface Listing {
  folders: { name: string }[];
  files: { name: string; size: number; lastModified: string }[];
  nextMarker: string | null;
  acl?: { read: string[] };
}

export type DataEntry =
  | { type: 'directory'; listing: Listing }
  | { type: 'file'; size: number; lastModified: string; body: Readable };

export interface DataStat {
  type: 'directory' | 'file';
  size?: number;
  lastModified?: string;
}

export interface SweepResult {
  tempFiles: number;
  sessionFiles: number;
  orphanFiles: number;
  folders: number;
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
  /**
   * Sessions that stored something through this node. A call key lives only on the node that
   * issued it, so a session's data is written here; ending any other session needs no query.
   */
  private readonly sessionsWithData = new Set<string>();
  private lastGarbageCollection = 0;

  private readonly store: DataStore;
  private readonly blobs: BlobStore;
  private readonly accounts: AccountStore;
  private readonly algorithms: AlgorithmStore;
  private readonly access: OwnerAccess;
  private readonly settings: DataSettings;
  private readonly clock: Clock;
  /** Where failures that must not fail a request (a leftover blob, a session not yet deleted) are reported. */
  private readonly log: Logger;

  constructor(deps: DataServiceDeps) {
    this.store = deps.store;
    this.blobs = deps.blobs;
    this.accounts = deps.accounts;
    this.algorithms = deps.algorithms;
    this.access = deps.access;
    this.settings = deps.settings;
    this.clock = deps.clock;
    this.log = deps.log;
  }

  // --- requests ---------------------------------------------------------------------------

  /** GET: a directory listing or a file's content. */
  async get(p: Principal, path: string, q: { marker?: string; limit?: string; acl?: boolean }): Promise<DataEntry> {
    const place = await this.locate(p, path);
    this.requireRead(p, place);
    const node = await this.nodeAt(place);
    if (!node) throw this.missing(place);
    if (node.type === 'folder') return { type: 'directory', listing: await this.list(p, place, q) };
    const content = await this.open(place, node.file);
    return { type: 'file', size: content.size, lastModified: content.lastModified, body: content.body };
  }

  /** HEAD: whether it exists and what it is. */
  async stat(p: Principal, path: string): Promise<DataStat> {
    const place = await this.locate(p, path);
    this.requireRead(p, place);
    const node = await this.nodeAt(place);
    if (!node) throw this.missing(place);
    if (node.type === 'folder') return { type: 'directory' };
    return { type: 'file', size: node.file.size, lastModified: node.file.lastModified };
  }

  /**
   * PUT: streams `body` into the file, replacing it only once the whole body is stored. The
   * quota is checked against the declared length first and enforced on the bytes as they come.
   */
  async put(p: Principal, path: string, body: Readable, declaredLength?: number): Promise<string> {
    const place = await this.locate(p, path);
    this.requireWrite(p, place);
    const { space, segments } = place;
    const name = segments[segments.length - 1];
    const folderSegments = segments.slice(0, -1);
    const folder = joinPath(folderSegments);
    const target = joinPath(segments);
    if (name === undefined || this.implicitFolder(place, segments) || (await this.store.findFolder(space, target))) {
      throw Errors.dataExists(`${this.uri(place, segments)} is a folder, not a file`);
    }
    if (!this.holdsFiles(place, folderSegments)) {
      throw invalid(
        space.kind === 'account'
          ? `files live in collections: PUT ${place.base}/{collection}/${name}`
          : `files live in temp or perm: PUT ${place.base}/temp/${name}`,
      );
    }
    if (!(await this.folderExists(place, folderSegments))) {
      throw Errors.dataNotFound(
        `folder ${this.uri(place, folderSegments)} does not exist: create it first (POST {"name": "${folderSegments[folderSegments.length - 1]}"} on its parent)`,
      );
    }
    const existing = await this.store.findFile(space, folder, name);
    const quota = this.settings.quotaBytes;
    const reservation =
      quota > 0 ? new QuotaReservation(this.store, this.clock, space.accountId, quota, existing?.size ?? 0) : undefined;
    let committed = false;
    try {
      // The declared length is reserved before a byte is read; a body without one (chunked)
      // reserves as it comes.
      if (reservation && declaredLength !== undefined) await reservation.cover(declaredLength, declaredLength);
      if (space.kind === 'session') this.sessionsWithData.add(space.id);
      const key = `data/${space.kind}/${space.id}/${crypto.randomUUID()}`;
      const stored = await this.blobs.put(key, limited(body, reservation));
      let replaced: string | undefined;
      try {
        replaced = await this.store.upsertFile(
          {
            space,
            accountId: space.accountId,
            folder,
            name,
            size: stored.size,
            lastModified: isoNow(this.clock),
            blobKey: key,
          },
          reservation?.id,
        );
        committed = true;
      } catch (err) {
        await this.discard(key);
        throw err;
      }
      // Each upload has its own blob, so a replace never touches the bytes a reader is streaming.
      // The blob replaced is the one the commit found (another upload may have replaced
      // `existing` meanwhile).
      if (replaced) await this.discard(replaced);
    } finally {
      if (!committed) await this.releaseQuietly(reservation);
    }
    return this.uri(place, segments);
  }

  /** POST on a folder: creates the folder `name` in it (a collection at an account's root). */
  async createFolder(p: Principal, parentPath: string, body: { name?: unknown; acl?: unknown }): Promise<string> {
    const place = await this.locate(p, parentPath);
    this.requireWrite(p, place);
    const name = checkName(body.name);
    const { space, segments } = place;
    const node = await this.nodeAt(place);
    if (!node) throw this.missing(place);
    // The path's state, not its form, decides this: a conflict, as PUT onto a folder is.
    if (node.type === 'file') throw Errors.dataExists(`${this.uri(place, segments)} is a file: folders are created in folders`);
    if (space.kind === 'algo' && segments.length === 0) {
      throw invalid(`${place.base} holds only the folders temp and perm; create folders inside them`);
    }
    const path = [...segments, name];
    const isCollection = space.kind === 'account' && segments.length === 0;
    if (body.acl !== undefined && body.acl !== null && !isCollection) {
      throw invalid(`read ACLs belong to collections: set them on the collection, not on ${this.uri(place, path)}`);
    }
    const aclRead = isCollection ? (body.acl === undefined || body.acl === null ? [...DEFAULT_ACL] : parseAcl(body.acl)) : null;
    if (await this.store.findFile(space, joinPath(segments), name)) {
      throw Errors.dataExists(`${this.uri(place, path)} already exists as a file`);
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
    return this.uri(place, path);
  }

  /** PATCH: replaces a collection's read ACL. */
  async updateAcl(p: Principal, path: string, body: { acl?: unknown }): Promise<string> {
    const place = await this.locate(p, path);
    this.requireWrite(p, place);
    if (place.space.kind !== 'account' || place.segments.length !== 1) {
      throw invalid(`${this.uri(place, place.segments)} has no ACL of its own: read ACLs belong to collections (data://{owner}/{collection})`);
    }
    if (!place.collection) throw this.missing(place);
    const aclRead = parseAcl(body.acl);
    await this.store.setAcl(place.collection.id, aclRead, isoNow(this.clock));
    return this.uri(place, place.segments);
  }

  /** DELETE: a file, or a folder (with `force` when it is not empty). Returns the files deleted. */
  async delete(p: Principal, path: string, force: boolean): Promise<number> {
    const place = await this.locate(p, path);
    this.requireWrite(p, place);
    const { space, segments } = place;
    const node = await this.nodeAt(place);
    if (!node) throw this.missing(place);
    if (node.type === 'file') {
      await this.store.deleteFile(space, node.file.folder, node.file.name);
      await this.discard(node.file.blobKey);
      return 1;
    }
    if (!node.record) throw invalid(`${this.uri(place, segments)} always exists and cannot be deleted; delete what is inside it`);
    const folderPath = node.record.path;
    if (!force && (await this.store.hasChildren(space, folderPath))) {
      throw Errors.dataExists(
        `${this.uri(place, segments)} is not empty: add ?force=true to delete it with everything in it`,
      );
    }
    const files = await this.store.filesUnder(space, folderPath);
    // Records first: a blob whose record is gone is invisible (and collected later); the
    // other order could show files whose content is missing.
    await this.store.deleteTree(space, folderPath);
    for (const f of files) await this.discard(f.blobKey);
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
  async sweep(opts: { collectGarbage?: boolean; signal?: AbortSignal } = {}): Promise<SweepResult> {
    const { signal } = opts;
    const now = this.clock().getTime();
    const result: SweepResult = { tempFiles: 0, sessionFiles: 0, orphanFiles: 0, folders: 0 };
    const tempCutoff = new Date(now - this.settings.tempTtlMs).toISOString();
    const sessionCutoff = new Date(now - SESSION_MAX_AGE_MS).toISOString();
    result.tempFiles = await this.expireFiles('algo', 'temp', tempCutoff);
    signal?.throwIfAborted();
    result.sessionFiles = await this.expireFiles('session', '', sessionCutoff);
    signal?.throwIfAborted();
    result.folders += await this.removeEmptyFolders('algo', 'temp', tempCutoff);
    result.folders += await this.removeEmptyFolders('session', '', sessionCutoff);
    await this.store.deleteStaleReservations(new Date(now - RESERVATION_STALE_MS).toISOString());
    for (const algorithmId of await this.store.orphanAlgorithmSpaces()) {
      signal?.throwIfAborted();
      result.orphanFiles += await this.dropSpace({ kind: 'algo', id: algorithmId });
    }
    signal?.throwIfAborted();
    if (opts.collectGarbage || now - this.lastGarbageCollection >= ORPHAN_BLOB_MIN_AGE_MS) {
      this.lastGarbageCollection = now;
      await this.collectGarbage(now - ORPHAN_BLOB_MIN_AGE_MS);
    }
    return result;
  }

  /** The request tree's `.session` space is deleted when its outermost call ends (in the background). */
  sessionEnded(session: string): void {
    if (!this.sessionsWithData.delete(session)) return;
    this.dropSpace({ kind: 'session', id: session }).catch((err: unknown) =>
      this.log.warn({ err, session }, 'could not delete data://.session; the sweep retries'),
    );
  }

  /** Deletes every file and folder charged to the account (the account is being deleted). */
  async deleteAllOf(account: Account): Promise<void> {
    const files = await this.store.filesOfAccount(account.id);
    await this.store.deleteAllOfAccount(account.id);
    for (const f of files) await this.discard(f.blobKey);
  }

  /** Blobs older than `before` (ms) that no file record names. */
  async collectGarbage(before: number): Promise<number> {
    let removed = 0;
    let after: string | undefined;
    for (;;) {
      const page = await this.blobs.list('data/', { after, limit: SWEEP_BATCH });
      const old = page.items.filter((b) => b.lastModified.getTime() < before).map((b) => b.key);
      for (const key of old.length ? await this.store.unreferencedBlobKeys(old) : []) {
        await this.discard(key);
        removed++;
      }
      if (!page.next) return removed;
      after = page.next;
    }
  }

  // --- addresses and access -----------------------------------------------------------------

  private async locate(p: Principal, path: string): Promise<Place> {
    const address = parseDataPath(path);
    switch (address.form) {
      case 'my':
        return this.accountPlace(p, p.account, address.segments, 'data://.my');
      case 'owner': {
        const owner = await this.accounts.findByName(address.owner);
        if (!owner) {
          throw Errors.dataNotFound(`data://${address.owner}: no user or organization "${address.owner}"`);
        }
        return this.accountPlace(p, owner, address.segments, `data://${owner.name}`);
      }
      case 'algo': {
        const owner = await this.accounts.findByName(address.owner);
        const algorithm = owner && (await this.algorithms.find(owner.id, address.algorithm));
        if (!algorithm) throw this.noAlgorithm(address.owner, address.algorithm);
        return this.algoPlace(p, algorithm, address.segments, address.owner, address.algorithm);
      }
      case 'algo-self': {
        if (!p.call) {
          throw invalid(
            'data://.algo/temp and data://.algo/perm name the running algorithm\'s own space: they work only inside an algorithm; from outside use data://.algo/{owner}/{algorithm}/…',
          );
        }
        const algorithm = await this.algorithms.findById(p.call.algorithmId);
        if (!algorithm) throw Errors.dataNotFound('the running algorithm no longer exists');
        return this.algoPlace(p, algorithm, address.segments);
      }
      case 'session': {
        if (!p.call) throw invalid('data://.session is the space of one request tree: it exists only inside an algorithm call');
        const space: Space = { kind: 'session', id: p.call.session, accountId: p.account.id };
        return { space, segments: address.segments, base: 'data://.session', read: true, write: true, own: true };
      }
    }
  }

  private async accountPlace(p: Principal, owner: Account, segments: string[], base: string): Promise<Place> {
    const space: Space = { kind: 'account', id: owner.id, accountId: owner.id };
    const member = isAdmin(p) || (await this.access.isMemberOrSelf(p, owner));
    const first = segments[0];
    const collection = first === undefined ? undefined : await this.store.findFolder(space, first);
    // At the account's root anyone may look: the listing shows only what they may read.
    // Below it, a collection an outsider may not read is the same 404 as a missing one, for
    // every method, so that its name cannot be probed.
    const visible = member || (collection !== undefined && this.aclAllows(p, owner, collection.aclRead));
    const hidden = first !== undefined && !visible;
    return { space, segments, base, read: !hidden, write: member, own: false, owner, member, collection, hidden };
  }

  private async algoPlace(p: Principal, algorithm: Algorithm, segments: string[], ownerName?: string, name?: string): Promise<Place> {
    const self = p.call?.algorithmId === algorithm.id;
    const owner = self ? undefined : await this.accounts.findById(algorithm.ownerId);
    const member = self || isAdmin(p) || (owner !== undefined && (await this.access.isMemberOrSelf(p, owner)));
    if (!member) {
      // Private algorithms are not revealed to outsiders (as for calls).
      if (algorithm.settings.algorithmCallability !== 'public') throw this.noAlgorithm(ownerName ?? algorithm.ownerName, name ?? algorithm.name);
      throw forbidden(
        `data://.algo/${algorithm.ownerName}/${algorithm.name} belongs to the algorithm: only it and members of ${algorithm.ownerName} may use it`,
      );
    }
    const first = segments[0];
    if (first !== undefined && !(ALGO_ROOTS as readonly string[]).includes(first)) {
      throw Errors.dataNotFound(
        `data://.algo/${algorithm.ownerName}/${algorithm.name}/${first} does not exist: an algorithm's space holds only temp and perm`,
      );
    }
    const space: Space = { kind: 'algo', id: algorithm.id, accountId: algorithm.ownerId };
    const base = self && !ownerName ? 'data://.algo' : `data://.algo/${algorithm.ownerName}/${algorithm.name}`;
    return { space, segments, base, read: true, write: true, own: self };
  }

  private aclAllows(p: Principal, owner: Account, acl: string[] | null): boolean {
    if (!acl) return false;
    if (acl.includes(ACL_PUBLIC)) return true;
    return acl.includes(ACL_MY_ALGORITHMS) && p.call?.algorithmOwnerId === owner.id;
  }

  private requireRead(p: Principal, place: Place): void {
    if (!place.own) requireCapability(p, 'read_data');
    if (place.hidden) throw this.missing(place);
    if (place.read) return;
    // An owner's collection the caller may not read: say whose it is, not what is in it.
    throw forbidden(
      `${p.account.name} may not read ${this.uri(place, place.segments.slice(0, 1))}: only ${place.owner?.name ?? 'its owner'}${
        place.owner?.kind === 'organization' ? ' and its members' : ''
      } and the readers in its ACL may`,
    );
  }

  private requireWrite(p: Principal, place: Place): void {
    if (!place.own) requireCapability(p, 'write_data');
    if (place.hidden) throw this.missing(place);
    if (place.write) return;
    const owner = place.owner?.name ?? 'its owner';
    throw forbidden(
      `${p.account.name} may not change ${this.uri(place, place.segments.slice(0, 1))}: only ${owner}${
        place.owner?.kind === 'organization' ? ' and its members' : ''
      } may write there`,
    );
  }

  // --- folders and files --------------------------------------------------------------------

  /** Folders that exist without a record: an account's root, an algorithm's root, temp, perm, a session's root. */
  private implicitFolder(place: Place, segments: string[]): boolean {
    if (segments.length === 0) return true;
    return place.space.kind === 'algo' && segments.length === 1;
  }

  private holdsFiles(place: Place, folderSegments: string[]): boolean {
    if (place.space.kind === 'session') return true;
    return folderSegments.length >= 1; // not at an account's or algorithm's root
  }

  private async folderExists(place: Place, segments: string[]): Promise<boolean> {
    if (this.implicitFolder(place, segments)) return true;
    if (place.space.kind === 'account' && segments.length === 1) return place.collection !== undefined;
    return (await this.store.findFolder(place.space, joinPath(segments))) !== undefined;
  }

  private async nodeAt(place: Place): Promise<Node | undefined> {
    const { space, segments } = place;
    if (this.implicitFolder(place, segments)) return { type: 'folder' };
    if (space.kind === 'account' && segments.length === 1) return place.collection && { type: 'folder', record: place.collection };
    const record = await this.store.findFolder(space, joinPath(segments));
    if (record) return { type: 'folder', record };
    const file = await this.store.findFile(space, joinPath(segments.slice(0, -1)), segments[segments.length - 1]!);
    return file && { type: 'file', file };
  }

  /** Opens the file's blob; a replace racing with the read is retried once with the new blob. */
  private async open(place: Place, file: FileRecord): Promise<{ size: number; lastModified: string; body: Readable }> {
    let current: FileRecord | undefined = file;
    for (let attempt = 0; attempt < 2 && current; attempt++) {
      const blob = await this.blobs.get(current.blobKey);
      if (blob) return { size: blob.size, lastModified: current.lastModified, body: blob.body };
      current = await this.store.findFile(place.space, file.folder, file.name);
    }
    throw this.missing(place);
  }

  /**
   * Folders first, then files, never on the same page (an old JS client mis-iterates mixed
   * pages). The marker holds the phase and the last name shown.
   */
  private async list(p: Principal, place: Place, q: { marker?: string; limit?: string; acl?: boolean }): Promise<Listing> {
    const page = parsePageRequest(q.limit, q.marker);
    let phase: 'd' | 'f' = 'd';
    let after: string | undefined;
    if (page.after !== undefined) {
      // `d:<name>` or `f:<name>`; any other key (from a marker never issued) is a folder name.
      const tagged = /^[df]:/.test(page.after);
      phase = tagged ? (page.after[0] as 'd' | 'f') : 'd';
      after = (tagged ? page.after.slice(2) : page.after) || undefined;
    }
    const listing: Listing = { folders: [], files: [], nextMarker: null };
    const { space, segments } = place;
    const path = joinPath(segments);
    const filesHere = this.holdsFiles(place, segments);

    if (phase === 'd') {
      const { names, more } = await this.folderNames(p, place, after, page.limit);
      listing.folders = names.map((name) => ({ name }));
      if (more) listing.nextMarker = encodeMarker(`d:${names[names.length - 1]}`);
      else if (names.length > 0 && filesHere && (await this.store.listFiles(space, path, undefined, 1)).length > 0) {
        listing.nextMarker = encodeMarker('f:');
      }
      if (names.length > 0 || !filesHere) return this.withAcl(listing, place, q.acl);
      after = undefined;
    }
    const rows = await this.store.listFiles(space, path, after, page.limit + 1);
    const shown = rows.slice(0, page.limit);
    listing.files = shown.map((f) => ({ name: f.name, size: f.size, lastModified: f.lastModified }));
    if (rows.length > page.limit) listing.nextMarker = encodeMarker(`f:${shown[shown.length - 1]!.name}`);
    return this.withAcl(listing, place, q.acl);
  }

  /** Folder names of one page; at an account's root only the collections the caller may read. */
  private async folderNames(p: Principal, place: Place, after: string | undefined, limit: number): Promise<{ names: string[]; more: boolean }> {
    const { space, segments } = place;
    if (space.kind === 'algo' && segments.length === 0) {
      const names = ALGO_ROOTS.filter((n) => after === undefined || n > after);
      return { names: names.slice(0, limit), more: names.length > limit };
    }
    const filter = space.kind === 'account' && segments.length === 0 && !place.member;
    if (!filter) {
      const rows = await this.store.listFolders(space, joinPath(segments), after, limit + 1);
      return { names: rows.slice(0, limit).map((r) => r.name), more: rows.length > limit };
    }
    const names: string[] = [];
    for (;;) {
      const rows = await this.store.listFolders(space, joinPath(segments), after, limit + 1);
      for (const row of rows.slice(0, limit)) {
        if (!this.aclAllows(p, place.owner!, row.aclRead)) continue;
        names.push(row.name);
        if (names.length > limit) break;
      }
      if (names.length > limit) return { names: names.slice(0, limit), more: true };
      if (rows.length <= limit) return { names, more: false };
      after = rows[limit - 1]!.name;
    }
  }

  private withAcl(listing: Listing, place: Place, wanted: boolean | undefined): Listing {
    if (!wanted) return listing;
    if (place.space.kind === 'account') {
      if (place.collection) listing.acl = { read: place.collection.aclRead ?? [] };
    } else {
      listing.acl = { read: [] }; // .algo and .session spaces are private to their algorithm and tree
    }
    return listing;
  }

  // --- quota, sweeps ------------------------------------------------------------------------

  /** Gives back an upload's reserved bytes; on failure the reservation goes stale and the sweep deletes it. */
  private async releaseQuietly(reservation: QuotaReservation | undefined): Promise<void> {
    try {
      await reservation?.release();
    } catch (err) {
      this.log.warn({ err, reservation: reservation?.id }, 'could not release a quota reservation; it lapses by itself');
    }
  }

  private async expireFiles(kind: 'algo' | 'session', root: string, before: string): Promise<number> {
    let n = 0;
    for (;;) {
      const files = await this.store.filesModifiedBefore(kind, root, before, SWEEP_BATCH);
      for (const f of files) {
        await this.store.deleteFile(f.space, f.folder, f.name);
        await this.discard(f.blobKey);
      }
      n += files.length;
      if (files.length < SWEEP_BATCH) return n;
    }
  }

  /** Deepest first, so a folder emptied by removing its subfolders goes in the same sweep. */
  private async removeEmptyFolders(kind: 'algo' | 'session', root: string, before: string): Promise<number> {
    const folders = await this.store.foldersCreatedBefore(kind, root, before);
    folders.sort((a, b) => b.path.split('/').length - a.path.split('/').length);
    let n = 0;
    for (const f of folders) {
      if (await this.store.hasChildren(f.space, f.path)) continue;
      await this.store.deleteFolderRecord(f.id);
      n++;
    }
    return n;
  }

  private async dropSpace(space: { kind: 'algo' | 'session'; id: string }): Promise<number> {
    const files = await this.store.filesUnder(space, '');
    await this.store.deleteTree(space, '');
    for (const f of files) await this.discard(f.blobKey);
    return files.length;
  }

  /** Deletes a blob no record names any more; a failure leaves garbage for the collector, not an error. */
  private async discard(key: string): Promise<void> {
    try {
      await this.blobs.delete(key);
    } catch (err) {
      this.log.warn({ err, blob: key }, 'could not delete a blob; the garbage collection of the data sweep retries');
    }
  }

  // --- messages -----------------------------------------------------------------------------

  private uri(place: Place, segments: string[]): string {
    return segments.length ? `${place.base}/${joinPath(segments)}` : place.base;
  }

  private missing(place: Place): DomainError {
    return Errors.dataNotFound(`${this.uri(place, place.segments)} does not exist`);
  }

  private noAlgorithm(owner: string, name: string): DomainError {
    return Errors.algorithmAddressNotFound({ address: `algo://${owner}/${name}`, detail: ` (data://.algo/${owner}/${name})` });
  }
}

/**
 * The body as the blob store sees it: upload errors (a dropped connection) become errors of
 * this stream, and past `allowance` bytes it fails with the quota error. The body is piped, not
 * pipelined, so that a refusal here leaves the request itself to the HTTP layer (which drains it
 * and answers).
 */
function limited(body: Readable, reservation: QuotaReservation | undefined): Readable {
  let seen = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback) {
      seen += chunk.length;
      if (!reservation) return done(null, chunk);
      // Bytes pass on only once reserved: the blob store never holds bytes past the quota.
      reservation.cover(seen).then(() => done(null, chunk), done);
    },
  });
  const interrupted = (err?: Error) => {
    if (counter.destroyed) return;
    counter.destroy(
      Errors.uploadInterrupted({ reason: err?.message }),
    );
  };
  body.once('error', interrupted);
  body.once('close', () => {
    if (!body.readableEnded) interrupted();
  });
  body.pipe(counter);
  return counter;
}
