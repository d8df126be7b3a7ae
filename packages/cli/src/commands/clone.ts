/**
 * `algo clone <owner>/<name>[/<version>] [dir]`: runs the real `git clone` against the profile's
 * server with the key in the address (docs/compatibility.md §9.3): the user name is the account that owns
 * the key (the profile's username, else the algorithm's owner), and a '/' in the key is written
 * %2F. git shows its own progress when stderr is a terminal.
 */
import path from 'node:path';
import type { Command } from 'commander';
import type { Context } from '../context.js';
import { CliError } from '../errors.js';
import { git, gitCloneUrl, gitFailure } from '../lib/git.js';
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

async function clone(ctx: Context, arg: string, dir: string | undefined): Promise<void> {
  const ref = parseAlgorithm(arg);
  const profile = ctx.profile();
  if (!profile.api_key)
    throw new CliError(`git needs an API key, and profile "${ctx.profileName}" has only a bearer token: run "algo auth" with --key`);
  const user = profile.username || ref.owner;
  const url = gitCloneUrl(profile.api_server!, user, profile.api_key, ref.owner, ref.name, ref.version);
  const target = dir ?? ref.name;
  const tty = Boolean(process.stderr.isTTY);
  const run = await git(['clone', tty ? '--progress' : '--quiet', url, target], {
    secrets: [profile.api_key],
    caCert: profile.ca_cert || undefined,
    onStderr: tty ? (chunk) => process.stderr.write(chunk) : undefined,
  });
  if (run.code !== 0) {
    let message = gitFailure('git clone', run);
    if (/Authentication failed/i.test(run.stderr)) {
      message += ` (git signs in as "${user}" with the key of profile "${ctx.profileName}"; if another account owns the key, run "algo auth --username NAME")`;
    }
    throw new CliError(message);
  }
  line(`Cloned ${ref.owner}/${ref.name}${ref.version ? ` ${ref.version}` : ''} into ${path.resolve(target)}`);
}
