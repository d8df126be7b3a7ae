/**
 * Running the real `git` for commands that clone and push (clone, migrate). Credentials travel
 * in the remote address (docs/compatibility.md §9.3), so every output is redacted before it is shown.
 */
import { spawn } from 'node:child_process';
import { CliError, oneLine } from '../errors.js';

export interface GitRun {
  code: number;
  stdout: string;
  stderr: string;
}

export interface GitOptions {
  cwd?: string;
  /** Secrets to replace with *** in everything git prints. */
  secrets?: string[];
  caCert?: string;
  /** Called with each redacted chunk of stderr as it arrives (progress on a terminal). */
  onStderr?: (chunk: string) => void;
}

export function redactor(secrets: string[] = []): (text: string) => string {
  const all = secrets.flatMap((s) => [s, encodeURIComponent(s)]).filter(Boolean);
  return (text) => all.reduce((t, s) => t.split(s).join('***'), text);
}

export async function git(args: string[], opts: GitOptions = {}): Promise<GitRun> {
  const env: NodeJS.ProcessEnv = { ...process.env, GIT_TERMINAL_PROMPT: '0' };
  if (opts.caCert) env.GIT_SSL_CAINFO = opts.caCert;
  const redact = redactor(opts.secrets);
  const child = spawn('git', args, { cwd: opts.cwd, stdio: ['ignore', 'pipe', 'pipe'], env });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stdout.on('data', (c: string) => (stdout += c));
  child.stderr.on('data', (c: string) => {
    stderr += c;
    opts.onStderr?.(redact(c));
  });
  const code = await new Promise<number>((resolve, reject) => {
    child.on('error', (err: NodeJS.ErrnoException) =>
      reject(err.code === 'ENOENT' ? new CliError('git is not installed (or not on PATH): install git and try again') : err),
    );
    child.on('close', (c) => resolve(c ?? 1));
  });
  return { code, stdout: redact(stdout), stderr: redact(stderr) };
}

/** The line of git's output that says why it failed: a remote: message, else the last fatal:. */
export function gitFailure(what: string, run: GitRun): string {
  const lines = run.stderr
    .split(/[\r\n]+/)
    .map((l) => l.trim())
    .filter(Boolean);
  const fatal = [...lines].reverse().find((l) => l.startsWith('fatal:')) ?? lines[lines.length - 1] ?? `git exited with ${run.code}`;
  const remote = lines.find((l) => l.startsWith('remote:') && !/^remote:\s*$/.test(l));
  return oneLine(`${what} failed: ${(remote ?? fatal).replace(/^(fatal|remote):\s*/, '')}`);
}

/** The clone address with credentials; a '/' in the key is written %2F (docs/compatibility.md §9.3). */
export function gitCloneUrl(server: string, user: string, key: string, owner: string, name: string, version?: string): string {
  const base = new URL(server);
  const prefix = base.pathname.replace(/\/+$/, '');
  const repo = `${prefix}/git/${encodeURIComponent(owner)}/${encodeURIComponent(name)}${version ? `/${encodeURIComponent(version)}` : ''}.git`;
  return `${base.protocol}//${encodeURIComponent(user)}:${encodeURIComponent(key)}@${base.host}${repo}`;
}
