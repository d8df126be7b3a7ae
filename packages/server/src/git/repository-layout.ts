/**
 * Where algorithm repositories live and what every one of them holds: bare repositories named
 * by algorithm id (so renames and owner changes never move directories) under one root, on the
 * default branch, with object checks on whatever they receive.
 */
import path from 'node:path';
import { runGit } from './process.js';

export const DEFAULT_BRANCH = 'main';

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

/** The bare repository of an algorithm under `root`. */
export function repositoryPath(root: string, algorithmId: string): string {
  if (!/^[0-9a-f-]{36}$/.test(algorithmId)) throw new Error(`not an algorithm id: ${algorithmId}`);
  return path.join(root, `${algorithmId}.git`);
}

/** The commit the default branch of the repository at `repo` points at, or undefined (none yet, or no repository). */
export async function defaultBranchHead(git: string, repo: string): Promise<string | undefined> {
  try {
    const { stdout } = await runGit(git, ['rev-parse', '--verify', '--quiet', `refs/heads/${DEFAULT_BRANCH}^{commit}`], { cwd: repo });
    return stdout.trim() || undefined;
  } catch {
    return undefined;
  }
}
