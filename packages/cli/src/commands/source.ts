/** `algo commits owner/name` and `algo readme owner/name`: an algorithm's source read through the API, without cloning. */
import type { Command } from 'commander';
import { notice, out, printJson, printTable } from '../lib/output.js';
import { contextOf, needsFeature, optionsOf, ownerAndName, positiveInt, withJson, withProfile } from './common.js';

export function register(program: Command): void {
  withJson(
    withProfile(
      program
        .command('commits')
        .argument('<owner>', 'owner, or owner/name')
        .argument('[name]', 'algorithm name')
        .description('list the newest commits of an algorithm (who may clone it)')
        .option('--limit <n>', 'how many commits, up to 100', positiveInt, 20),
    ),
  ).action(async (first: string, second: string | undefined, _o, cmd: Command) => {
    const { owner, name } = ownerAndName(first, second);
    const opts = optionsOf<{ limit: number; json?: boolean }>(cmd);
    const { results } = await needsFeature('reading commits', () =>
      contextOf(cmd).client().algorithmCommits(owner, name, { limit: opts.limit }),
    );
    if (opts.json) return printJson(results);
    if (results.length === 0) return notice(`${owner}/${name} has no commits.`);
    printTable(
      ['COMMIT', 'DATE', 'AUTHOR', 'MESSAGE'],
      results.map((c) => [c.sha.slice(0, 12), c.committed_at, c.author_name, c.message]),
    );
  });

  withJson(
    withProfile(
      program
        .command('readme')
        .argument('<owner>', 'owner, or owner/name')
        .argument('[name]', 'algorithm name')
        .description("print an algorithm's README as it is in its repository")
        .option('--ref <ref>', 'a commit SHA, branch or tag (v1.2.3); default: the default branch'),
    ),
  ).action(async (first: string, second: string | undefined, _o, cmd: Command) => {
    const { owner, name } = ownerAndName(first, second);
    const opts = optionsOf<{ ref?: string; json?: boolean }>(cmd);
    const readme = await needsFeature('reading READMEs', () => contextOf(cmd).client().algorithmReadme(owner, name, { ref: opts.ref }));
    if (opts.json) return printJson(readme);
    out(readme.content.endsWith('\n') || readme.content === '' ? readme.content : `${readme.content}\n`);
    if (readme.truncated) notice(`(${readme.path} is longer than 256 KiB: only its beginning was printed)`);
  });
}
