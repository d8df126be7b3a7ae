/**
 * Directory listings of hosted data: folders first, then files, never on the same page (an old
 * JS client mis-iterates mixed pages). The marker holds the phase and the last name shown.
 */
import type { Principal } from '../accounts/principal.js';
import { encodeMarker, parsePageRequest } from '../pagination.js';
import { ALGO_ROOTS, joinPath } from './paths.js';
import { aclAllows, holdsFiles, type Place } from './places.js';
import type { DataStore } from './ports.js';

export interface Listing {
  folders: { name: string }[];
  files: { name: string; size: number; lastModified: string }[];
  nextMarker: string | null;
  acl?: { read: string[] };
}

export interface ListingQuery {
  marker?: string;
  limit?: string;
  acl?: boolean;
}

export async function listFolder(store: DataStore, p: Principal, place: Place, q: ListingQuery): Promise<Listing> {
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
  const filesHere = holdsFiles(place, segments);

  if (phase === 'd') {
    const { names, more } = await folderNames(store, p, place, after, page.limit);
    listing.folders = names.map((name) => ({ name }));
    if (more) listing.nextMarker = encodeMarker(`d:${names[names.length - 1]}`);
    else if (names.length > 0 && filesHere && (await store.listFiles(space, path, undefined, 1)).length > 0) {
      listing.nextMarker = encodeMarker('f:');
    }
    if (names.length > 0 || !filesHere) return withAcl(listing, place, q.acl);
    after = undefined;
  }
  const rows = await store.listFiles(space, path, after, page.limit + 1);
  const shown = rows.slice(0, page.limit);
  listing.files = shown.map((f) => ({ name: f.name, size: f.size, lastModified: f.lastModified }));
  if (rows.length > page.limit) listing.nextMarker = encodeMarker(`f:${shown[shown.length - 1]!.name}`);
  return withAcl(listing, place, q.acl);
}

/** Folder names of one page; at an account's root only the collections the caller may read. */
async function folderNames(
  store: DataStore,
  p: Principal,
  place: Place,
  after: string | undefined,
  limit: number,
): Promise<{ names: string[]; more: boolean }> {
  const { space, segments } = place;
  if (space.kind === 'algo' && segments.length === 0) {
    const names = ALGO_ROOTS.filter((n) => after === undefined || n > after);
    return { names: names.slice(0, limit), more: names.length > limit };
  }
  const filter = space.kind === 'account' && segments.length === 0 && !place.member;
  if (!filter) {
    const rows = await store.listFolders(space, joinPath(segments), after, limit + 1);
    return { names: rows.slice(0, limit).map((r) => r.name), more: rows.length > limit };
  }
  const names: string[] = [];
  for (;;) {
    const rows = await store.listFolders(space, joinPath(segments), after, limit + 1);
    for (const row of rows.slice(0, limit)) {
      if (!aclAllows(p, place.owner!, row.aclRead)) continue;
      names.push(row.name);
      if (names.length > limit) break;
    }
    if (names.length > limit) return { names: names.slice(0, limit), more: true };
    if (rows.length <= limit) return { names, more: false };
    after = rows[limit - 1]!.name;
  }
}

function withAcl(listing: Listing, place: Place, wanted: boolean | undefined): Listing {
  if (!wanted) return listing;
  if (place.space.kind === 'account') {
    if (place.collection) listing.acl = { read: place.collection.aclRead ?? [] };
  } else {
    listing.acl = { read: [] }; // .algo and .session spaces are private to their algorithm and tree
  }
  return listing;
}
