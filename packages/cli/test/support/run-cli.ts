/**
 * Running `algo` as a user would: a child process `node --import tsx packages/cli/src/cli.ts …`
 * with its own HOME (so ~/.algorithmia/config is the test's), no inherited git configuration,
 * and stdin closed unless the test gives input.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
export const CLI_ENTRY = path.join(REPO_ROOT, 'packages/cli/src/cli.ts');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout byte for byte (`algo cat` of a binary file). */
  stdoutBytes: Buffer;
}

export interface CliOptions {
  home: string;
  input?: string;
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
  /** Called with the child once it runs (to watch its memory, or to kill it mid-way). */
  onSpawn?: (child: ChildProcess) => void;
}

function baseEnv(home: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: home,
    LANG: 'C.UTF-8',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_TERMINAL_PROMPT: '0',
    GIT_AUTHOR_NAME: 'Test',
    GIT_AUTHOR_EMAIL: 'test@example.test',
    GIT_COMMITTER_NAME: 'Test',
    GIT_COMMITTER_EMAIL: 'test@example.test',
  };
}

/** Spawns a command and collects its output; never throws for a non-zero exit. */
export function spawnCollect(command: string, args: string[], opts: CliOptions & { cwd?: string }): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: opts.cwd ?? REPO_ROOT,
      env: { ...baseEnv(opts.home), ...opts.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    opts.onSpawn?.(child);
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 120_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const stdoutBytes = Buffer.concat(out);
      resolve({ code: code ?? (signal ? 128 : 1), stdout: stdoutBytes.toString('utf8'), stderr, stdoutBytes });
    });
    child.stdin.end(opts.input ?? '');
  });
}

/** `algo <args…>` with the test's HOME. */
export function algo(args: string[], opts: CliOptions): Promise<CliResult> {
  return spawnCollect(process.execPath, ['--import', 'tsx', CLI_ENTRY, ...args], opts);
}

/** `algo` on a pseudo-terminal (util-linux `script`), for prompts and progress bars. */
export function algoOnTerminal(args: string[], opts: CliOptions): Promise<CliResult> {
  const quoted = [process.execPath, '--import', 'tsx', CLI_ENTRY, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  return spawnCollect('script', ['-qfec', quoted, '/dev/null'], { ...opts, env: { TERM: 'xterm', ...opts.env } });
}

export const hasScript = (() => {
  try {
    return (process.env.PATH ?? '').split(':').some((d) => fs.existsSync(path.join(d, 'script')));
  } catch {
    return false;
  }
})();

/** Success: exit 0 (shows stderr otherwise). */
export function assertOk(r: CliResult, what: string): void {
  assert.equal(r.code, 0, `${what} failed (${r.code}):\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
}

/** Failure as the CLI promises it: non-zero, exactly one line on stderr, no stack trace. */
export function assertOneLineFailure(r: CliResult, pattern?: RegExp): string {
  assert.notEqual(r.code, 0, `expected a failure, got exit 0: ${r.stdout}`);
  const lines = r.stderr.split('\n').filter((l) => l.trim() !== '');
  assert.equal(lines.length, 1, `expected one line on stderr, got:\n${r.stderr}`);
  const line = lines[0]!;
  assert.match(line, /^algo: /);
  assert.doesNotMatch(r.stderr, /\n\s+at .+:\d+:\d+/, 'no stack trace');
  if (pattern) assert.match(line, pattern);
  return line;
}

export async function makeHome(): Promise<string> {
  return fs.promises.mkdtemp(path.join(os.tmpdir(), 'algo-cli-home-'));
}

/** A port with nothing listening on it. */
export async function closedPort(): Promise<number> {
  const net = await import('node:net');
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}
