/**
 * Profiles in ~/.algorithmia/config, the file the original CLI reads and writes (TOML):
 *
 *   [profiles.default]
 *   api_key = "sim…"
 *   api_server = "https://algohost.example.com"
 *   ca_cert = ""
 *   bearer_token = ""
 *
 * `username` (the account that owns the key) is an addition of ours: Git wants it and the API
 * has no "who am I". Unknown keys and other profiles are kept as they are when we write.
 * HOME decides where the file is, so tests use a temporary HOME.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse, stringify } from 'smol-toml';
import { CliError } from './errors.js';

export interface Profile {
  api_key?: string;
  api_server?: string;
  ca_cert?: string;
  bearer_token?: string;
  username?: string;
  [key: string]: unknown;
}

export interface ConfigFile {
  profiles?: Record<string, Profile>;
  [key: string]: unknown;
}

export const DEFAULT_PROFILE = 'default';

export function configDir(): string {
  return path.join(os.homedir(), '.algorithmia');
}

export function configPath(): string {
  return path.join(configDir(), 'config');
}

/** A path for messages: `~/.algorithmia/config` when it is under HOME. */
export function displayPath(p: string): string {
  const home = os.homedir();
  return p.startsWith(home + path.sep) ? `~${p.slice(home.length)}` : p;
}

export function readConfig(): ConfigFile {
  const file = configPath();
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new CliError(`cannot read ${displayPath(file)}: ${(err as Error).message}`);
  }
  try {
    return parse(text) as ConfigFile;
  } catch (err) {
    const first = String((err as Error).message).split('\n')[0];
    throw new CliError(`${displayPath(file)} is not valid TOML: ${first}`);
  }
}

/** Writes the whole file (mode 0600, it holds keys), through a temporary file and a rename. */
export function writeConfig(config: ConfigFile): void {
  const dir = configDir();
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = configPath();
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, stringify(config) + '\n', { mode: 0o600 });
  fs.renameSync(tmp, file);
}

export function getProfile(config: ConfigFile, name: string): Profile | undefined {
  return config.profiles?.[name];
}

export function setProfile(config: ConfigFile, name: string, profile: Profile): ConfigFile {
  return { ...config, profiles: { ...config.profiles, [name]: profile } };
}
