/** `algo languages`, `algo environment <language>`, `algo template <spec id> <dir>` (CLI ≥ 1.9.0). */
import path from 'node:path';
import type { Command } from 'commander';
import { CliError } from '../errors.js';
import { line, printJson, printTable } from '../lib/output.js';
import { Progress } from '../lib/progress.js';
import { unpackTarGz } from '../lib/untar.js';
import { contextOf, optionsOf, withJson, withProfile } from './common.js';

export function register(program: Command): void {
  withJson(withProfile(program.command('languages').description('list the languages algorithms can be written in'))).action(
    async (_o, cmd: Command) => {
      const { json } = optionsOf(cmd);
      const languages = await contextOf(cmd).client().environments.languages();
      if (json) return printJson(languages);
      printTable(
        ['NAME', 'DISPLAY NAME'],
        languages.map((l) => [l.name, l.display_name]),
      );
    },
  );

  withJson(
    withProfile(
      program
        .command('environment')
        .alias('environments')
        .argument('<language>', 'a language name from "algo languages"')
        .description('list the environments of a language (their ids go to "algo create", spec ids to "algo template")'),
    ),
  ).action(async (language: string, _o, cmd: Command) => {
    const { json } = optionsOf(cmd);
    const environments = await contextOf(cmd).client().environments.list(language);
    if (json) return printJson(environments);
    printTable(
      ['NAME', 'ENVIRONMENT ID', 'SPECIFICATION ID', 'MACHINE', 'DISPLAY NAME'],
      environments.map((e) => [e.name, e.id, e.environment_specification_id, e.machine_type, e.display_name]),
    );
  });

  withProfile(
    program
      .command('template')
      .argument('<environment_specification_id>', 'from "algo environment <language>"')
      .argument('<dir>', 'directory to unpack the template files into (made if missing)')
      .description('download the template files of an environment and unpack them'),
  ).action(async (specId: string, dir: string, _o, cmd: Command) => {
    const client = contextOf(cmd).client();
    const progress = new Progress('Downloading template');
    let archive: Uint8Array;
    try {
      archive = await client.environments.template(specId, { onProgress: (n, total) => progress.update(n, total) });
    } finally {
      progress.done();
    }
    if (archive.byteLength === 0) throw new CliError('the server sent an empty template');
    const entries = unpackTarGz(archive, dir);
    const files = entries.filter((e) => e.type === 'file');
    line(`Unpacked ${files.length} file${files.length === 1 ? '' : 's'} into ${path.resolve(dir)}`);
  });
}
