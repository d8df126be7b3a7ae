/**
 * What the external-SCM contract suite (`scm-contract.ts`) needs from a provider: a real Gitea
 * (`gitea-forge.ts`), or a fake of GitHub, GitLab or Bitbucket started by the test
 * (`fake-forges.ts`). Everything is done as a user of the provider would: over its HTTP API,
 * its web consent, and Git.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { git } from './git.js';
import { makeTempDir } from './server.js';

export interface ForgeUser {
  name: string;
  password: string;
}

export interface Forge {
  label: string;
  provider: 'github' | 'gitlab' | 'bitbucket' | 'gitea';
  /** Whether deliveries are signed over their body (GitLab sends the secret itself instead). */
  signsBody: boolean;
  /** Registers an OAuth application calling back to `redirectUri`; answers the body of POST /v1/admin/scms. */
  registerOAuthApp(redirectUri: string): Promise<Record<string, unknown>>;
  createUser(name: string): Promise<ForgeUser>;
  /** An organization (group, workspace) where `owner` may create repositories and `reader` (if given) may not. */
  createOrganization(owner: ForgeUser, name: string, reader?: ForgeUser): Promise<void>;
  /** As `user` in its browser: approves the consent page at `authorizeUrl`; answers where the provider redirects. */
  consent(user: ForgeUser, authorizeUrl: string): Promise<string>;
  /** The user takes back every grant it gave, at the provider. */
  revokeGrants(user: ForgeUser): Promise<void>;
  createRepository(user: ForgeUser, name: string): Promise<void>;
  /** The Git address of a repository, with the user's credentials in it. */
  cloneUrl(user: ForgeUser, owner: string, repo: string): string;
  /** A push delivery as the provider sends it, signed with `secret` the provider's way. */
  delivery(
    secret: string,
    p: { id: string; branch: string; after: string; before?: string },
  ): { headers: Record<string, string>; body: string };
  /** Turns off the repository's webhooks (a provider whose webhooks cannot reach algohost). */
  disableWebhooks(user: ForgeUser, owner: string, repo: string): Promise<void>;
  stop(): Promise<void>;
}

/** Pushes a commit adding `files` on top of main, as `user`; answers its id. */
export async function pushAtForge(
  forge: Forge,
  user: ForgeUser,
  owner: string,
  repo: string,
  files: Record<string, string | Buffer>,
  message: string,
): Promise<string> {
  const parent = await makeTempDir('algohost-forge-');
  const dir = path.join(parent, 'work');
  try {
    const cloned = await git(['clone', '-q', forge.cloneUrl(user, owner, repo), dir]);
    assert.equal(cloned.code, 0, cloned.stderr);
    for (const [name, content] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), content);
    await git(['add', '-A'], dir);
    const commit = await git(['commit', '-q', '-m', message], dir);
    assert.equal(commit.code, 0, commit.stderr);
    const pushed = await git(['push', '-q', 'origin', 'HEAD:main'], dir);
    assert.equal(pushed.code, 0, pushed.stderr);
    return (await git(['rev-parse', 'HEAD'], dir)).stdout.trim();
  } finally {
    await fs.promises.rm(parent, { recursive: true, force: true });
  }
}

/** The commit ids and messages of main, newest first, and the names of the files at its tip. */
export async function mainAtForge(
  forge: Forge,
  user: ForgeUser,
  owner: string,
  repo: string,
): Promise<{ commits: { sha: string; message: string }[]; files: string[] }> {
  const parent = await makeTempDir('algohost-forge-');
  const dir = path.join(parent, 'work');
  try {
    const cloned = await git(['clone', '-q', forge.cloneUrl(user, owner, repo), dir]);
    assert.equal(cloned.code, 0, cloned.stderr);
    const log = await git(['log', '--format=%H %s', 'main'], dir);
    const files = await git(['ls-tree', '-r', '--name-only', 'main'], dir);
    return {
      commits: log.stdout
        .trim()
        .split('\n')
        .map((l) => ({ sha: l.slice(0, 40), message: l.slice(41) })),
      files: files.stdout.trim().split('\n'),
    };
  } finally {
    await fs.promises.rm(parent, { recursive: true, force: true });
  }
}

/** A minimal cookie jar for driving a provider's web pages with fetch. */
export class CookieJar {
  private readonly cookies = new Map<string, string>();

  store(res: Response): void {
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      if (/max-age=0/i.test(c) || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  /** fetch with the jar's cookies, redirects not followed. */
  async fetch(url: string, init: RequestInit = {}): Promise<Response> {
    const res = await fetch(url, {
      ...init,
      redirect: 'manual',
      headers: { ...(init.headers as Record<string, string>), cookie: this.header() },
    });
    this.store(res);
    return res;
  }
}

/** HMAC-SHA256 of the body, hex: how GitHub, Gitea and Bitbucket sign deliveries. */
export const hmacHex = (secret: string, body: string) => crypto.createHmac('sha256', secret).update(body).digest('hex');
