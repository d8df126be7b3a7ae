/**
 * `algo create <owner>/<name>`: creates an algorithm (docs/compatibility.md §9.2 endpoint 2). Language, environment
 * and settings come from flags; on a terminal, what the flags leave open is asked.
 */
import type { Command } from 'commander';
import type { AlgorithmInput, Environment } from '@algohost/client';
import { CliError } from '../errors.js';
import { line, printJson } from '../lib/output.js';
import { ask, choose, interactive } from '../lib/prompt.js';
import { contextOf, oneOf, optionsOf, withJson, withProfile } from './common.js';
import type { Context } from '../context.js';

interface CreateOptions {
  language?: string;
  environment?: string;
  settings?: string;
  label?: string;
  summary?: string;
  tagline?: string;
  license?: string;
  networkAccess?: string;
  sourceVisibility?: string;
  callability?: string;
  pipeline?: boolean;
  yes?: boolean;
  json?: boolean;
}

export function register(program: Command): void {
  withJson(
    withProfile(
      program
        .command('create')
        .argument('<algorithm>', 'owner/name, or just name for the account of the profile')
        .description('create an algorithm; its Git repository starts with the template of its environment')
        .option('--language <name>', 'language: a name from "algo languages" (python3) or a legacy one (python3-1, java, r…)')
        .option('--environment <id|name|cpu|gpu>', 'environment id or name from "algo environment <language>", or cpu/gpu with --language')
        .option('--settings <json>', 'more settings as a JSON object, e.g. \'{"royalty_microcredits": 0}\'')
        .option('--label <text>', 'display label (default: the name)')
        .option('--summary <text>', 'one-paragraph summary')
        .option('--tagline <text>', 'one-line tagline')
        .option('--license <license>', 'apl, apache2, gpl3 or mit', oneOf('apl', 'apache2', 'gpl3', 'mit'))
        .option('--network-access <access>', 'isolated or full', oneOf('isolated', 'full'))
        .option('--source-visibility <visibility>', 'open or closed (closed needs license apl)', oneOf('open', 'closed'))
        .option('--callability <who>', 'private or public (new algorithms start private)', oneOf('private', 'public'))
        .option('--pipeline', 'let the algorithm call other algorithms and read data with the caller’s rights')
        .option('-y, --yes', 'do not ask; use defaults for what the flags leave open'),
    ),
  ).action(async (algorithm: string, _o, cmd: Command) => create(contextOf(cmd), algorithm, optionsOf<CreateOptions>(cmd)));
}

async function create(ctx: Context, arg: string, opts: CreateOptions): Promise<void> {
  const parts = arg.replace(/\/+$/, '').split('/');
  if (parts.length > 2 || parts.some((p) => !p)) throw new CliError(`"${arg}" is not an algorithm name: write owner/name or name`);
  const [owner, name] = parts.length === 2 ? (parts as [string, string]) : [ctx.account(), parts[0]!];

  let settings: Record<string, unknown> = {};
  if (opts.settings) {
    try {
      settings = JSON.parse(opts.settings) as Record<string, unknown>;
    } catch (err) {
      throw new CliError(`--settings is not valid JSON: ${(err as Error).message}`);
    }
    if (!settings || typeof settings !== 'object' || Array.isArray(settings)) throw new CliError('--settings must be a JSON object');
  }
  if (opts.language) settings.language = opts.language;
  if (opts.environment) {
    const env = opts.environment;
    if (/^(cpu|gpu)$/i.test(env)) settings.environment = env.toLowerCase();
    else settings.algorithm_environment = env;
  }
  if (opts.license) settings.license = opts.license;
  if (opts.networkAccess) settings.network_access = opts.networkAccess;
  if (opts.sourceVisibility) settings.source_visibility = opts.sourceVisibility;
  if (opts.callability) settings.algorithm_callability = opts.callability;
  if (opts.pipeline) settings.pipeline_enabled = true;

  const details: Record<string, string> = { label: opts.label ?? name };
  if (opts.summary) details.summary = opts.summary;
  if (opts.tagline) details.tagline = opts.tagline;

  const open = (key: string) => settings[key] === undefined;
  if (interactive() && !opts.yes) {
    if (open('language') && open('algorithm_environment')) {
      const env = await chooseEnvironment(ctx);
      settings.algorithm_environment = env.id;
    }
    if (open('license')) {
      settings.license = await choose(
        'License:',
        ['apl', 'apache2', 'gpl3', 'mit'].map((l) => ({ label: l, value: l, name: l })),
      );
    }
    if (open('source_visibility')) {
      const choices = settings.license === 'apl' ? ['closed', 'open'] : ['open'];
      settings.source_visibility = await choose(
        'Source visibility:',
        choices.map((v) => ({ label: v, value: v, name: v })),
      );
    }
    if (open('network_access')) {
      settings.network_access = await choose('Network access while running:', [
        { label: 'isolated (no internet)', value: 'isolated', name: 'isolated' },
        { label: 'full', value: 'full', name: 'full' },
      ]);
    }
    if (opts.label === undefined) details.label = await ask('Label', name);
  }

  const input: AlgorithmInput = { name, details, settings };
  const created = await ctx.client().algorithms.create(owner, input);
  if (opts.json) return printJson(created);
  line(
    `Created algorithm ${created.owner}/${created.name} (language ${created.settings.language ?? '?'}, environment ${created.settings.algorithm_environment})`,
  );
  line(`Clone it with: algo clone ${created.owner}/${created.name}`);
}

async function chooseEnvironment(ctx: Context): Promise<Environment> {
  const client = ctx.client();
  const languages = await client.environments.languages();
  const defaultLanguage = Math.max(
    0,
    languages.findIndex((l) => l.name === 'python3'),
  );
  const language = await choose(
    'Language:',
    languages.map((l) => ({ label: `${l.name} — ${l.display_name}`, value: l.name, name: l.name })),
    defaultLanguage,
  );
  const environments = await client.environments.list(language);
  if (environments.length === 0) throw new CliError(`language "${language}" has no environments on this server`);
  return choose(
    'Environment:',
    environments.map((e) => ({ label: `${e.name} — ${e.display_name} (${e.machine_type})`, value: e, name: e.name })),
    Math.max(
      0,
      environments.findIndex((e) => e.machine_type === 'CPU'),
    ),
  );
}
