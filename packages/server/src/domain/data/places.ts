/**
 * Where a data address points and what the caller may do there (docs/compatibility.md §5).
 *
 * Access: the owning account, members of an owning organization and cluster admins read and
 * write an account's collections; a collection's read ACL lets everyone ("user://*") or the
 * owner's algorithms, whoever calls them ("algo://.my/*"), read it. A collection the caller may
 * not read is answered exactly like one that does not exist (404, for reads and writes alike),
 * so names cannot be probed; where the caller may read it, a write is refused with 403. A
 * per-call key acts as the caller (so `.my` is the caller's) and also reaches the running
 * algorithm's own `.algo` space and its request tree's `.session`.
 */
import { DomainError, Errors, forbidden, invalid } from '../errors.js';
import { isAdmin, requireCapability, type Principal } from '../accounts/principal.js';
import type { OwnerAccess } from '../accounts/access.js';
import type { Account } from '../accounts/model.js';
import type { AccountStore } from '../accounts/ports.js';
import type { Algorithm } from '../algorithms/model.js';
import type { AlgorithmStore } from '../algorithms/ports.js';
import { ACL_MY_ALGORITHMS, ACL_PUBLIC, type FileRecord, type FolderRecord, type Space } from './model.js';
import { ALGO_ROOTS, joinPath, parseDataPath } from './paths.js';
import type { DataStore } from './ports.js';

/** Where an address points: a space, the names inside it, and what the caller may do there. */
export interface Place {
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

export type DataNode = { type: 'folder'; record?: FolderRecord } | { type: 'file'; file: FileRecord };

/** Resolves addresses to places and looks up what is at them. */
export class DataPlaces {
  constructor(
    private readonly store: DataStore,
    private readonly accounts: AccountStore,
    private readonly algorithms: AlgorithmStore,
    private readonly access: OwnerAccess,
  ) {}

  async locate(p: Principal, path: string): Promise<Place> {
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
        if (!algorithm) throw noAlgorithm(address.owner, address.algorithm);
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

  /** The folder or file at the place, or undefined where nothing is. */
  async nodeAt(place: Place): Promise<DataNode | undefined> {
    const { space, segments } = place;
    if (implicitFolder(place, segments)) return { type: 'folder' };
    if (space.kind === 'account' && segments.length === 1) return place.collection && { type: 'folder', record: place.collection };
    const record = await this.store.findFolder(space, joinPath(segments));
    if (record) return { type: 'folder', record };
    const file = await this.store.findFile(space, joinPath(segments.slice(0, -1)), segments[segments.length - 1]!);
    return file && { type: 'file', file };
  }

  async folderExists(place: Place, segments: string[]): Promise<boolean> {
    if (implicitFolder(place, segments)) return true;
    if (place.space.kind === 'account' && segments.length === 1) return place.collection !== undefined;
    return (await this.store.findFolder(place.space, joinPath(segments))) !== undefined;
  }

  private async accountPlace(p: Principal, owner: Account, segments: string[], base: string): Promise<Place> {
    const space: Space = { kind: 'account', id: owner.id, accountId: owner.id };
    const member = isAdmin(p) || (await this.access.isMemberOrSelf(p, owner));
    const first = segments[0];
    const collection = first === undefined ? undefined : await this.store.findFolder(space, first);
    // At the account's root anyone may look: the listing shows only what they may read.
    // Below it, a collection an outsider may not read is the same 404 as a missing one, for
    // every method, so that its name cannot be probed.
    const visible = member || (collection !== undefined && aclAllows(p, owner, collection.aclRead));
    const hidden = first !== undefined && !visible;
    return { space, segments, base, read: !hidden, write: member, own: false, owner, member, collection, hidden };
  }

  private async algoPlace(p: Principal, algorithm: Algorithm, segments: string[], ownerName?: string, name?: string): Promise<Place> {
    const self = p.call?.algorithmId === algorithm.id;
    const owner = self ? undefined : await this.accounts.findById(algorithm.ownerId);
    const member = self || isAdmin(p) || (owner !== undefined && (await this.access.isMemberOrSelf(p, owner)));
    if (!member) {
      // Private algorithms are not revealed to outsiders (as for calls).
      if (algorithm.settings.algorithmCallability !== 'public') throw noAlgorithm(ownerName ?? algorithm.ownerName, name ?? algorithm.name);
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
}

/** Whether a collection's read ACL lets the caller read it. */
export function aclAllows(p: Principal, owner: Account, acl: string[] | null): boolean {
  if (!acl) return false;
  if (acl.includes(ACL_PUBLIC)) return true;
  return acl.includes(ACL_MY_ALGORITHMS) && p.call?.algorithmOwnerId === owner.id;
}

export function requireRead(p: Principal, place: Place): void {
  if (!place.own) requireCapability(p, 'read_data');
  if (place.hidden) throw missing(place);
  if (place.read) return;
  // An owner's collection the caller may not read: say whose it is, not what is in it.
  throw forbidden(
    `${p.account.name} may not read ${uri(place, place.segments.slice(0, 1))}: only ${place.owner?.name ?? 'its owner'}${
      place.owner?.kind === 'organization' ? ' and its members' : ''
    } and the readers in its ACL may`,
  );
}

export function requireWrite(p: Principal, place: Place): void {
  if (!place.own) requireCapability(p, 'write_data');
  if (place.hidden) throw missing(place);
  if (place.write) return;
  const owner = place.owner?.name ?? 'its owner';
  throw forbidden(
    `${p.account.name} may not change ${uri(place, place.segments.slice(0, 1))}: only ${owner}${
      place.owner?.kind === 'organization' ? ' and its members' : ''
    } may write there`,
  );
}

/** Folders that exist without a record: an account's root, an algorithm's root, temp, perm, a session's root. */
export function implicitFolder(place: Place, segments: string[]): boolean {
  if (segments.length === 0) return true;
  return place.space.kind === 'algo' && segments.length === 1;
}

export function holdsFiles(place: Place, folderSegments: string[]): boolean {
  if (place.space.kind === 'session') return true;
  return folderSegments.length >= 1; // not at an account's or algorithm's root
}

/** The `data://…` address of `segments` inside the place's space, as the caller addressed it. */
export function uri(place: Place, segments: string[]): string {
  return segments.length ? `${place.base}/${joinPath(segments)}` : place.base;
}

export function missing(place: Place): DomainError {
  return Errors.dataNotFound(`${uri(place, place.segments)} does not exist`);
}

function noAlgorithm(owner: string, name: string): DomainError {
  return Errors.algorithmAddressNotFound({ address: `algo://${owner}/${name}`, detail: ` (data://.algo/${owner}/${name})` });
}
