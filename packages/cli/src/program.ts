/** The `algo` command tree: one file per command area under commands/. */
import fs from 'node:fs';
import { Command } from 'commander';
import * as admin from './commands/admin.js';
import * as auth from './commands/auth.js';
import * as builds from './commands/builds.js';
import * as clone from './commands/clone.js';
import * as create from './commands/create.js';
import * as data from './commands/data.js';
import * as keys from './commands/keys.js';
import * as languages from './commands/languages.js';
import * as migrate from './commands/migrate.js';
import * as migrateData from './commands/migrate-data.js';
import * as run from './commands/run.js';
import * as scm from './commands/scm.js';
import * as search from './commands/search.js';
import * as source from './commands/source.js';
import * as versions from './commands/versions.js';
import * as whoami from './commands/whoami.js';
import * as events from './commands/events.js';

export function version(): string {
  const pkg = JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

export function buildProgram(): Command {
  const program = new Command('algo')
    .description('Command-line client of algohost (and of Algorithmia-style servers): algorithms, builds, calls, hosted data.')
    .version(version(), '-V, --version')
    // Errors are printed by main() as one line; commander only throws them.
    .configureOutput({ outputError: () => undefined })
    .exitOverride()
    .showHelpAfterError(false)
    .addHelpText(
      'after',
      `
Profiles live in ~/.algorithmia/config ([profiles.<name>] with api_key, api_server, ca_cert,
bearer_token); every command takes --profile <name> (default "default"). Start with:
  algo auth --server http://127.0.0.1:8080 --key sim…`,
    );
  for (const area of [
    auth,
    whoami,
    languages,
    search,
    create,
    clone,
    source,
    scm,
    builds,
    run,
    versions,
    events,
    data,
    keys,
    migrate,
    migrateData,
    admin,
  ]) {
    area.register(program);
  }
  return program;
}
