/** Hosted data as the data pages show it: the three read ACLs offered, folder listings, page paths. */
import type { DataAcl, DataDirectory } from '@algohost/client';
import type { SignedIn } from '../../session.js';

export const ACLS: [string, string, DataAcl][] = [
  ['private', 'Private: only the owner (and organization members)', { read: [] }],
  ['algorithms', "Owner's algorithms may read it", { read: ['algo://.my/*'] }],
  ['public', 'Public: anyone may read it', { read: ['user://*'] }],
];

/** The ACLs as a select offers them. */
export const ACL_OPTIONS = ACLS.map(([id, label]) => [id, label] as const);

export function aclName(acl: DataAcl | undefined): string {
  const read = acl?.read ?? [];
  if (read.includes('user://*')) return 'public';
  if (read.includes('algo://.my/*')) return 'algorithms';
  return 'private';
}

export const dataUri = (path: string) => `data://${path}`;

/** A whole folder: the API pages folders first and files after them, so follow every marker. */
export async function listAll(c: SignedIn['client'], uri: string, acl: boolean): Promise<DataDirectory> {
  const all: DataDirectory = { folders: [], files: [] };
  let marker: string | undefined;
  for (;;) {
    const page = await c.data.list(uri, { limit: 1000, marker, acl: acl && marker === undefined });
    all.folders!.push(...(page.folders ?? []));
    all.files!.push(...(page.files ?? []));
    all.acl ??= page.acl;
    if (!page.marker || page.marker === marker) return all;
    marker = page.marker;
  }
}
export const pagePath = (path: string) => `/data/${path.split('/').map(encodeURIComponent).join('/')}`;
