/**
 * What a command needs to talk to a server: the chosen profile (`--profile`, default
 * "default") and a client built from it.
 */
import { AlgohostClient } from '@algohost/client';
import { type Profile, DEFAULT_PROFILE, configPath, displayPath, getProfile, readConfig } from './config.js';
import { CliError } from './errors.js';
import { cliFetch } from './http.js';

export interface CommonOptions {
  profile?: string;
  json?: boolean;
}

export class Context {
  private cachedProfile: Profile | undefined;
  private cachedClient: AlgohostClient | undefined;

  constructor(readonly profileName: string = DEFAULT_PROFILE) {}

  static from(opts: CommonOptions): Context {
    return new Context(opts.profile || DEFAULT_PROFILE);
  }

  /** The profile; fails with what to run when it does not exist. */
  profile(): Profile {
    if (this.cachedProfile) return this.cachedProfile;
    const profile = getProfile(readConfig(), this.profileName);
    if (!profile) {
      const flag = this.profileName === DEFAULT_PROFILE ? '' : ` --profile ${this.profileName}`;
      throw new CliError(`no profile "${this.profileName}" in ${displayPath(configPath())}: run "algo auth${flag}" first`);
    }
    if (!profile.api_server) throw new CliError(`profile "${this.profileName}" has no api_server: run "algo auth" again`);
    if (!profile.api_key && !profile.bearer_token) {
      throw new CliError(`profile "${this.profileName}" has neither api_key nor bearer_token: run "algo auth" again`);
    }
    this.cachedProfile = profile;
    return profile;
  }

  client(): AlgohostClient {
    if (this.cachedClient) return this.cachedClient;
    const p = this.profile();
    this.cachedClient = new AlgohostClient({
      server: p.api_server!,
      apiKey: p.api_key || undefined,
      bearerToken: p.api_key ? undefined : p.bearer_token || undefined,
      fetch: cliFetch(p.ca_cert || undefined),
    });
    return this.cachedClient;
  }

  /** The account that owns the profile's key: `--user`, else the profile's `username`. */
  account(explicit?: string): string {
    const name = explicit || this.profile().username;
    if (!name) {
      const flag = this.profileName === DEFAULT_PROFILE ? '' : ` --profile ${this.profileName}`;
      throw new CliError(`which account? pass --user NAME, or store it with "algo auth${flag} --username NAME"`);
    }
    return name;
  }
}
