/**
 * Runs git with a fixed argument list (never through a shell) and collects its output.
 * Only this module and the smart-HTTP code spawn git.
 */
import { spawn } from 'node:child_process';

export interface GitResult {
  stdout: string;
  stderr: string;
}

export function runGit(
  git: string,
  args: string[],
  opts: { cwd?: string; input?: string | Buffer; env?: NodeJS.ProcessEnv } = {},
): Promise<GitResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(git, args, {
      cwd: opts.cwd,
      env: { ...GIT_ENV, ...opts.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => err.push(d));
    child.on('error', reject);
    child.on('close', (code) => {
      const result = { stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() };
      if (code === 0) resolve(result);
      else reject(new Error(`git ${args[0]} exited with ${code}: ${result.stderr.trim()}`));
    });
    child.stdin.end(opts.input);
  });
}

/** A predictable environment: no user or system config, no prompts. */
const GIT_ENV: NodeJS.ProcessEnv = {
  PATH: process.env.PATH,
  HOME: '/nonexistent',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_TERMINAL_PROMPT: '0',
  LANG: 'C',
};
