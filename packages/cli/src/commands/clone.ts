/**
 * `algo clone <owner>/<name>[/<version>] [dir]`: runs the real `git clone` against the profile's
 * server with the key in the address (spec "Git access"): the user name is the account that owns
 * the key (the profile's username, else the algorithm's owner), and a '/' in the key is written
 * %2F. git shows its own progress when stderr is a terminal.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import type { Command } from 'commander';
import type { Context } from '../context.js';
import { CliError, oneLine } from '../errors.js';
import { line } from '../lib/output.js';
import { contextOf, parseAlgorithm, withProfile } from './common.js';

export function register(program: Command): void {
  withProfile(
    program
      .command('clone')
      .argument('<algorithm>', 'owner/name, or owner/name/version for the source of a published version')
      .argument('[dir]', 'directory to clone into (default: the algorithm name)')
      .description("clone an algorithm's Git repository (push to it to build)"),
  ).action(async (algorithm: string, dir: string | undefined, _o, cmd: Command) => clone(contextOf(cmd), algorithm, dir));
}

/** The clone address with credentials. */
export function gitCloneUrl(server: string, user: string, key: string, owner: string, name: string, version?: string): string {
  const base = new URL(server);
  const prefix = base.pathname.replace(/\/+$/, '');
  const repo = `${prefix}/git/${encodeURIComponent(owner)}/${encodeURIComponent(name)}${version ? `/${encodeURIComponent(version)}` : ''}.git`;
  return `${base.protocol}//${encodeURIComponent(user)}:${encodeURIComponent(key)}@${base.host}${repo}`;
}

async function clone(ctx: Context, arg: string, dir: string | undefined): Promise<void> {
  const ref = parseAlgorithm(arg);
  const profile = ctx.profile();
  if (!profile.api_key)
    throw new CliError(`git needs an API key, and profile "${ctx.profileName}" has only a bearer token: run "algo auth" with --key`);
  const user = profile.username || ref.owner;
  const url = gitCloneUrl(profile.api_server!, user, profile.api_key, ref.owner, ref.name, ref.version);
  const target = dir ?? ref.name;
  const secrets = [profile.api_key, encodeURIComponent(profile.api_key)];
  const redact = (text: string) => secrets.reduce((t, s) => t.split(s).join('***'), text);

  const tty = Boolean(process.stderr.isTTY);
  const env: NodeJS.ProcessEnv = { ...process.env, GIT_TERMINAL_PROMPT: '0' };
  if (profile.ca_cert) env.GIT_SSL_CAINFO = profile.ca_cert;
  const args = ['clone', tty ? '--progress' : '--quiet', url, target];
  const child = spawn('git', args, { stdio: ['ignore', 'ignore', 'pipe'], env });
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => {
    stderr += chunk;
    if (tty) process.stderr.write(redact(chunk));
  });
  const code = await new Promise<number>((resolve, reject) => {
    child.on('error', (err: NodeJS.ErrnoException) =>
      reject(err.code === 'ENOENT' ? new CliError('git is not installed (or not on PATH): install git and try again') : err),
    );
    child.on('close', (c) => resolve(c ?? 1));
  });
  if (code !== 0) {
    const lines = redact(stderr)
      .split(/[\r\n]+/)
      .map((l) => l.trim())
      .filter(Boolean);
    const fatal = [...lines].reverse().find((l) => l.startsWith('fatal:')) ?? lines[lines.length - 1] ?? `git exited with ${code}`;
    const remote = lines.find((l) => l.startsWith('remote:'));
    let message = `git clone failed: ${(remote ?? fatal).replace(/^(fatal|remote):\s*/, '')}`;
    if (/Authentication failed/i.test(stderr)) {
      message += ` (git signs in as "${user}" with the key of profile "${ctx.profileName}"; if another account owns the key, run "algo auth --username NAME")`;
    }
    throw new CliError(oneLine(message));
  }
  line(`Cloned ${ref.owner}/${ref.name}${ref.version ? ` ${ref.version}` : ''} into ${path.resolve(target)}`);
}
