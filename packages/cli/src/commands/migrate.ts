/**
 * `algo migrate <owner>[/<name>]`: the migration workflow of docs/compatibility.md §9.4, step by step, between two
 * clusters (two profiles) or two owners on one cluster:
 *   1-2. read the source through the API and create the destination with the same name,
 *        language, environment (mapped by specification id: environment ids are per cluster)
 *        and settings, unless it exists already (then this is a promotion round);
 *   3.   clone both into sibling directories;
 *   4.   copy the source's working files without .git;
 *   5.   commit and push to the destination, which builds;
 *   6.   publish the destination (its numbers are its own) and report source → destination.
 * Step 7, repeated promotion, is running the command again.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Command } from 'commander';
import { AlgohostError, type Algorithm, type AlgohostClient, type Environment } from '@algohost/client';
import { Context } from '../context.js';
import { CliError } from '../errors.js';
import { git, gitCloneUrl, gitFailure } from '../lib/git.js';
import { notice, printJson, printTable } from '../lib/output.js';
import { oneOf, optionsOf, parseAlgorithm, withJson, withProfile } from './common.js';

interface MigrateOptions {
  profile?: string;
  to?: string;
  toOwner?: string;
  sourceVersion?: string;
  type: 'major' | 'minor' | 'revision' | 'patch';
  dryRun?: boolean;
  json?: boolean;
  buildTimeout: number;
}

/** One line of the report. */
export interface MigrationResult {
  source: string;
  source_version: string | null;
  source_commit: string;
  destination: string;
  destination_version: string | null;
  destination_commit: string | null;
  action: 'created' | 'promoted' | 'up-to-date' | 'planned';
}

export function register(program: Command): void {
  withJson(
    withProfile(
      program
        .command('migrate')
        .argument('<source>', 'owner/name for one algorithm, or owner for all of its algorithms')
        .description(
          'copy algorithms to another owner or cluster and publish them there (run again to promote; hosted data: algo migrate-data)',
        )
        .option('--to <profile>', 'profile of the destination cluster (default: the source profile)')
        .option('--to-owner <name>', "destination owner (default: the source's owner; must differ on the same cluster)")
        .option('--source-version <version>', 'copy this published version of the source (default: its latest source)')
        .option('--type <type>', 'version type published at the destination', oneOf('major', 'minor', 'revision', 'patch'), 'minor')
        .option('--build-timeout <seconds>', 'how long to wait for the destination build', (v) => Number(v), 1800)
        .option('--dry-run', 'show what would be done, change nothing'),
    ),
  ).action(async (source: string, _o, cmd: Command) => {
    const opts = optionsOf<MigrateOptions>(cmd);
    const from = Context.from({ profile: opts.profile });
    const to = opts.to ? Context.from({ profile: opts.to }) : from;
    const results = await migrate(from, to, source, opts);
    if (opts.json) return printJson(results);
    printTable(
      ['SOURCE', 'VERSION', 'DESTINATION', 'VERSION', 'ACTION'],
      results.map((r) => [
        r.source,
        r.source_version ?? r.source_commit.slice(0, 12),
        r.destination,
        r.destination_version ?? (r.destination_commit ? r.destination_commit.slice(0, 12) : ''),
        r.action,
      ]),
    );
  });
}

async function migrate(from: Context, to: Context, source: string, opts: MigrateOptions): Promise<MigrationResult[]> {
  const src = from.client();
  const dst = to.client();
  const sourceServer = normalizeServer(from.profile().api_server!);
  const sameCluster = sourceServer === normalizeServer(to.profile().api_server!);
  const [owner, name] = source.includes('/') ? [parseAlgorithm(source).owner, parseAlgorithm(source).name] : [source, undefined];
  const destOwner = opts.toOwner ?? owner;
  if (sameCluster && destOwner.toLowerCase() === owner.toLowerCase()) {
    throw new CliError(
      `source and destination are both ${owner} on ${sourceServer}: owner, name and cluster must identify one algorithm; pass --to-owner or --to <profile>`,
    );
  }
  const algorithms: Algorithm[] = [];
  if (name) algorithms.push(await src.algorithms.get(owner, name));
  else for await (const a of src.algorithms.all(owner)) algorithms.push(a);
  if (algorithms.length === 0) throw new CliError(`${owner} has no algorithms to migrate`);

  const environments = new EnvironmentMap(src, dst);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'algo-migrate-'));
  const results: MigrationResult[] = [];
  try {
    for (const [i, algorithm] of algorithms.entries()) {
      const step = (text: string) => notice(`[${i + 1}/${algorithms.length}] ${owner}/${algorithm.name}: ${text}`);
      results.push(await migrateOne({ from, to, src, dst, algorithm, owner, destOwner, environments, opts, step, work }));
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  return results;
}

interface OneMigration {
  from: Context;
  to: Context;
  src: AlgohostClient;
  dst: AlgohostClient;
  algorithm: Algorithm;
  owner: string;
  destOwner: string;
  environments: EnvironmentMap;
  opts: MigrateOptions;
  step: (text: string) => void;
  work: string;
}

async function migrateOne(m: OneMigration): Promise<MigrationResult> {
  const { algorithm, owner, destOwner, opts, step } = m;
  const name = algorithm.name;
  const destination = `${destOwner}/${name}`;
  const sourceEnv = await m.environments.sourceEnvironment(algorithm.settings.algorithm_environment);
  const destEnvId = await m.environments.destinationId(sourceEnv);
  const existing = await findAlgorithm(m.dst, destOwner, name);

  if (opts.dryRun) {
    step(
      existing
        ? `would promote into ${destination} (environment ${sourceEnv.name})`
        : `would create ${destination} in environment ${sourceEnv.name} (destination id ${destEnvId}), copy, push and publish`,
    );
    const head = algorithm.version_info?.git_hash ?? '';
    return result(m, head, opts.sourceVersion ?? algorithm.version_info?.semantic_version ?? null, null, null, 'planned');
  }

  if (!existing) {
    step(`creating ${destination} (environment ${sourceEnv.name})`);
    const s = algorithm.settings;
    await m.dst.algorithms.create(destOwner, {
      name,
      details: algorithm.details,
      settings: {
        algorithm_environment: destEnvId,
        source_visibility: s.source_visibility,
        license: s.license,
        network_access: s.network_access,
        pipeline_enabled: s.pipeline_enabled,
        insights_enabled: s.insights_enabled,
        royalty_microcredits: s.royalty_microcredits,
      },
    } as Parameters<AlgohostClient['algorithms']['create']>[1]);
  }

  const dir = fs.mkdtempSync(path.join(m.work, `${name}-`));
  const sourceDir = path.join(dir, 'source');
  const destDir = path.join(dir, 'destination');
  step(`cloning the source${opts.sourceVersion ? ` at ${opts.sourceVersion}` : ''} and the destination`);
  await cloneInto(m.from, owner, name, opts.sourceVersion, sourceDir);
  await cloneInto(m.to, destOwner, name, undefined, destDir);
  const sourceCommit = (await gitIn(sourceDir, ['rev-parse', 'HEAD'])).trim();
  const sourceVersion = opts.sourceVersion ?? (await publishedVersionOf(m.src, owner, name, sourceCommit));

  step('copying the working files (without .git)');
  replaceWorkingFiles(destDir, sourceDir);
  await gitIn(destDir, ['add', '-A']);
  const changed = (await git(['diff', '--cached', '--quiet'], { cwd: destDir })).code !== 0;
  let destCommit = (await gitIn(destDir, ['rev-parse', 'HEAD'])).trim();
  if (changed) {
    const label = sourceVersion ?? sourceCommit.slice(0, 12);
    await gitIn(destDir, [...identity(), 'commit', '-q', '-m', `Promote ${owner}/${name} ${label}`]);
    destCommit = (await gitIn(destDir, ['rev-parse', 'HEAD'])).trim();
    step('pushing to the destination (this builds it)');
    const push = await git(['push', '-o', 'wait', 'origin', 'HEAD:main'], { cwd: destDir, secrets: [m.to.profile().api_key ?? ''] });
    if (push.code !== 0) throw new CliError(`${destination}: ${gitFailure('git push', push)}`);
    await waitForBuild(m.dst, destOwner, name, destCommit, opts.buildTimeout * 1000, step);
  } else if (!(await buildStatus(m.dst, destOwner, name, destCommit))) {
    // Same files as the destination's template, never built there: build its head as it is.
    step('building the destination (its files already match the source)');
    await m.dst.algorithms.compile(destOwner, name);
    await waitForBuild(m.dst, destOwner, name, destCommit, opts.buildTimeout * 1000, step);
  }

  const published = await findVersion(m.dst, destOwner, name, destCommit);
  if (published?.version_info.semantic_version) {
    step(`up to date: ${destination} ${published.version_info.semantic_version} has this source`);
    return result(m, sourceCommit, sourceVersion, published.version_info.semantic_version, destCommit, 'up-to-date');
  }
  step(`publishing ${destination} (${opts.type})`);
  const version = await m.dst.versions.publish(destOwner, name, {
    version_info: { version_type: opts.type },
    settings: { algorithm_callability: algorithm.settings.algorithm_callability as 'public' | 'private' },
  });
  const action = existing ? 'promoted' : 'created';
  step(
    `${action}: ${owner}/${name} ${sourceVersion ?? sourceCommit.slice(0, 12)} → ${destination} ${version.version_info.semantic_version}`,
  );
  return result(m, sourceCommit, sourceVersion, version.version_info.semantic_version ?? null, destCommit, action);
}

function result(
  m: OneMigration,
  sourceCommit: string,
  sourceVersion: string | null,
  destVersion: string | null,
  destCommit: string | null,
  action: MigrationResult['action'],
): MigrationResult {
  return {
    source: `${m.owner}/${m.algorithm.name}`,
    source_version: sourceVersion,
    source_commit: sourceCommit,
    destination: `${m.destOwner}/${m.algorithm.name}`,
    destination_version: destVersion,
    destination_commit: destCommit,
    action,
  };
}

/** Environment ids are per cluster (docs/compatibility.md §9.6): map through the specification id. */
class EnvironmentMap {
  private sourceEnvs: Environment[] | undefined;
  private destEnvs: Environment[] | undefined;

  constructor(
    private readonly src: AlgohostClient,
    private readonly dst: AlgohostClient,
  ) {}

  async sourceEnvironment(id: string): Promise<Environment> {
    this.sourceEnvs ??= await allEnvironments(this.src);
    const env = this.sourceEnvs.find((e) => e.id === id);
    if (!env) throw new CliError(`the source cluster does not list environment ${id}`);
    return env;
  }

  async destinationId(sourceEnv: Environment): Promise<string> {
    this.destEnvs ??= await allEnvironments(this.dst);
    const env = this.destEnvs.find((e) => e.environment_specification_id === sourceEnv.environment_specification_id);
    if (!env) {
      throw new CliError(
        `the destination cluster has no environment with specification ${sourceEnv.environment_specification_id} (${sourceEnv.display_name})`,
      );
    }
    return env.id;
  }
}

async function allEnvironments(client: AlgohostClient): Promise<Environment[]> {
  const all: Environment[] = [];
  for (const language of await client.environments.languages()) all.push(...(await client.environments.list(language.name)));
  return all;
}

async function findAlgorithm(client: AlgohostClient, owner: string, name: string): Promise<Algorithm | undefined> {
  try {
    return await client.algorithms.get(owner, name);
  } catch (err) {
    if (err instanceof AlgohostError && err.status === 404) return undefined;
    throw err;
  }
}

async function findVersion(client: AlgohostClient, owner: string, name: string, commit: string) {
  try {
    return await client.versions.get(owner, name, commit);
  } catch (err) {
    if (err instanceof AlgohostError && err.status === 404) return undefined;
    throw err;
  }
}

async function publishedVersionOf(client: AlgohostClient, owner: string, name: string, commit: string): Promise<string | null> {
  return (await findVersion(client, owner, name, commit))?.version_info.semantic_version ?? null;
}

async function cloneInto(ctx: Context, owner: string, name: string, version: string | undefined, dir: string): Promise<void> {
  const profile = ctx.profile();
  if (!profile.api_key) throw new CliError(`profile "${ctx.profileName}" has no API key, which git needs: run "algo auth" with --key`);
  const url = gitCloneUrl(profile.api_server!, profile.username || owner, profile.api_key, owner, name, version);
  const run = await git(['clone', '--quiet', url, dir], { secrets: [profile.api_key], caCert: profile.ca_cert || undefined });
  if (run.code !== 0) throw new CliError(`${owner}/${name}: ${gitFailure('git clone', run)}`);
}

async function gitIn(dir: string, args: string[]): Promise<string> {
  const run = await git(args, { cwd: dir });
  if (run.code !== 0) throw new CliError(gitFailure(`git ${args.find((a) => !a.startsWith('-')) ?? ''}`, run));
  return run.stdout;
}

/** Commits need an author; use the user's own when git knows one. */
function identity(): string[] {
  const set = (k: string) => Boolean(process.env[k]);
  if (set('GIT_AUTHOR_NAME') && set('GIT_AUTHOR_EMAIL')) return [];
  return [
    '-c',
    'user.useConfigOnly=false',
    '-c',
    `user.name=${os.userInfo().username}`,
    '-c',
    `user.email=${os.userInfo().username}@localhost`,
  ];
}

/** Step 4: everything but .git of the destination is replaced by everything but .git of the source. */
function replaceWorkingFiles(destDir: string, sourceDir: string): void {
  for (const entry of fs.readdirSync(destDir)) if (entry !== '.git') fs.rmSync(path.join(destDir, entry), { recursive: true, force: true });
  for (const entry of fs.readdirSync(sourceDir)) {
    if (entry !== '.git') fs.cpSync(path.join(sourceDir, entry), path.join(destDir, entry), { recursive: true, verbatimSymlinks: true });
  }
}

async function waitForBuild(
  client: AlgohostClient,
  owner: string,
  name: string,
  commit: string,
  timeoutMs: number,
  step: (text: string) => void,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const status = await buildStatus(client, owner, name, commit);
    if (status === 'succeeded') return;
    if (status === 'failed') {
      throw new CliError(`the build of ${owner}/${name} at ${commit.slice(0, 12)} failed; see "algo builds ${owner} ${name}"`);
    }
    if (Date.now() > deadline) throw new CliError(`the build of ${owner}/${name} did not finish within ${timeoutMs / 1000} s`);
    if (!status) step('waiting for the build to start');
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** The status of the newest build of a commit (a success anywhere wins), or undefined. */
async function buildStatus(client: AlgohostClient, owner: string, name: string, commit: string): Promise<string | undefined> {
  const builds = (await client.builds.list(owner, name, { limit: 56 })).results.filter((b) => b.commit_sha === commit);
  return builds.some((b) => b.status === 'succeeded') ? 'succeeded' : builds[0]?.status;
}

const normalizeServer = (url: string) => url.replace(/\/+$/, '').toLowerCase();
