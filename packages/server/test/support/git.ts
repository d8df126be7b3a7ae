/** Driving the real `git` client against a test server, as a user would. */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { makeTempDir } from './server.js';

const exec = promisify(execFile);

/** A clean git environment: no user config, no prompts, an identity for commits. */
export const GIT_ENV: NodeJS.ProcessEnv = {
  PATH: process.env.PATH,
  HOME: '/nonexistent',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_TERMINAL_PROMPT: '0',
  GIT_AUTHOR_NAME: 'Test',
  GIT_AUTHOR_EMAIL: 'test@example.test',
  GIT_COMMITTER_NAME: 'Test',
  GIT_COMMITTER_EMAIL: 'test@example.test',
  LANG: 'C',
};

export interface GitResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs git; never throws for a non-zero exit (tests assert on code and output). */
export async function git(args: string[], cwd?: string, extraEnv: NodeJS.ProcessEnv = {}): Promise<GitResult> {
  try {
    const { stdout, stderr } = await exec('git', args, { cwd, env: { ...GIT_ENV, ...extraEnv }, maxBuffer: 64 * 1024 * 1024 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : 1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

/** The clone address with credentials; a '/' in the key is written %2F (docs/compatibility.md §9.3). */
export function gitUrl(base: string, user: string, key: string, owner: string, name: string, version?: string): string {
  const u = new URL(base);
  return `${u.protocol}//${encodeURIComponent(user)}:${encodeURIComponent(key)}@${u.host}/git/${owner}/${name}${version ? `/${version}` : ''}.git`;
}

/** Clones into a new temp dir and returns its path. */
export async function clone(url: string): Promise<{ dir: string; result: GitResult }> {
  const parent = await makeTempDir('algohost-clone-');
  const dir = path.join(parent, 'work');
  const result = await git(['clone', '-q', url, dir]);
  return { dir, result };
}

/** Replaces the working files of a clone (everything but .git) with the files of `tree`. */
export function replaceWorkingFiles(dir: string, tree: string): void {
  for (const entry of fs.readdirSync(dir)) if (entry !== '.git') fs.rmSync(path.join(dir, entry), { recursive: true, force: true });
  fs.cpSync(tree, dir, { recursive: true });
}

/** Commits everything in the clone. */
export async function commitAll(dir: string, message: string): Promise<GitResult> {
  await git(['add', '-A'], dir);
  return git(['commit', '-q', '--allow-empty', '-m', message], dir);
}

/** Pushes HEAD to main; `wait` streams the build and ends with its outcome. */
export function pushHead(dir: string, opts: { wait?: boolean } = {}): Promise<GitResult> {
  return git(['push', ...(opts.wait ? ['-o', 'wait'] : []), 'origin', 'HEAD:main'], dir);
}

/** Commits everything and pushes; `wait` streams the build and ends with its outcome. */
export async function commitAndPush(dir: string, message: string, opts: { wait?: boolean } = {}): Promise<GitResult> {
  const commit = await commitAll(dir, message);
  if (commit.code !== 0) return commit;
  return pushHead(dir, opts);
}

/** The build id announced in a push's remote: lines. */
export function announcedBuildId(pushOutput: string): string | undefined {
  return /build ([0-9a-f-]{36}) queued/.exec(pushOutput)?.[1];
}

export async function removeClone(dir: string): Promise<void> {
  await fs.promises.rm(path.dirname(dir), { recursive: true, force: true });
}
