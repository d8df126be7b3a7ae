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
