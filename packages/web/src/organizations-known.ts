/**
 * Which organizations the signed-in account belongs to. The API has no "my organizations"
 * listing for non-admins yet, so until it does the UI takes `organizations` from whoami when
 * the server sends it, and otherwise remembers, per account in this browser, the organizations
 * created, joined or opened here, keeping only those the API still lets the account read.
 */
import { AlgohostError, type Organization } from '@algohost/client';
import type { SignedIn } from './session.js';

const key = (username: string) => `algohost.organizations.${username}`;

function remembered(username: string): string[] {
  try {
    const list = JSON.parse(localStorage.getItem(key(username)) ?? '[]') as unknown;
    return Array.isArray(list) ? list.filter((x): x is string => typeof x === 'string') : [];
  } catch {
    return [];
  }
}

export function rememberOrganization(username: string, org: string): void {
  const list = remembered(username).filter((o) => o.toLowerCase() !== org.toLowerCase());
  localStorage.setItem(key(username), JSON.stringify([...list, org].sort()));
}

export function forgetOrganization(username: string, org: string): void {
  localStorage.setItem(key(username), JSON.stringify(remembered(username).filter((o) => o.toLowerCase() !== org.toLowerCase())));
}

/** The organizations the account can read, each looked up once. */
export async function myOrganizations(s: SignedIn): Promise<Organization[]> {
  const fromServer = (s.me as { organizations?: unknown }).organizations;
  const names = Array.isArray(fromServer)
    ? fromServer.map((o) => (typeof o === 'string' ? o : (o as { org_name?: string }).org_name)).filter((o): o is string => !!o)
    : remembered(s.me.username);
  const found = await Promise.all(
    names.map(async (name) => {
      try {
        return await s.client.organizations.get(name);
      } catch (err) {
        // Gone, or no longer a member: stop showing it.
        if (err instanceof AlgohostError && (err.status === 404 || err.status === 403)) {
          forgetOrganization(s.me.username, name);
          return null;
        }
        throw err;
      }
    }),
  );
  return found.filter((o): o is Organization => o !== null);
}
