/**
 * `algo builds <owner> <name>`: the builds of an algorithm, newest first; `--logs <id>` prints a
 * finished build's log; `--follow [id]` streams a build's log as it runs (the newest build when
 * no id is given) and exits non-zero when the build fails.
 */
import type { Command } from 'commander';
import { AlgohostError, type Build } from '@algohost/client';
import type { Context } from '../context.js';
import { CliError } from '../errors.js';
import { notice, out, printJson, printTable } from '../lib/output.js';
import { Progress } from '../lib/progress.js';
import { contextOf, optionsOf, ownerAndName, positiveInt, withJson, withProfile } from './common.js';

interface BuildsOptions {
  limit: number;
  follow?: string | boolean;
  logs?: string;
  json?: boolean;
}

export function register(program: Command): void {
  withJson(
    withProfile(
      program
        .command('builds')
        .argument('<owner>', 'owner, or owner/name')
        .argument('[name]', 'algorithm name')
        .description('list the builds of an algorithm, or follow one as it runs')
        .option('--limit <n>', 'how many builds to list', positiveInt, 56)
        .option(
          '-f, --follow [build_id]',
          "stream a build's log until it finishes (default: the newest build); with --json the log goes to stderr",
        )
        .option('--logs <build_id>', 'print the log of a finished build'),
    ),
  ).action(async (first: string, second: string | undefined, _o, cmd: Command) => {
    const { owner, name } = ownerAndName(first, second);
    const opts = optionsOf<BuildsOptions>(cmd);
    const ctx = contextOf(cmd);
    if (opts.follow !== undefined && opts.follow !== false)
      return follow(ctx, owner, name, opts.follow === true ? undefined : opts.follow, opts);
    if (opts.logs) return logs(ctx, owner, name, opts.logs);
    const page = await ctx.client().builds.list(owner, name, { limit: opts.limit });
    if (opts.json) return printJson(page.results);
    if (page.results.length === 0) return notice(`No builds of ${owner}/${name} yet: push to its repository to start one.`);
    printTable(
      ['BUILD ID', 'STATUS', 'TRIGGER', 'COMMIT', 'CREATED', 'FINISHED'],
      page.results.map((b) => [b.build_id, b.status, b.trigger, b.commit_sha.slice(0, 12), b.created_at, b.finished_at ?? '']),
    );
  });
}

async function logs(ctx: Context, owner: string, name: string, id: string): Promise<void> {
  try {
    const text = await ctx.client().builds.logs(owner, name, id);
    out(text.endsWith('\n') || text === '' ? text : `${text}\n`);
  } catch (err) {
    if (err instanceof AlgohostError && err.status === 404 && err.code === 1011) {
      throw new CliError(`build ${id} has no log yet (it is still running): follow it with "algo builds ${owner} ${name} --follow ${id}"`);
    }
    throw err;
  }
}

async function follow(ctx: Context, owner: string, name: string, id: string | undefined, opts: BuildsOptions): Promise<void> {
  const client = ctx.client();
  let buildId = id;
  if (!buildId) {
    const newest = (await client.builds.list(owner, name, { limit: 1 })).results[0];
    if (!newest) throw new CliError(`no builds of ${owner}/${name} yet: push to its repository to start one`);
    buildId = newest.build_id;
  }
  const progress = new Progress(`Build ${buildId.slice(0, 8)} of ${owner}/${name}`, 'seconds');
  let finished: Build | undefined;
  try {
    for await (const event of client.builds.follow(owner, name, buildId)) {
      if (event.type === 'log') {
        progress.clear();
        // With --json, stdout carries only the final build; the log goes to stderr.
        if (opts.json) process.stderr.write(event.text);
        else out(event.text);
      } else {
        finished = event.build;
      }
    }
  } finally {
    progress.done();
  }
  if (!finished) throw new CliError(`the server closed the log stream of build ${buildId} before it finished`);
  if (opts.json) printJson(finished);
  if (finished.status === 'failed') throw new CliError(`build ${finished.build_id} failed${finished.error ? `: ${finished.error}` : ''}`);
  if (!opts.json) notice(`Build ${finished.build_id} ${finished.status} (commit ${finished.commit_sha.slice(0, 12)})`);
}
