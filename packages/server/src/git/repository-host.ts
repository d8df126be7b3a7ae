/**
 * Bare Git repositories on local disk (or a shared volume in cluster mode), one per algorithm,
 * named by algorithm id so that renames and owner changes never move directories.
 */
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { RepositoryHost } from '../domain/algorithms/ports.js';
import type { TarEntry } from '../lib/tar.js';
import { runGit } from './process.js';

export const DEFAULT_BRANCH = 'main';
const COMMITTER = 'algohost <algohost@localhost>';
/** Inside each bare repository: one small repository per published version. */
const VERSIONS_DIR = 'algohost-versions';

export class GitRepositoryHost implements RepositoryHost {
  constructor(
    readonly root: string,
    private readonly git: string,
  ) {}

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
      await runGit(this.git, ['fast-import', '--quiet', '--done'], { cwd: tmp, input: fastImportStream(files, message) });
      const { stdout } = await runGit(this.git, ['rev-parse', `refs/heads/${DEFAULT_BRANCH}`], { cwd: tmp });
      await fs.rename(tmp, final);
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

function fastImportStream(files: TarEntry[], message: string): Buffer {
  const when = `${Math.floor(Date.now() / 1000)} +0000`;
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
