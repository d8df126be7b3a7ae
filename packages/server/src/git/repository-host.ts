/**
 * Bare Git repositories on local disk (or a shared volume in cluster mode), one per algorithm,
 * named by algorithm id so that renames and owner changes never move directories.
 */
import crypto from 'node:crypto';
import type { Dirent } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { CommitSummary, SourceFile } from '../domain/algorithms/model.js';
import type { RepositoryHost } from '../domain/algorithms/ports.js';
import type { FetchedBranch, SourceMirror } from '../domain/scm/ports.js';
import { type Clock, systemClock } from '../domain/clock.js';
import { Errors } from '../domain/errors.js';
import type { TarEntry } from '../lib/tar.js';
import { runGit } from './process.js';

export const DEFAULT_BRANCH = 'main';
const COMMITTER = 'algohost <algohost@localhost>';
/** Inside each bare repository: one small repository per published version. */
const VERSIONS_DIR = 'algohost-versions';
/** Inside each bare repository: its size in bytes as measured after its last change. */
const SIZE_FILE = 'algohost-size';

/**
 * Object checks on everything a repository receives: a tree entry `..`, `../x`, `.git` or
 * `.GIT` (and the other fsck errors) refuses the whole push. Written into each new
 * repository's config and also passed with `-c` to every `git receive-pack`, so repositories
 * made before these checks existed are covered too.
 */
export const RECEIVE_CHECKS: readonly [string, string][] = [
  ['receive.fsckObjects', 'true'],
  ['transfer.fsckObjects', 'true'],
  ['fetch.fsckObjects', 'true'],
];

/** Size limits of repositories, in bytes; 0 means no limit. */
export interface RepositoryLimits {
  /** One push: the bytes of the request that carries the pack. */
  maxPushBytes: number;
  /** One algorithm's repository on disk. */
  maxRepositoryBytes: number;
  /** All of one account's algorithm repositories together. */
  maxAccountBytes: number;
}

export const NO_LIMITS: RepositoryLimits = { maxPushBytes: 0, maxRepositoryBytes: 0, maxAccountBytes: 0 };

/** The push being checked: which repository, whose, and how it is named to the pusher. */
export interface IncomingPush {
  pushId: string;
  algorithmId: string;
  ownerId: string;
  ownerName: string;
  name: string;
}

/** The repository a provider's branch is fetched into, and whose it is (its limits are checked like a push's). */
export type IncomingFetch = Omit<IncomingPush, 'pushId'>;

export class GitRepositoryHost implements RepositoryHost, SourceMirror {
  /** Bytes accepted by a pre-receive check whose push has not ended yet (or a fetch not landed yet), by push or fetch id. */
  private readonly pending = new Map<string, { algorithmId: string; ownerId: string; bytes: number }>();
  /** The fetch from a provider running for a repository (the next one waits for it). */
  private readonly fetching = new Map<string, Promise<void>>();

  constructor(
    readonly root: string,
    private readonly git: string,
    readonly limits: RepositoryLimits = NO_LIMITS,
    /** The ids of every algorithm an account owns (their repositories count towards its limit). */
    private readonly algorithmsOf: (ownerId: string) => Promise<string[]> = async () => [],
    /** The time of the commits the service makes (a new algorithm's template). */
    private readonly clock: Clock = systemClock,
  ) {}

  /** `-c` arguments for every `git receive-pack`: object checks and git's own input cap. */
  receivePackConfig(): string[] {
    const args = RECEIVE_CHECKS.flatMap(([k, v]) => ['-c', `${k}=${v}`]);
    if (this.limits.maxPushBytes > 0) args.push('-c', `receive.maxInputSize=${this.limits.maxPushBytes}`);
    return args;
  }

  /**
   * Decides, in the pre-receive hook (objects received and quarantined, no ref updated yet),
   * whether the repository and the account stay within their limits once the push lands.
   * Returns the refusal to show the pusher, or undefined; an accepted push holds its bytes as
   * pending until `pushEnded`, so concurrent pushes of one account cannot pass together.
   */
  async checkIncoming(push: IncomingPush, quarantine: string | undefined): Promise<string | undefined> {
    const { maxRepositoryBytes, maxAccountBytes } = this.limits;
    if (maxRepositoryBytes === 0 && maxAccountBytes === 0) return undefined;
    const incoming = quarantine ? await treeBytes(quarantine) : 0;
    if (incoming === 0) return undefined;
    const over = await this.overLimits(push, incoming, 'push');
    if (over) return `algohost: push refused: ${over}. Nothing was stored.`;
    this.pending.set(push.pushId, { algorithmId: push.algorithmId, ownerId: push.ownerId, bytes: incoming });
    return undefined;
  }

  /**
   * Which limit `incoming` new bytes would break in the repository of `into` or in its owner's
   * repositories together (counting other pushes and fetches accepted and not yet landed), or
   * undefined when both hold. `what` names the transfer in the answer ("this push adds …").
   */
  private async overLimits(into: IncomingFetch, incoming: number, what: 'push' | 'fetch'): Promise<string | undefined> {
    const { maxRepositoryBytes, maxAccountBytes } = this.limits;
    const pendingFor = (match: (p: { algorithmId: string; ownerId: string }) => boolean) =>
      [...this.pending.values()].filter(match).reduce((sum, p) => sum + p.bytes, 0);
    const label = `${into.ownerName}/${into.name}`;

    const repoBytes = (await this.sizeOf(into.algorithmId)) + pendingFor((p) => p.algorithmId === into.algorithmId) + incoming;
    if (maxRepositoryBytes > 0 && repoBytes > maxRepositoryBytes) {
      return (
        `the repository of ${label} would hold ${formatBytes(repoBytes)} (this ${what} adds ${formatBytes(incoming)}), ` +
        `over the repository size limit of ${formatBytes(maxRepositoryBytes)} (${maxRepositoryBytes} bytes)`
      );
    }
    if (maxAccountBytes > 0) {
      let accountBytes = repoBytes + pendingFor((p) => p.ownerId === into.ownerId && p.algorithmId !== into.algorithmId);
      for (const id of await this.algorithmsOf(into.ownerId)) {
        if (id !== into.algorithmId) accountBytes += await this.recordedSize(id);
      }
      if (accountBytes > maxAccountBytes) {
        return (
          `the repositories of ${into.ownerName} would hold ${formatBytes(accountBytes)} together ` +
          `(this ${what} adds ${formatBytes(incoming)}), over the account's repository size limit of ${formatBytes(maxAccountBytes)} ` +
          `(${maxAccountBytes} bytes)`
        );
      }
    }
    return undefined;
  }

  /** After `git receive-pack` has exited: records the repository's new size, then drops the push's pending bytes. */
  async pushEnded(pushId: string, algorithmId: string): Promise<void> {
    try {
      await this.recordSize(algorithmId);
    } finally {
      this.pending.delete(pushId);
    }
  }

  /** The repository's size on disk now (every file, not counting pushes still in quarantine). */
  async sizeOf(algorithmId: string): Promise<number> {
    return treeBytes(
      this.pathOf(algorithmId),
      (dir, name) => (dir === 'objects' && QUARANTINE.test(name)) || (dir === '' && name.startsWith(SIZE_FILE)),
    );
  }

  /** The size recorded after the repository's last push (measured and recorded now if missing). */
  async recordedSize(algorithmId: string): Promise<number> {
    try {
      const n = Number(await fs.readFile(path.join(this.pathOf(algorithmId), SIZE_FILE), 'utf8'));
      if (Number.isSafeInteger(n) && n >= 0) return n;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    return this.recordSize(algorithmId);
  }

  private async recordSize(algorithmId: string): Promise<number> {
    const dir = this.pathOf(algorithmId);
    const bytes = await this.sizeOf(algorithmId);
    const tmp = path.join(dir, `${SIZE_FILE}.${crypto.randomUUID()}`);
    try {
      await fs.writeFile(tmp, `${bytes}\n`);
      await fs.rename(tmp, path.join(dir, SIZE_FILE));
    } catch (err) {
      await fs.rm(tmp, { force: true });
      // A deleted repository has nothing to record.
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    return bytes;
  }

  pathOf(algorithmId: string): string {
    if (!/^[0-9a-f-]{36}$/.test(algorithmId)) throw new Error(`not an algorithm id: ${algorithmId}`);
    return path.join(this.root, `${algorithmId}.git`);
  }

  /**
   * Builds the repository under a temporary name and renames it into place, so a failure
   * never leaves a half-made repository behind. One `git fast-import` writes the whole
   * first commit without a work tree.
   */
  async create(algorithmId: string, files: TarEntry[], message: string): Promise<string> {
    const final = this.pathOf(algorithmId);
    const tmp = path.join(this.root, `.tmp-${crypto.randomUUID()}.git`);
    await fs.mkdir(this.root, { recursive: true, mode: 0o700 });
    try {
      await runGit(this.git, ['init', '--quiet', '--bare', '-b', DEFAULT_BRANCH, tmp]);
      await runGit(this.git, ['config', 'receive.denyNonFastForwards', 'false'], { cwd: tmp });
      for (const [key, value] of RECEIVE_CHECKS) await runGit(this.git, ['config', key, value], { cwd: tmp });
      await runGit(this.git, ['fast-import', '--quiet', '--done'], { cwd: tmp, input: fastImportStream(files, message, this.clock()) });
      const { stdout } = await runGit(this.git, ['rev-parse', `refs/heads/${DEFAULT_BRANCH}`], { cwd: tmp });
      await fs.rename(tmp, final);
      await this.recordSize(algorithmId);
      return stdout.trim();
    } catch (err) {
      await fs.rm(tmp, { recursive: true, force: true });
      throw err;
    }
  }

  async head(algorithmId: string): Promise<string | undefined> {
    try {
      const { stdout } = await runGit(this.git, ['rev-parse', '--verify', '--quiet', `refs/heads/${DEFAULT_BRANCH}^{commit}`], {
        cwd: this.pathOf(algorithmId),
      });
      return stdout.trim() || undefined;
    } catch {
      return undefined;
    }
  }

  async publishVersion(algorithmId: string, version: string, commitSha: string): Promise<void> {
    const tag = `refs/tags/v${version}`;
    // update-ref with an expected old value of "" creates the tag only if it does not exist yet.
    await runGit(this.git, ['update-ref', tag, commitSha, ''], { cwd: this.pathOf(algorithmId) }).catch(async (err: unknown) => {
      const { stdout } = await runGit(this.git, ['rev-parse', '--verify', '--quiet', tag], { cwd: this.pathOf(algorithmId) });
      if (stdout.trim() !== commitSha) throw err;
    });
    await this.versionRepository(algorithmId, version, commitSha);
  }

  /**
   * A version's repository is a few files inside the algorithm's own: HEAD, one branch at the
   * version's commit, and an alternates file borrowing the objects. Cloning it gives exactly that
   * version; nothing is copied, and deleting the algorithm deletes it too.
   */
  async versionRepository(algorithmId: string, version: string, commitSha: string): Promise<string> {
    if (!/^\d+\.\d+\.\d+$/.test(version) || !/^[0-9a-f]{40}$/.test(commitSha)) throw new Error(`bad version ${version}@${commitSha}`);
    const versionsDir = path.join(this.pathOf(algorithmId), VERSIONS_DIR);
    const final = path.join(versionsDir, `${version}.git`);
    try {
      const head = await fs.readFile(path.join(final, 'refs', 'heads', DEFAULT_BRANCH), 'utf8');
      if (head.trim() === commitSha) return final;
    } catch {
      // not made yet (or made before a restore): make it below
    }
    const tmp = path.join(versionsDir, `.tmp-${crypto.randomUUID()}`);
    await fs.mkdir(path.join(tmp, 'objects', 'info'), { recursive: true, mode: 0o700 });
    await fs.mkdir(path.join(tmp, 'refs', 'heads'), { recursive: true });
    await fs.mkdir(path.join(tmp, 'refs', 'tags'), { recursive: true });
    // Relative to this repository's objects directory: survives moving the data directory.
    await fs.writeFile(path.join(tmp, 'objects', 'info', 'alternates'), '../../../objects\n');
    await fs.writeFile(path.join(tmp, 'HEAD'), `ref: refs/heads/${DEFAULT_BRANCH}\n`);
    await fs.writeFile(path.join(tmp, 'config'), '[core]\n\trepositoryformatversion = 0\n\tbare = true\n');
    await fs.writeFile(path.join(tmp, 'refs', 'heads', DEFAULT_BRANCH), `${commitSha}\n`);
    await fs.writeFile(path.join(tmp, 'refs', 'tags', `v${version}`), `${commitSha}\n`);
    await fs.rm(final, { recursive: true, force: true });
    await fs.rename(tmp, final);
    return final;
  }

  async resolveCommit(algorithmId: string, ref: string | undefined): Promise<string | undefined> {
    // --end-of-options: whatever the caller checked, the ref is never read as an option.
    const args = ['rev-parse', '--verify', '--quiet', '--end-of-options', `${ref ?? 'HEAD'}^{commit}`];
    try {
      const { stdout } = await runGit(this.git, args, { cwd: this.pathOf(algorithmId) });
      const sha = stdout.trim();
      return /^[0-9a-f]{40}$/.test(sha) ? sha : undefined;
    } catch {
      return undefined;
    }
  }

  async log(algorithmId: string, commitSha: string, limit: number): Promise<CommitSummary[]> {
    if (!/^[0-9a-f]{40}$/.test(commitSha)) throw new Error(`not a commit: ${commitSha}`);
    // Author and subject are cut by git itself (with ".."), so every record has a bounded size
    // whatever a pusher wrote; the output bound is a second fence.
    const format = `%H%x00%<(${LOG_AUTHOR_COLUMNS},trunc)%an%x00%cI%x00%<(${LOG_SUBJECT_COLUMNS},trunc)%s%x00`;
    const { stdout } = await runGit(
      this.git,
      ['log', '--no-color', '--no-show-signature', `--max-count=${limit}`, `--format=${format}`, commitSha, '--'],
      { cwd: this.pathOf(algorithmId), maxStdoutBytes: LOG_MAX_BYTES },
    );
    // Each record ends in NUL and newline: the last piece is empty after a whole output, or a
    // cut record after a truncated one.
    const records = stdout.split('\0\n');
    records.pop();
    const commits: CommitSummary[] = [];
    for (const record of records) {
      const [sha, author, date, subject] = record.replace(/^\n/, '').split('\0');
      const time = Date.parse(date ?? '');
      if (!sha || !/^[0-9a-f]{40}$/.test(sha) || Number.isNaN(time)) continue;
      // %<(N,trunc) pads short values with spaces.
      commits.push({
        sha,
        authorName: (author ?? '').trimEnd(),
        message: (subject ?? '').trimEnd(),
        committedAt: new Date(time).toISOString(),
      });
    }
    return commits;
  }

  async readRootFile(algorithmId: string, commitSha: string, names: readonly string[], maxBytes: number): Promise<SourceFile | undefined> {
    if (!/^[0-9a-f]{40}$/.test(commitSha)) throw new Error(`not a commit: ${commitSha}`);
    const cwd = this.pathOf(algorithmId);
    // The root tree only (no recursion), bounded: a root with more entries than fit is searched
    // in the part that was read.
    const tree = await runGit(this.git, ['ls-tree', '-z', '--end-of-options', commitSha], { cwd, maxStdoutBytes: TREE_MAX_BYTES });
    const entries = tree.stdout.split('\0');
    // The piece after the last NUL is empty, or an entry the bound cut (its name may be cut short).
    entries.pop();
    const blobs = new Map<string, { name: string; object: string }>();
    for (const entry of entries) {
      // "<mode> SP <type> SP <object> TAB <name>"; symbolic links (120000) and submodules are not files.
      const m = /^(100644|100755) blob ([0-9a-f]{40,64})\t(.+)$/s.exec(entry);
      if (!m) continue;
      const key = m[3]!.toLowerCase();
      if (!blobs.has(key)) blobs.set(key, { name: m[3]!, object: m[2]! });
    }
    const found = names.map((n) => blobs.get(n.toLowerCase())).find((b) => b !== undefined);
    if (!found) return undefined;
    const blob = await runGit(this.git, ['cat-file', 'blob', found.object], { cwd, maxStdoutBytes: maxBytes });
    const truncated = blob.truncated === true;
    // A cut may split a multi-byte character: drop the replacement character it decodes to.
    const content = truncated ? blob.stdout.replace(/\uFFFD$/, '') : blob.stdout;
    return { path: found.name, content, truncated };
  }

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
    const before = await this.head(into.algorithmId);
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
      const over = await this.overLimits(into, incoming, 'fetch');
      if (over) throw Errors.scmSourceTooLarge({ reason: over, branch, head: before });
      this.pending.set(fetchId, { algorithmId: into.algorithmId, ownerId: into.ownerId, bytes: incoming });
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
      if (this.pending.delete(fetchId)) await this.recordSize(into.algorithmId);
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
    const max = this.limits.maxPushBytes;
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

  async delete(algorithmId: string): Promise<void> {
    const dir = this.pathOf(algorithmId);
    // Rename first: a concurrent reader sees the repository either whole or gone.
    const trash = path.join(this.root, `.deleted-${crypto.randomUUID()}`);
    try {
      await fs.rename(dir, trash);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    await fs.rm(trash, { recursive: true, force: true });
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

/** Columns git keeps of an author name and of a subject in the commit list (longer ones end in ".."). */
const LOG_AUTHOR_COLUMNS = 200;
const LOG_SUBJECT_COLUMNS = 500;
/** Far more than 100 commits of bounded records take, in case a character is wider than a column. */
const LOG_MAX_BYTES = 4 * 1024 * 1024;
/** The root tree listing read when looking for a file there. */
const TREE_MAX_BYTES = 8 * 1024 * 1024;

/** Quarantine directories of pushes in progress (`objects/tmp_objdir-incoming-…`; `incoming-…` in older git). */
const QUARANTINE = /^(tmp_objdir-)?incoming-/;

/** Whether a directory name (inside `objects/`) is the quarantine of a push. */
export function isQuarantineName(name: string): boolean {
  return QUARANTINE.test(name);
}

/**
 * Bytes of every regular file under `root` (symbolic links are not followed); `skip` leaves
 * out an entry, given its directory relative to `root` and its name. A missing root is 0.
 */
async function treeBytes(root: string, skip: (dir: string, name: string) => boolean = () => false): Promise<number> {
  let total = 0;
  const walk = async (rel: string): Promise<void> => {
    let entries: Dirent[];
    try {
      entries = await fs.readdir(path.join(root, rel), { withFileTypes: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    for (const e of entries) {
      if (skip(rel, e.name)) continue;
      const child = rel ? path.join(rel, e.name) : e.name;
      if (e.isDirectory()) await walk(child);
      else if (e.isFile()) {
        try {
          total += (await fs.lstat(path.join(root, child))).size;
        } catch (err) {
          // Removed while walking (git gc, a temporary file): it no longer counts.
          if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
        }
      }
    }
  };
  await walk('');
  return total;
}

/** 1536 → "1.5 KiB". */
export function formatBytes(n: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return u === 0 ? `${n} bytes` : `${Number.isInteger(v) ? v : v.toFixed(1)} ${units[u]}`;
}

function fastImportStream(files: TarEntry[], message: string, at: Date): Buffer {
  const when = `${Math.floor(at.getTime() / 1000)} +0000`;
  const parts: Buffer[] = [];
  const text = (s: string) => parts.push(Buffer.from(s));
  const msg = Buffer.from(message);
  text(`commit refs/heads/${DEFAULT_BRANCH}\nauthor ${COMMITTER} ${when}\ncommitter ${COMMITTER} ${when}\ndata ${msg.length}\n`);
  parts.push(msg);
  text('\n');
  for (const f of files) {
    const mode = f.mode & 0o111 ? '100755' : '100644';
    text(`M ${mode} inline ${quotePath(f.path)}\ndata ${f.content.length}\n`);
    parts.push(f.content);
    text('\n');
  }
  text('done\n');
  return Buffer.concat(parts);
}

function quotePath(p: string): string {
  if (/^[\x21-\x7e][\x20-\x7e]*$/.test(p) && !p.includes('"') && !p.includes('\\')) return p;
  return JSON.stringify(p);
}
