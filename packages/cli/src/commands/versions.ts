/** `algo publish <owner>/<name>` and `algo versions <owner>/<name>` (docs/compatibility.md §3). */
import type { Command } from 'commander';
import type { AlgorithmVersion, PublishInput, VersionType } from '@algohost/client';
import { line, printJson, printTable } from '../lib/output.js';
import { contextOf, needsFeature, oneOf, optionsOf, ownerAndName, positiveInt, withJson, withProfile } from './common.js';

interface PublishOptions {
  type?: VersionType;
  releaseNotes?: string;
  sampleInput?: string;
  sampleOutput?: string;
  callability?: 'public' | 'private';
  insights?: boolean;
  json?: boolean;
}

interface VersionsOptions {
  published?: boolean;
  callable?: boolean;
  limit: number;
  json?: boolean;
}

export function register(program: Command): void {
  withJson(
    withProfile(
      program
        .command('publish')
        .argument('<algorithm>', 'owner/name')
        .description('publish the latest successful build as a new version')
        .option('--type <type>', 'major, minor or revision (default: minor)', oneOf('major', 'minor', 'revision', 'patch'))
        .option('--release-notes <text>', 'release notes of the version')
        .option('--sample-input <text>', 'sample input shown with the version')
        .option('--sample-output <text>', 'sample output shown with the version')
        .option('--callability <who>', 'public or private', oneOf('public', 'private'))
        .option('--insights', 'enable Insights for the version'),
    ),
  ).action(async (algorithm: string, _o, cmd: Command) => {
    const { owner, name } = ownerAndName(algorithm, undefined);
    const opts = optionsOf<PublishOptions>(cmd);
    const input: PublishInput = { version_info: {} };
    if (opts.type) input.version_info!.version_type = opts.type;
    if (opts.releaseNotes) input.version_info!.release_notes = opts.releaseNotes;
    if (opts.sampleInput) input.version_info!.sample_input = opts.sampleInput;
    if (opts.sampleOutput) input.version_info!.sample_output = opts.sampleOutput;
    if (opts.callability || opts.insights) {
      input.settings = {};
      if (opts.callability) input.settings.algorithm_callability = opts.callability;
      if (opts.insights) input.settings.insights_enabled = true;
    }
    const version = await needsFeature('publishing versions', () => contextOf(cmd).client().versions.publish(owner, name, input));
    if (opts.json) return printJson(version);
    const v = version.version_info;
    line(`Published ${owner}/${name} ${v.semantic_version ?? ''} (commit ${v.git_hash?.slice(0, 12) ?? '?'})`.replace('  ', ' '));
  });

  withJson(
    withProfile(
      program
        .command('versions')
        .argument('<algorithm>', 'owner/name')
        .description('list the versions of an algorithm')
        .option('--published', 'only published versions')
        .option('--unpublished', 'only builds that are not published')
        .option('--callable', 'only versions the caller may call')
        .option('--limit <n>', 'page size', positiveInt, 50),
    ),
  ).action(async (algorithm: string, _o, cmd: Command) => {
    const { owner, name } = ownerAndName(algorithm, undefined);
    const opts = optionsOf<VersionsOptions & { unpublished?: boolean }>(cmd);
    const client = contextOf(cmd).client();
    const published = opts.published ? true : opts.unpublished ? false : undefined;
    const versions = await needsFeature('versions', async () => {
      const all: AlgorithmVersion[] = [];
      for await (const v of client.versions.all(owner, name, { limit: opts.limit, published, callable: opts.callable ? true : undefined }))
        all.push(v);
      return all;
    });
    if (opts.json) return printJson(versions);
    printTable(
      ['VERSION', 'GIT HASH', 'CALLABILITY', 'RELEASE NOTES'],
      versions.map((v) => [
        v.version_info.semantic_version ?? '(unpublished)',
        v.version_info.git_hash,
        (v.settings as { algorithm_callability?: string } | undefined)?.algorithm_callability ?? '',
        (v.version_info.release_notes ?? '').split('\n')[0],
      ]),
    );
  });
}
