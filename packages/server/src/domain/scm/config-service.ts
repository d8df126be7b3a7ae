/**
 * SCM configurations (spec "SCM configuration"; compat §6): everyone signed in lists them, the
 * internal SCM always first; cluster admins create, enable or disable, make default and delete
 * external ones. The OAuth client secret is sealed with the cluster key and never shown.
 */
import crypto from 'node:crypto';
import { type Clock, isoNow } from '../clock.js';
import { Errors, invalid } from '../errors.js';
import { refuseCallKey, requireAdmin, type Principal } from '../accounts/principal.js';
import { optionalText } from '../text.js';
import { INTERNAL_SCM_ID, SCM_PROVIDERS, type ScmConfig, type ScmConfigView, type ScmProviderKind } from './model.js';
import type { ProviderEndpoint, ScmProvider, ScmStore } from './ports.js';
import type { SecretBox } from '../../lib/secret-box.js';

/** The request body of POST /v1/admin/scms and PATCH /v1/admin/scms/{id}; the domain checks every value. */
export interface ScmConfigInput {
  name?: unknown;
  provider?: unknown;
  default?: unknown;
  enabled?: unknown;
  oauth?: { client_id?: unknown; client_secret?: unknown } | null;
  scm?: { client_id?: unknown } | null;
  urls?: { web?: unknown; api?: unknown; ssh?: unknown } | null;
}

export interface ScmConfigServiceDeps {
  store: ScmStore;
  providers: ReadonlyMap<ScmProviderKind, ScmProvider>;
  secrets: SecretBox;
  clock: Clock;
  /** This service's own address: the internal SCM's `urls`. */
  publicUrl: string;
}

export class ScmConfigService {
  private readonly store: ScmStore;
  private readonly providers: ReadonlyMap<ScmProviderKind, ScmProvider>;
  private readonly secrets: SecretBox;
  private readonly clock: Clock;
  private readonly publicUrl: string;

  constructor(deps: ScmConfigServiceDeps) {
    this.store = deps.store;
    this.providers = deps.providers;
    this.secrets = deps.secrets;
    this.clock = deps.clock;
    this.publicUrl = deps.publicUrl;
  }

  async list(p: Principal): Promise<ScmConfigView[]> {
    refuseCallKey(p, 'Listing SCM configurations');
    const configs = await this.store.listConfigs();
    return [this.internal(configs), ...configs.map(viewOf)];
  }

  async get(p: Principal, id: string): Promise<ScmConfigView> {
    refuseCallKey(p, 'Reading an SCM configuration');
    if (id === INTERNAL_SCM_ID) return this.internal(await this.store.listConfigs());
    return viewOf(await this.require(id));
  }

  async create(p: Principal, input: ScmConfigInput): Promise<ScmConfigView> {
    requireAdmin(p, 'Creating an SCM configuration');
    const provider = this.providerOf(input.provider);
    const urls = this.urlsOf(provider, input.urls, undefined);
    const clientId = clientIdOf(input);
    if (clientId === undefined) throw invalid('oauth.client_id is required: the OAuth application registered at the provider');
    const secret = optionalText('oauth.client_secret', input.oauth?.client_secret, 500);
    if (!secret) throw invalid('oauth.client_secret is required: the OAuth application registered at the provider');
    const now = isoNow(this.clock);
    const config: ScmConfig = {
      id: crypto.randomUUID(),
      name: nameOf(input.name) ?? new URL(urls.web).host,
      provider: provider.kind,
      isDefault: flag('default', input.default) ?? false,
      enabled: flag('enabled', input.enabled) ?? true,
      oauthClientId: clientId,
      oauthClientSecret: this.secrets.seal(secret),
      urls,
      createdAt: now,
      updatedAt: now,
    };
    await this.store.insertConfig(config);
    return viewOf(config);
  }

  /** Changes what the body names; `provider` cannot change (create another configuration). */
  async update(p: Principal, id: string, input: ScmConfigInput): Promise<ScmConfigView> {
    requireAdmin(p, 'Changing an SCM configuration');
    const config = await this.require(id);
    if (input.provider !== undefined && input.provider !== config.provider) {
      throw invalid(`provider cannot change (it is "${config.provider}"); create another configuration instead`);
    }
    const provider = this.providerOf(config.provider);
    const next: ScmConfig = { ...config, urls: this.urlsOf(provider, input.urls, config.urls) };
    next.name = nameOf(input.name) ?? next.name;
    next.isDefault = flag('default', input.default) ?? next.isDefault;
    next.enabled = flag('enabled', input.enabled) ?? next.enabled;
    next.oauthClientId = clientIdOf(input) ?? next.oauthClientId;
    const secret = optionalText('oauth.client_secret', input.oauth?.client_secret, 500);
    if (secret !== undefined) {
      if (!secret) throw invalid('oauth.client_secret must not be empty');
      next.oauthClientSecret = this.secrets.seal(secret);
    }
    next.updatedAt = isoNow(this.clock);
    await this.store.updateConfig(next);
    return viewOf(next);
  }

  async delete(p: Principal, id: string): Promise<void> {
    requireAdmin(p, 'Deleting an SCM configuration');
    if (id === INTERNAL_SCM_ID) throw invalid('the internal SCM cannot be deleted');
    const count = await this.store.countSources(id);
    if (count > 0) throw Errors.scmConfigInUse({ id, count });
    if (!(await this.store.deleteConfig(id))) throw Errors.scmConfigNotFound({ id });
  }

  /** An external configuration, or 404 (the internal SCM is not one). */
  async require(id: string): Promise<ScmConfig> {
    const config = id === INTERNAL_SCM_ID || !isConfigId(id) ? undefined : await this.store.findConfig(id);
    if (!config) throw Errors.scmConfigNotFound({ id });
    return config;
  }

  /** An external configuration that may back new algorithms and new authorizations. */
  async requireEnabled(id: string): Promise<ScmConfig> {
    const config = await this.require(id);
    if (!config.enabled) throw Errors.scmConfigDisabled({ id, name: config.name });
    return config;
  }

  provider(config: ScmConfig): ScmProvider {
    return this.providerOf(config.provider);
  }

  /** The configuration's addresses and OAuth client with the secret opened, for its adapter. */
  async endpoint(config: ScmConfig): Promise<ProviderEndpoint> {
    return { urls: config.urls, clientId: config.oauthClientId, clientSecret: this.secrets.open(config.oauthClientSecret) };
  }

  /** compat §6: always present; the default unless an admin made an external configuration the default. */
  private internal(configs: ScmConfig[]): ScmConfigView {
    return {
      id: INTERNAL_SCM_ID,
      name: new URL(this.publicUrl).host,
      provider: 'internal',
      isDefault: !configs.some((c) => c.isDefault),
      enabled: true,
      urls: { web: this.publicUrl, api: `${this.publicUrl}/v1` },
    };
  }

  private providerOf(kind: unknown): ScmProvider {
    const provider = typeof kind === 'string' ? this.providers.get(kind as ScmProviderKind) : undefined;
    if (!provider) throw invalid(`provider must be one of ${SCM_PROVIDERS.join(', ')}; got ${JSON.stringify(kind ?? null)}`);
    return provider;
  }

  private urlsOf(provider: ScmProvider, input: ScmConfigInput['urls'], current: ScmConfig['urls'] | undefined): ScmConfig['urls'] {
    if (input !== undefined && input !== null && (typeof input !== 'object' || Array.isArray(input)))
      throw invalid('urls must be an object');
    const webText = optionalText('urls.web', input?.web, 500);
    if (!current && !webText)
      throw invalid('urls.web is required: the address of the provider (https://github.com, https://gitea.example.org…)');
    const web = webText ? httpUrl('urls.web', webText) : new URL(current!.web);
    const apiText = optionalText('urls.api', input?.api, 500);
    const sshText = optionalText('urls.ssh', input?.ssh, 500);
    const webChanged = webText !== undefined;
    return {
      web: trimSlash(web.toString()),
      api: apiText
        ? trimSlash(httpUrl('urls.api', apiText).toString())
        : webChanged || !current
          ? provider.defaultApiUrl(web)
          : current.api,
      ssh: sshText ? sshUrl(sshText) : webChanged || !current ? `ssh://git@${web.hostname}` : current.ssh,
    };
  }
}

export function viewOf(c: ScmConfig): ScmConfigView {
  return {
    id: c.id,
    name: c.name,
    provider: c.provider,
    isDefault: c.isDefault,
    enabled: c.enabled,
    oauthClientId: c.oauthClientId,
    urls: c.urls,
  };
}

/** Configuration ids are UUIDs; anything else names none (and never reaches the database). */
const isConfigId = (id: string) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(id);

function clientIdOf(input: ScmConfigInput): string | undefined {
  if (input.oauth !== undefined && input.oauth !== null && (typeof input.oauth !== 'object' || Array.isArray(input.oauth)))
    throw invalid('oauth must be an object');
  const oauth = optionalText('oauth.client_id', input.oauth?.client_id, 200);
  const scm = optionalText('scm.client_id', input.scm?.client_id, 200);
  // The spec's table has the client id twice; either may be sent, and both must agree.
  if (oauth !== undefined && scm !== undefined && oauth !== scm) throw invalid('oauth.client_id and scm.client_id differ; send one');
  const id = oauth ?? scm;
  if (id !== undefined && !id.trim()) throw invalid('oauth.client_id must not be empty');
  return id;
}

function nameOf(value: unknown): string | undefined {
  const name = optionalText('name', value, 200)?.trim();
  if (name === '') throw invalid('name must not be empty');
  return name;
}

function flag(field: string, value: unknown): boolean | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') throw invalid(`${field} must be true or false`);
  return value;
}

function httpUrl(field: string, text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw invalid(`${field} must be an absolute http(s) URL; got "${text}"`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw invalid(`${field} must be an http(s) URL; got "${text}"`);
  if (url.username || url.password) throw invalid(`${field} must not hold credentials`);
  if (url.search || url.hash) throw invalid(`${field} must not have a query or fragment`);
  return url;
}

function sshUrl(text: string): string {
  if (!/^(ssh:\/\/)?[A-Za-z0-9._-]+@[A-Za-z0-9.-]+(:\d+)?\/?$/.test(text))
    throw invalid(`urls.ssh must look like ssh://git@host[:port]; got "${text}"`);
  return text;
}

const trimSlash = (s: string) => s.replace(/\/+$/, '');
