/**
 * The repositories' side of SCM connections: pushing the default branch to a provider, and
 * fetching a provider's branch into a repository, bounded and checked against the repository
 * limits like a push.
 */
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { FetchedBranch } from '../domain/scm/ports.js';
import { Errors } from '../domain/errors.js';
import { runGit } from './process.js';
import { DEFAULT_BRANCH, defaultBranchHead, RECEIVE_CHECKS } from './repository-layout.js';
import { formatBytes, treeBytes, type IncomingFetch, type RepositorySizes } from './repository-sizes.js';

export class ProviderMirror {
  /** The fetch from a provider running for a repository (the next one waits for it). */
  private readonly fetching = new Map<string, Promise<void>>();

  constructor(
    /** Where the repositories are: staging repositories are made beside them. */
    private readonly root: string,
    private readonly git: string,
    private readonly pathOf: (algorithmId: string) => string,
    private readonly sizes: RepositorySizes,
  ) {}

  async pushTo(algorithmId: string, url: string, auth: { username: string; password: string }): Promise<void> {
    await this.remoteGit(
      ['push', '--quiet', '--end-of-options', remoteUrl(url), `refs/heads/${DEFAULT_BRANCH}:refs/heads/${DEFAULT_BRANCH}`],
      this.pathOf(algorithmId),
      auth,
    );
  }

  /**
   * Fetches the branch into a staging repository of its own (`.tmp-fetch-…` beside the
   * repositories, borrowing this repository's objects as alternates so only what is new
   * travels). The fetch is bounded like a push: past the push limit in bytes received git is
   * stopped; then the repository and account limits are checked against what came. Only an
   * accepted fetch moves its objects in and points the default branch at the fetched tip (and
   * only if nothing else moved it meanwhile); a refused one leaves nothing behind.
   * Fetches of one repository run one at a time, so an earlier one can never land after a later one.
   */
  fetchFrom(into: IncomingFetch, url: string, auth: { username: string; password: string }, branch: string): Promise<FetchedBranch> {
    if (!/^[A-Za-z0-9._/-]{1,200}$/.test(branch) || branch.includes('..')) throw new Error(`not a branch name: ${branch}`);
    const previous = this.fetching.get(into.algorithmId) ?? Promise.resolve();
    const run = previous.then(
      () => this.fetchStaged(into, url, auth, branch),
      () => this.fetchStaged(into, url, auth, branch),
    );
    const settled = run.then(
      () => undefined,
      () => undefined,
    );
    this.fetching.set(into.algorithmId, settled);
    void settled.then(() => {
      if (this.fetching.get(into.algorithmId) === settled) this.fetching.delete(into.algorithmId);
    });
    return run;
  }

  private async fetchStaged(
    into: IncomingFetch,
    url: string,
    auth: { username: string; password: string },
    branch: string,
  ): Promise<FetchedBranch> {
    const repo = this.pathOf(into.algorithmId);
    const before = await defaultBranchHead(this.git, repo);
    await this.sweepStaging();
    const staging = path.join(this.root, `${STAGING_PREFIX}${crypto.randomUUID()}.git`);
    const fetchId = `fetch-${crypto.randomUUID()}`;
    try {
      // No template: nothing but what git needs, so the staging size is what was received.
      await runGit(this.git, ['init', '--quiet', '--bare', '--template=', staging]);
      await fs.writeFile(path.join(staging, 'objects', 'info', 'alternates'), `${path.join(repo, 'objects')}\n`);
      const received = path.join(staging, 'objects');
      const overPushLimit = await this.boundedFetch(staging, received, url, auth, branch);
      if (overPushLimit) throw Errors.scmSourceTooLarge({ reason: overPushLimit, branch, head: before });
      const sha = await runGit(this.git, ['rev-parse', '--verify', `${STAGED_REF}^{commit}`], { cwd: staging }).then(
        (r) => r.stdout.trim(),
        () => {
          throw Errors.scmProviderFailed(`${branch} at the provider does not point at a commit: nothing was kept or built`);
        },
      );
      if (sha === before) return { sha, moved: false };

      const incoming = await treeBytes(received, (dir, name) => dir === 'info' && name === 'alternates');
      const over = await this.sizes.overLimits(into, incoming, 'fetch');
      if (over) throw Errors.scmSourceTooLarge({ reason: over, branch, head: before });
      this.sizes.hold(fetchId, into, incoming);
      await moveObjects(received, path.join(repo, 'objects'));
      // Compare-and-set against what main was before the fetch: what another node's fetch set
      // meanwhile is never overwritten by this, possibly older, view of the provider.
      const moved = await runGit(this.git, ['update-ref', `refs/heads/${DEFAULT_BRANCH}`, sha, before ?? ZERO_SHA], { cwd: repo }).then(
        () => true,
        () => false,
      );
      if (!moved)
        throw Errors.scmProviderFailed(`${DEFAULT_BRANCH} moved here while ${branch} was being fetched; nothing was built: sync again`);
      // Refs of the earlier fetch-in-place (they kept fetched objects alive): no longer used.
      await runGit(this.git, ['update-ref', '-d', INCOMING_REF], { cwd: repo }).catch(() => undefined);
      return { sha, moved: true };
    } finally {
      await fs.rm(staging, { recursive: true, force: true });
      if (this.sizes.release(fetchId)) await this.sizes.recordSize(into.algorithmId);
    }
  }

  /** Removes staging repositories left by a process stopped mid-fetch (a fetch still running after that long fails when its staging goes). */
  private async sweepStaging(): Promise<void> {
    const entries = await fs.readdir(this.root).catch(() => [] as string[]);
    const before = Date.now() - STAGING_LIFETIME_MS;
    for (const name of entries.filter((e) => e.startsWith(STAGING_PREFIX))) {
      const dir = path.join(this.root, name);
      const stat = await fs.stat(dir).catch(() => undefined);
      if (stat && stat.mtimeMs < before) await fs.rm(dir, { recursive: true, force: true });
    }
  }

  /**
   * `git fetch` of the branch into the staging repository, watched while it runs: once the
   * objects received pass the push limit, git is killed. Answers why it was stopped, or
   * undefined when it completed within the limit.
   */
  private async boundedFetch(
    staging: string,
    received: string,
    url: string,
    auth: { username: string; password: string },
    branch: string,
  ): Promise<string | undefined> {
    const max = this.sizes.limits.maxPushBytes;
    const stop = new AbortController();
    let over: number | undefined;
    const measure = async () => {
      const bytes = await treeBytes(received, (dir, name) => dir === 'info' && name === 'alternates');
      if (bytes > max && over === undefined) {
        over = bytes;
        stop.abort();
      }
    };
    let watching: NodeJS.Timeout | undefined;
    let fetched = false;
    const tick = () => {
      if (fetched || stop.signal.aborted) return;
      watching = setTimeout(() => {
        // A failed look (the staging directory changing under the walk) waits for the next one.
        void measure()
          .catch(() => undefined)
          .finally(tick);
      }, FETCH_WATCH_MS);
    };
    if (max > 0) tick();
    try {
      await this.remoteGit(
        [
          'fetch',
          '--quiet',
          '--no-tags',
          '--no-write-fetch-head',
          '--end-of-options',
          remoteUrl(url),
          `+refs/heads/${branch}:${STAGED_REF}`,
        ],
        staging,
        auth,
        stop.signal,
      );
    } catch (err) {
      if (over === undefined) throw err;
    } finally {
      fetched = true;
      clearTimeout(watching);
    }
    // What arrived between two looks still counts.
    if (max > 0 && over === undefined) await measure();
    if (over === undefined) return undefined;
    return `${branch} at the provider is more than ${formatBytes(max)} to fetch (${formatBytes(over)} received), over the push size limit of ${formatBytes(max)} (${max} bytes)`;
  }

  /** git against a provider: credentials in a header given through the environment (never argv or the URL), http(s) only, no prompts, no hang. */
  private async remoteGit(args: string[], cwd: string, auth: { username: string; password: string }, signal?: AbortSignal): Promise<void> {
    const header = `Authorization: Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}`;
    const config = [
      ['http.extraHeader', header],
      ['protocol.allow', 'never'],
      ['protocol.https.allow', 'always'],
      ['protocol.http.allow', 'always'],
      ['http.followRedirects', 'false'],
      ['http.lowSpeedLimit', '1000'],
      ['http.lowSpeedTime', '60'],
      ['credential.helper', ''],
      // Everything received stays one pack (never loose objects), and nothing runs after the fetch.
      ['transfer.unpackLimit', '1'],
      ['fetch.unpackLimit', '1'],
      ['gc.auto', '0'],
      ['maintenance.auto', 'false'],
      ...RECEIVE_CHECKS,
    ];
    const env: NodeJS.ProcessEnv = { GIT_CONFIG_COUNT: String(config.length) };
    config.forEach(([k, v], i) => {
      env[`GIT_CONFIG_KEY_${i}`] = k;
      env[`GIT_CONFIG_VALUE_${i}`] = v;
    });
    try {
      await runGit(this.git, args, { cwd, env, signal });
    } catch (err) {
      // git's own words (it never prints the header), without the credentials a URL might carry.
      const detail = (err as Error).message.replace(/\/\/[^@/\s]*@/g, '//').slice(0, 500);
      throw Errors.scmProviderFailed(`git ${args[0]} with the provider failed: ${detail}`);
    }
  }
}

/** Where fetches from a provider used to land in the repository itself (deleted when met). */
const INCOMING_REF = 'refs/algohost/incoming';
/** Where a fetch from a provider lands in its staging repository. */
const STAGED_REF = 'refs/heads/incoming';
const ZERO_SHA = '0'.repeat(40);
/** Staging repositories of fetches from providers, beside the repositories. */
const STAGING_PREFIX = '.tmp-fetch-';
/** A staging repository older than this was left by a process that stopped mid-fetch. */
const STAGING_LIFETIME_MS = 6 * 3600 * 1000;
/** How often a running fetch's received bytes are measured against the push limit. */
const FETCH_WATCH_MS = 50;

/**
 * Moves the objects of a staging repository into a repository, as git itself moves a push out
 * of quarantine: loose objects and pack data first, each pack's `.idx` last (a pack is used
 * only once its index exists, so a reader never meets half a pack). A file already there has
 * the same content (objects and packs are named by their hash) and is left as it is.
 */
const exists = (file: string) =>
  fs.stat(file).then(
    () => true,
    () => false,
  );

async function moveObjects(from: string, to: string): Promise<void> {
  const files: string[] = [];
  const walk = async (rel: string): Promise<void> => {
    for (const e of await fs.readdir(path.join(from, rel), { withFileTypes: true })) {
      const child = rel ? path.join(rel, e.name) : e.name;
      if (rel === '' && e.name === 'info') continue;
      if (e.isDirectory()) await walk(child);
      else if (e.isFile()) files.push(child);
    }
  };
  await walk('');
  const last = (f: string) => (f.endsWith('.idx') ? 1 : 0);
  files.sort((a, b) => last(a) - last(b));
  for (const rel of files) {
    const target = path.join(to, rel);
    await fs.mkdir(path.dirname(target), { recursive: true });
    if (!(await exists(target))) await fs.rename(path.join(from, rel), target);
  }
}

/** A provider's repository address: http(s) only, no credentials in it. */
function remoteUrl(text: string): string {
  const url = new URL(text);
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw Errors.scmProviderFailed(`the provider gave a repository address that is not http(s): ${url.protocol}`);
  url.username = '';
  url.password = '';
  return url.toString();
}
