/**
 * Bare Git repositories on local disk (or a shared volume in cluster mode), one per algorithm
 * (repository-layout.ts): making them, reading their history and files, published versions, and
 * deleting them. Their sizes and limits are kept by repository-sizes.ts, the exchange with SCM
 * providers by provider-mirror.ts; this class is what the domain's ports see of all three.
 */
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { CommitSummary, SourceFile } from '../domain/algorithms/model.js';
import type { RepositoryHost } from '../domain/algorithms/ports.js';
import type { FetchedBranch, SourceMirror } from '../domain/scm/ports.js';
import { type Clock, systemClock } from '../domain/clock.js';
import type { TarEntry } from '../lib/tar.js';
import { runGit } from './process.js';
import { ProviderMirror } from './provider-mirror.js';
import { DEFAULT_BRANCH, defaultBranchHead, RECEIVE_CHECKS, repositoryPath } from './repository-layout.js';
import { NO_LIMITS, RepositorySizes, type IncomingFetch, type IncomingPush, type RepositoryLimits } from './repository-sizes.js';

const COMMITTER = 'algohost <algohost@localhost>';
/** Inside each bare repository: one small repository per published version. */
const VERSIONS_DIR = 'algohost-versions';

export class GitRepositoryHost implements RepositoryHost, SourceMirror {
  private readonly sizes: RepositorySizes;
  private readonly mirror: ProviderMirror;

  constructor(
    readonly root: string,
    private readonly git: string,
    readonly limits: RepositoryLimits = NO_LIMITS,
    /** The ids of every algorithm an account owns (their repositories count towards its limit). */
    algorithmsOf: (ownerId: string) => Promise<string[]> = async () => [],
    /** The time of the commits the service makes (a new algorithm's template). */
    private readonly clock: Clock = systemClock,
  ) {
    const pathOf = (algorithmId: string) => this.pathOf(algorithmId);
    this.sizes = new RepositorySizes(pathOf, limits, algorithmsOf);
    this.mirror = new ProviderMirror(root, git, pathOf, this.sizes);
  }

  pathOf(algorithmId: string): string {
    return repositoryPath(this.root, algorithmId);
  }

  /** `-c` arguments for every `git receive-pack`: object checks and git's own input cap. */
  receivePackConfig(): string[] {
    const args = RECEIVE_CHECKS.flatMap(([k, v]) => ['-c', `${k}=${v}`]);
    if (this.limits.maxPushBytes > 0) args.push('-c', `receive.maxInputSize=${this.limits.maxPushBytes}`);
    return args;
  }

  /** See RepositorySizes.checkIncoming: the pre-receive decision on a push's size. */
  checkIncoming(push: IncomingPush, quarantine: string | undefined): Promise<string | undefined> {
    return this.sizes.checkIncoming(push, quarantine);
  }

  /** After `git receive-pack` has exited: records the repository's new size, then drops the push's pending bytes. */
  pushEnded(pushId: string, algorithmId: string): Promise<void> {
    return this.sizes.pushEnded(pushId, algorithmId);
  }

  /** The repository's size on disk now (every file, not counting pushes still in quarantine). */
  sizeOf(algorithmId: string): Promise<number> {
    return this.sizes.sizeOf(algorithmId);
  }

  /** The size recorded after the repository's last push (measured and recorded now if missing). */
  recordedSize(algorithmId: string): Promise<number> {
    return this.sizes.recordedSize(algorithmId);
  }

  pushTo(algorithmId: string, url: string, auth: { username: string; password: string }): Promise<void> {
    return this.mirror.pushTo(algorithmId, url, auth);
  }

  /** See ProviderMirror.fetchFrom. */
  fetchFrom(into: IncomingFetch, url: string, auth: { username: string; password: string }, branch: string): Promise<FetchedBranch> {
    return this.mirror.fetchFrom(into, url, auth, branch);
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
      await this.sizes.recordSize(algorithmId);
      return stdout.trim();
    } catch (err) {
      await fs.rm(tmp, { recursive: true, force: true });
      throw err;
    }
  }

  head(algorithmId: string): Promise<string | undefined> {
    return defaultBranchHead(this.git, this.pathOf(algorithmId));
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

/** Columns git keeps of an author name and of a subject in the commit list (longer ones end in ".."). */
const LOG_AUTHOR_COLUMNS = 200;
const LOG_SUBJECT_COLUMNS = 500;
/** Far more than 100 commits of bounded records take, in case a character is wider than a column. */
const LOG_MAX_BYTES = 4 * 1024 * 1024;
/** The root tree listing read when looking for a file there. */
const TREE_MAX_BYTES = 8 * 1024 * 1024;

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
