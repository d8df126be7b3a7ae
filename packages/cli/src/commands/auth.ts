/**
 * `algo auth`: stores a profile (server address and key) in ~/.algorithmia/config after checking
 * that the server accepts it. Interactive on a terminal; flags for scripts. Unlike the original
 * CLI it accepts plain http:// addresses, for self-hosted servers.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { AlgohostClient, AlgohostError } from '@algohost/client';
import { type Profile, configPath, displayPath, getProfile, readConfig, setProfile, writeConfig } from '../config.js';
import { CliError } from '../errors.js';
import { cliFetch } from '../http.js';
import { line } from '../lib/output.js';
import { ask, interactive } from '../lib/prompt.js';
import { optionsOf, withProfile } from './common.js';

const DEFAULT_SERVER = 'http://127.0.0.1:8080';

interface AuthOptions {
  profile?: string;
  server?: string;
  key?: string;
  bearerToken?: string;
  caCert?: string;
  username?: string;
  check: boolean;
}

export function register(program: Command): void {
  withProfile(
    program
      .command('auth')
      .description('store the server address and API key of a profile (asks for them on a terminal)')
      .option('--server <url>', `API address, http:// or https:// (default on a terminal: ${DEFAULT_SERVER})`)
      .option('--key <api_key>', 'API key (28 characters starting with "sim")')
      .option('--bearer-token <token>', 'a JWT to send as "Authorization: Bearer" instead of a key')
      .option('--ca-cert <file>', 'PEM file of the certificate authority of an https:// server')
      .option('--username <name>', 'the account that owns the key (git and "algo keys" need it)')
      .option('--no-check', 'store the profile without asking the server whether the key works'),
  ).action(async (_opts, cmd: Command) => auth(optionsOf<AuthOptions>(cmd)));
}

async function auth(opts: AuthOptions): Promise<void> {
  const profileName = opts.profile || 'default';
  const config = readConfig();
  const existing = getProfile(config, profileName);
  const tty = interactive();

  let server = opts.server;
  if (!server && tty) server = await ask('API address', existing?.api_server || DEFAULT_SERVER);
  if (!server) server = existing?.api_server;
  if (!server) throw new CliError('missing --server <url> (stdin is not a terminal, so there is no prompt)');
  server = checkServer(server);

  let key = opts.key;
  const bearer = opts.bearerToken;
  if (!key && !bearer && tty) key = await ask('API key');
  if (!key && !bearer) throw new CliError('missing --key <api_key> (stdin is not a terminal, so there is no prompt)');
  if (key) checkKey(key);

  let username = opts.username;
  if (username === undefined && tty && key) username = await ask('Account that owns the key (for git; optional)', existing?.username);
  if (username === undefined) username = existing?.username;
  if (username && !/^[A-Za-z][A-Za-z0-9_]*$/.test(username)) throw new CliError(`"${username}" is not an account name`);

  let caCert = opts.caCert ?? existing?.ca_cert ?? '';
  if (caCert) {
    caCert = path.resolve(caCert);
    if (!fs.existsSync(caCert)) throw new CliError(`no such file: ${caCert} (--ca-cert)`);
  }

  if (opts.check) await checkCredentials(server, key, bearer, caCert || undefined);

  const profile: Profile = {
    ...existing,
    api_key: key ?? '',
    api_server: server,
    ca_cert: caCert,
    bearer_token: bearer ?? '',
  };
  if (username) profile.username = username;
  else delete profile.username;
  writeConfig(setProfile(config, profileName, profile));
  line(`Profile "${profileName}" saved in ${displayPath(configPath())}: ${server}${username ? ` as ${username}` : ''}`);
}

function checkServer(input: string): string {
  let url: URL;
  try {
    url = new URL(input.trim());
  } catch {
    throw new CliError(`"${input}" is not an address: write http://host:port or https://host`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new CliError(`"${input}" is not an http:// or https:// address`);
  if (url.username || url.password) throw new CliError('the server address must not carry a user name or password');
  if (url.search || url.hash) throw new CliError('the server address must not have a query or fragment');
  return url.toString().replace(/\/+$/, '');
}

/** docs/compatibility.md §1: the CLI accepts a key only if it is 28 characters long and starts with "sim". */
function checkKey(key: string): void {
  if (key.length !== 28 || !key.startsWith('sim')) {
    throw new CliError('that is not an API key: a key is 28 characters long and starts with "sim"');
  }
}

/** Any account may list languages, so it is the cheapest request that proves the key works. */
async function checkCredentials(
  server: string,
  key: string | undefined,
  bearer: string | undefined,
  caCert: string | undefined,
): Promise<void> {
  const client = new AlgohostClient({ server, apiKey: key, bearerToken: key ? undefined : bearer, fetch: cliFetch(caCert) });
  try {
    await client.environments.languages();
  } catch (err) {
    if (err instanceof AlgohostError && (err.status === 401 || err.status === 403)) {
      throw new CliError(`${server} refused the ${key ? 'key' : 'token'}: ${err.message} (nothing was saved)`);
    }
    if (err instanceof AlgohostError && err.status === 0) {
      throw new CliError(`${err.message} (nothing was saved; check the address, or pass --no-check)`);
    }
    throw err;
  }
}
