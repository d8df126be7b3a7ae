/**
 * Algorithms whose source lives at a provider (spec endpoint 2's external-SCM form). `plan`
 * checks every prerequisite (configuration enabled, authorized by this account and accepted by
 * the provider, repository_owner the provider account or an organization where it is MEMBER,
 * no repository of that name yet) before anything is made anywhere; the algorithm service then
 * makes the algorithm and its own repository with the template commit, and `establish` creates
 * the repository at the provider, pushes that same commit and registers a signed webhook.
 *
 * The algorithm's own repository stays the mirror builds read from: pushes reach it only from
 * the provider (webhook or sync, `source-sync-service.ts`), never over algohost's Git server.
 */
import crypto from 'node:crypto';
import { type Clock, isoNow } from '../clock.js';
import { DomainError, Errors, invalid } from '../errors.js';
import type { Principal } from '../accounts/principal.js';
import { optionalText } from '../text.js';
import type { Algorithm } from '../algorithms/model.js';
import type { AlgorithmSource, ExternalSourcePlan, ExternalSourcing } from './ports.js';
import type { AuthorizationService } from './authorization-service.js';
import { type ScmConfigService, viewOf } from './config-service.js';
import type { ExternalSource, ScmConfig } from './model.js';
import type { ProviderEndpoint, ProviderRepository, ScmProvider, ScmStore, SourceMirror } from './ports.js';
import type { SecretBox } from '../../lib/secret-box.js';

/** Repository and owner names every provider accepts (GitHub's rule; the others allow a subset of it or more). */
const REPOSITORY_NAME = /^[A-Za-z0-9_.-]{1,100}$/;
const OWNER_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/;

export interface ExternalSourceServiceDeps {
  store: ScmStore;
  configs: ScmConfigService;
  authorizations: AuthorizationService;
  secrets: SecretBox;
  mirror: SourceMirror;
  clock: Clock;
  /** Base of the webhook address given to providers: `{public URL}/v1/scm/webhooks/{algorithm id}`. */
  publicUrl: string;
}

export class ExternalSourceService implements ExternalSourcing {
  private readonly store: ScmStore;
  private readonly configs: ScmConfigService;
  private readonly authorizations: AuthorizationService;
  private readonly secrets: SecretBox;
  private readonly mirror: SourceMirror;
  private readonly clock: Clock;
  private readonly publicUrl: string;

  constructor(deps: ExternalSourceServiceDeps) {
    this.store = deps.store;
    this.configs = deps.configs;
    this.authorizations = deps.authorizations;
    this.secrets = deps.secrets;
    this.mirror = deps.mirror;
    this.clock = deps.clock;
    this.publicUrl = deps.publicUrl;
  }

  async plan(p: Principal, source: Record<string, unknown>): Promise<ExternalSourcePlan> {
    const configId = optionalText('source.scm', source.scm, 100);
    if (!configId) throw invalid('source.scm is required: the id of an SCM configuration (GET /v1/scms)');
    const repositoryName = required(
      'source.repository_name',
      source.repository_name,
      REPOSITORY_NAME,
      'letters, digits, ".", "-" and "_", at most 100',
    );
    if (/^\.+$/.test(repositoryName) || /\.git$/i.test(repositoryName))
      throw invalid(`source.repository_name "${repositoryName}" is not a usable repository name`);
    const repositoryOwner = required(
      'source.repository_owner',
      source.repository_owner,
      OWNER_NAME,
      'the scm_username of the token status, or an organization',
    );
    const commitMessage = optionalText('source.initial_commit_message', source.initial_commit_message, 5000);
    if (!commitMessage?.trim()) throw invalid('source.initial_commit_message is required: the message of the first commit at the provider');

    const config = await this.configs.requireEnabled(configId);
    const provider = this.configs.provider(config);
    const endpoint = await this.configs.endpoint(config);
    // Asks the provider now: a token revoked there since the last status check is refused here.
    const checked = await this.authorizations.withToken(p.account.id, config, async (token, storedName) => {
      const { username } = await provider.currentUser(endpoint, token);
      const organizations = await provider.organizations(endpoint, token, username);
      return { username: username || storedName, organizations };
    });
    const owner = ownerOf(repositoryOwner, checked.username, checked.organizations);
    const { token } = await this.authorizations.accessToken(p.account.id, config);
    if (await provider.repositoryExists(endpoint, token, owner.name, repositoryName)) {
      throw Errors.scmRepositoryExists({ owner: owner.name, name: repositoryName, provider: config.name });
    }
    return {
      commitMessage,
      establish: (algorithm) =>
        this.establish(
          { config, provider, endpoint, accountId: p.account.id, owner: owner.name, ownerIsUser: owner.isUser, repositoryName },
          algorithm,
        ),
    };
  }

  async sourceOf(algorithmId: string): Promise<AlgorithmSource | undefined> {
    const source = await this.store.findSource(algorithmId);
    if (!source) return undefined;
    const config = await this.store.findConfig(source.configId);
    if (!config) return undefined;
    return sourceView(source, config);
  }

  private async establish(
    plan: {
      config: ScmConfig;
      provider: ScmProvider;
      endpoint: ProviderEndpoint;
      accountId: string;
      owner: string;
      ownerIsUser: boolean;
      repositoryName: string;
    },
    algorithm: Algorithm,
  ): Promise<AlgorithmSource> {
    const { config, provider, endpoint } = plan;
    const { token, username } = await this.authorizations.accessToken(plan.accountId, config);
    const secret = crypto.randomBytes(32).toString('base64url');
    let repository: ProviderRepository | undefined;
    try {
      repository = await provider.createRepository(endpoint, token, {
        owner: plan.owner,
        name: plan.repositoryName,
        ownerIsUser: plan.ownerIsUser,
        description: `Source of the algorithm ${algorithm.ownerName}/${algorithm.name}`,
      });
      await this.mirror.pushTo(algorithm.id, repository.httpsUrl, provider.gitCredentials(token, username));
      const webhookId = await provider.createWebhook(endpoint, token, {
        owner: plan.owner,
        name: plan.repositoryName,
        url: `${this.publicUrl}/v1/scm/webhooks/${algorithm.id}`,
        secret,
      });
      const source: ExternalSource = {
        algorithmId: algorithm.id,
        configId: config.id,
        repositoryOwner: plan.owner,
        repositoryName: plan.repositoryName,
        httpsUrl: repository.httpsUrl,
        sshUrl: repository.sshUrl,
        webUrl: repository.webUrl,
        webhookId,
        webhookSecret: this.secrets.seal(secret),
        accountId: plan.accountId,
        lastDelivery: null,
        createdAt: isoNow(this.clock),
      };
      await this.store.insertSource(source);
      return sourceView(source, config);
    } catch (err) {
      const what = err instanceof DomainError ? err.message : String(err);
      let left = 'nothing was created there';
      if (repository) {
        try {
          await provider.deleteRepository(endpoint, token, plan.owner, plan.repositoryName);
          left = `the repository made there was deleted again`;
        } catch {
          left = `the repository ${repository.webUrl} was made there and could not be deleted: delete it before trying again`;
        }
      }
      throw Errors.scmProviderFailed(`hosting the source at ${config.name} failed (${what}); ${left}; the algorithm was not created`);
    }
  }
}

export function sourceView(source: ExternalSource, config: ScmConfig): AlgorithmSource {
  return {
    repositoryName: source.repositoryName,
    repositoryOwner: source.repositoryOwner,
    httpsUrl: source.httpsUrl,
    sshUrl: source.sshUrl,
    webUrl: source.webUrl,
    scm: viewOf(config),
    lastDelivery: source.lastDelivery,
  };
}

function required(field: string, value: unknown, pattern: RegExp, rule: string): string {
  const text = optionalText(field, value, 100);
  if (!text) throw invalid(`${field} is required (${rule})`);
  if (!pattern.test(text)) throw invalid(`${field} "${text}" is invalid: ${rule}`);
  return text;
}

/** The spec's rule: the provider account itself, or an organization where it is MEMBER (letter case as the provider spells it). */
function ownerOf(
  wanted: string,
  username: string,
  organizations: { name: string; accessLevel: string }[],
): { name: string; isUser: boolean } {
  if (wanted.toLowerCase() === username.toLowerCase()) return { name: username, isUser: true };
  const org = organizations.find((o) => o.name.toLowerCase() === wanted.toLowerCase() && o.accessLevel === 'MEMBER');
  if (org) return { name: org.name, isUser: false };
  throw Errors.scmOwnerNotAllowed({
    owner: wanted,
    username,
    organizations: organizations.filter((o) => o.accessLevel === 'MEMBER').map((o) => o.name),
  });
}
