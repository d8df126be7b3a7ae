/**
 * Runs git with a fixed argument list (never through a shell) and collects its output.
 * Only this module and the smart-HTTP code spawn git.
 */
import { spawn } from 'node:child_process';
import { predictableGitEnv } from '../lib/git-env.js';

export interface GitResult {
  stdout: string;
  stderr: string;
  /** Set when stdout went past `maxStdoutBytes`: `stdout` holds only its first bytes and git was stopped. */
  truncated?: boolean;
}

export interface RunGitOptions {
  cwd?: string;
  input?: string | Buffer;
  env?: NodeJS.ProcessEnv;
  /**
   * Keep at most this many bytes of stdout: past it, git is killed and the call resolves with
   * what was read and `truncated: true` (whatever git's exit status). For output whose size a
   * repository's content decides (logs, trees, blobs), so a hostile push cannot make the
   * server hold it whole. Unset: no bound (output git itself keeps small).
   */
  maxStdoutBytes?: number;
  /** Stops git (SIGKILL) when aborted; the call then rejects. For transfers bounded while they run. */
  signal?: AbortSignal;
}

/** stderr is only read for error messages: its first bytes are enough. */
const MAX_STDERR_BYTES = 64 * 1024;

export function runGit(git: string, args: string[], opts: RunGitOptions = {}): Promise<GitResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(git, args, {
      cwd: opts.cwd,
      env: { ...predictableGitEnv(), ...opts.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const max = opts.maxStdoutBytes;
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let outBytes = 0;
    let errBytes = 0;
    let truncated = false;
    child.stdout.on('data', (d: Buffer) => {
      if (truncated) return;
      if (max !== undefined && outBytes + d.length > max) {
        out.push(d.subarray(0, max - outBytes));
        outBytes = max;
        truncated = true;
        child.kill('SIGKILL');
        return;
      }
      out.push(d);
      outBytes += d.length;
    });
    child.stderr.on('data', (d: Buffer) => {
      if (errBytes >= MAX_STDERR_BYTES) return;
      err.push(d);
      errBytes += d.length;
    });
    // A git killed for its output, or one that exits before reading its input, closes stdin under us.
    child.stdin.on('error', () => undefined);
    child.on('error', reject);
    const stop = () => child.kill('SIGKILL');
    opts.signal?.addEventListener('abort', stop, { once: true });
    if (opts.signal?.aborted) stop();
    child.on('close', (code) => {
      opts.signal?.removeEventListener('abort', stop);
      const result: GitResult = { stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() };
      if (truncated) resolve({ ...result, truncated: true });
      else if (code === 0) resolve(result);
      else reject(new Error(`git ${args[0]} exited with ${code}: ${result.stderr.trim()}`));
    });
    child.stdin.end(opts.input);
  });
}
