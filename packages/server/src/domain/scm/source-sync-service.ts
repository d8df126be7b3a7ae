/**
 * Bringing a push at the provider here: the webhook (signature checked with the secret made for
 * that algorithm) or "sync now" (for a provider whose webhooks cannot reach algohost) fetches
 * the provider's main branch with the token of the account that created the algorithm into the
 * algorithm's own repository, which then builds its tip exactly like a push to the internal SCM.
 *
 * A delivery is only a signal to fetch. Its commit id and delivery id are hints: a signed
 * delivery can be captured and resent (GitLab even sends its secret as is, so one captured
 * delivery lets anyone forge more), so nothing in it decides what main becomes. Only the tip
 * the branch has at the provider when fetched does; a commit the branch no longer holds is
 * never built, however it is named.
 */
import { type Clock, isoNow } from '../clock.js';
import { DomainError, Errors } from '../errors.js';
import type { Principal } from '../accounts/principal.js';
import type { AlgorithmReader, RepositoryHost } from '../algorithms/ports.js';
import type { BuildService } from '../builds/build-service.js';
import type { Build } from '../builds/model.js';
import type { AuthorizationService } from './authorization-service.js';
import type { ScmConfigService } from './config-service.js';
import type { ExternalSource, SourceDelivery } from './model.js';
import type { ScmStore, SourceMirror } from './ports.js';
import type { SecretBox } from '../../lib/secret-box.js';

/** The branch that is built, as for pushes to the internal SCM. */
const BRANCH = 'main';
/** Delivery ids are remembered this long: a resent one within it is refused (saves a fetch; not the protection). */
const REPLAY_WINDOW_MS = 7 * 24 * 3600 * 1000;
/** …and at most this many of one algorithm (ids are not signed: resending one delivery under new ids must not grow the table). */
const REMEMBERED_DELIVERIES = 1000;

export interface SyncResult {
  /** The build queued, if the provider's branch held a commit not built yet. */
  build?: Build;
  commitSha: string | null;
  result: string;
}

export interface SourceSyncServiceDeps {
  store: ScmStore;
  configs: ScmConfigService;
  authorizations: AuthorizationService;
  secrets: SecretBox;
  mirror: SourceMirror;
  repositories: Pick<RepositoryHost, 'head'>;
  algorithms: AlgorithmReader;
  builds: Pick<BuildService, 'enqueue'>;
  clock: Clock;
}

export class SourceSyncService {
  private readonly store: ScmStore;
  private readonly configs: ScmConfigService;
  private readonly authorizations: AuthorizationService;
  private readonly secrets: SecretBox;
  private readonly mirror: SourceMirror;
  private readonly repositories: Pick<RepositoryHost, 'head'>;
  private readonly algorithms: AlgorithmReader;
  private readonly builds: Pick<BuildService, 'enqueue'>;
  private readonly clock: Clock;
  /** Per algorithm: the webhook fetch running, and the one deliveries arriving meanwhile wait for. */
  private readonly webhookRuns = new Map<string, { running: Promise<SyncResult>; next?: Promise<SyncResult> }>();

  constructor(deps: SourceSyncServiceDeps) {
    this.store = deps.store;
    this.configs = deps.configs;
    this.authorizations = deps.authorizations;
    this.secrets = deps.secrets;
    this.mirror = deps.mirror;
    this.repositories = deps.repositories;
    this.algorithms = deps.algorithms;
    this.builds = deps.builds;
    this.clock = deps.clock;
  }

  /** A delivery to `/v1/scm/webhooks/{algorithm id}`: no credential but the signature. */
  async webhook(algorithmId: string, headers: Record<string, string | string[] | undefined>, body: Buffer): Promise<SyncResult> {
    const source = /^[0-9a-f-]{36}$/.test(algorithmId) ? await this.store.findSource(algorithmId) : undefined;
    const config = source && (await this.store.findConfig(source.configId));
    if (!source || !config) throw Errors.scmSourceNotFound({ id: algorithmId });
    const notice = this.configs.provider(config).readWebhook(headers, body, this.secrets.open(source.webhookSecret));
    if ('refused' in notice) {
      // Unsigned and forged deliveries leave no trace here (anyone can send them); signed but
      // unusable ones are recorded, so the owner sees why nothing was built.
      if (notice.refused === 'unsigned' || notice.refused === 'bad_signature') throw Errors.scmWebhookRefused(notice.message);
      if (notice.refused === 'not_a_push') return this.record(source, { via: 'webhook', commitSha: null, result: notice.message });
      throw Errors.scmWebhookInvalid(notice.message);
    }
    const now = this.clock();
    const fresh = await this.store.rememberDelivery(
      source.algorithmId,
      notice.deliveryId,
      now.toISOString(),
      new Date(now.getTime() - REPLAY_WINDOW_MS).toISOString(),
      REMEMBERED_DELIVERIES,
    );
    if (!fresh) throw Errors.scmWebhookReplayed({ deliveryId: notice.deliveryId });
    if (notice.branch !== BRANCH) {
      return this.record(source, {
        via: 'webhook',
        commitSha: null,
        result: `a push to ${notice.branch}: only pushes to ${BRANCH} are built`,
      });
    }
    return this.coalesced(source.algorithmId, () => this.bringIn(source, 'webhook', notice.commitSha));
  }

  /**
   * Deliveries of one algorithm that arrive while its fetch runs share one more fetch after it
   * (which sees every push made until it starts): a burst of deliveries, genuine or resent
   * under new ids, costs at most two provider round trips at a time, not one each.
   */
  private coalesced(algorithmId: string, run: () => Promise<SyncResult>): Promise<SyncResult> {
    const queue = this.webhookRuns.get(algorithmId);
    if (queue?.next) return queue.next;
    const settle = (p: Promise<SyncResult>) =>
      p.then(
        () => undefined,
        () => undefined,
      );
    if (queue) {
      const next = settle(queue.running).then(run);
      queue.next = next;
      return next;
    }
    const entry: { running: Promise<SyncResult>; next?: Promise<SyncResult> } = { running: run() };
    this.webhookRuns.set(algorithmId, entry);
    const advance = (): void => {
      if (entry.next) {
        entry.running = entry.next;
        entry.next = undefined;
        void settle(entry.running).then(advance);
      } else {
        this.webhookRuns.delete(algorithmId);
      }
    };
    void settle(entry.running).then(advance);
    return entry.running;
  }

  /** "Sync now": builds the provider's main branch if it holds a commit not built here yet. */
  async sync(p: Principal, owner: string, name: string): Promise<SyncResult> {
    const view = await this.algorithms.forMember(p, owner, name, 'manage_algorithms');
    const source = await this.store.findSource(view.algorithm.id);
    if (!source) throw Errors.scmNotExternal({ owner, name });
    return this.bringIn(source, 'sync', undefined);
  }

  /**
   * compat §3 `GET …/scm/status`: `active` when the source is reachable (always, for the
   * internal SCM); for a provider: `unauthorized` when the token of the account that created the
   * algorithm no longer works, `repository_missing` when the repository is gone.
   */
  async connectionStatus(
    p: Principal,
    owner: string,
    name: string,
  ): Promise<{ status: 'active' | 'unauthorized' | 'repository_missing'; lastDelivery: SourceDelivery | null }> {
    const view = await this.algorithms.forMember(p, owner, name);
    const source = await this.store.findSource(view.algorithm.id);
    if (!source) return { status: 'active', lastDelivery: null };
    const config = await this.configs.require(source.configId);
    if (!source.accountId) return { status: 'unauthorized', lastDelivery: source.lastDelivery };
    const provider = this.configs.provider(config);
    const endpoint = await this.configs.endpoint(config);
    try {
      const exists = await this.authorizations.withToken(source.accountId, config, (token) =>
        provider.repositoryExists(endpoint, token, source.repositoryOwner, source.repositoryName),
      );
      return { status: exists ? 'active' : 'repository_missing', lastDelivery: source.lastDelivery };
    } catch (err) {
      if (err instanceof DomainError && err.is(Errors.scmNotAuthorized))
        return { status: 'unauthorized', lastDelivery: source.lastDelivery };
      throw err;
    }
  }

  /**
   * Fetches the provider's main into the algorithm's repository and queues the build of its tip.
   * `announced` (a webhook's commit id) is only reported next to what was found: it is never
   * fetched, built or compared with anything here.
   */
  private async bringIn(source: ExternalSource, via: SourceDelivery['via'], announced: string | undefined): Promise<SyncResult> {
    const config = await this.configs.require(source.configId);
    const view = await this.algorithms.byId(source.algorithmId);
    if (!view) throw Errors.scmSourceNotFound({ id: source.algorithmId });
    const { algorithm } = view;
    const note = (sha: string) =>
      announced && announced !== sha
        ? ` (the delivery named ${announced.slice(0, 12)}; ${BRANCH} at ${config.name} is ${sha.slice(0, 12)})`
        : '';
    try {
      if (!source.accountId) {
        throw Errors.scmNotAuthorized({ id: config.id, name: config.name, why: 'the account that created this algorithm is gone' });
      }
      const provider = this.configs.provider(config);
      const endpoint = await this.configs.endpoint(config);
      const fetched = await this.authorizations.withToken(source.accountId, config, async (token, username) => {
        // The provider's API says where the branch is: when that is built already, no fetch is needed.
        const tip = await provider.branchHead(endpoint, token, source.repositoryOwner, source.repositoryName, BRANCH);
        if (!tip) return undefined;
        if (tip === (await this.repositories.head(source.algorithmId))) return { sha: tip, moved: false };
        return this.mirror.fetchFrom(
          { algorithmId: algorithm.id, ownerId: algorithm.ownerId, ownerName: algorithm.ownerName, name: algorithm.name },
          source.httpsUrl,
          provider.gitCredentials(token, username),
          BRANCH,
        );
      });
      if (!fetched)
        return this.record(source, { via, commitSha: null, result: `${BRANCH} does not exist at ${config.name}: nothing to build` });
      if (!fetched.moved) {
        return this.record(source, {
          via,
          commitSha: fetched.sha,
          result: `up to date: ${fetched.sha.slice(0, 12)} is already here${note(fetched.sha)}`,
        });
      }
      const build = await this.builds.enqueue(view, fetched.sha, via === 'sync' ? 'sync' : 'push');
      const result = await this.record(source, {
        via,
        commitSha: fetched.sha,
        result: `build ${build.id} queued for ${fetched.sha.slice(0, 12)}${note(fetched.sha)}`,
      });
      return { ...result, build };
    } catch (err) {
      if (err instanceof DomainError) await this.record(source, { via, commitSha: null, result: `failed: ${err.message}` });
      throw err;
    }
  }

  private async record(source: ExternalSource, d: Omit<SourceDelivery, 'at'>): Promise<SyncResult> {
    await this.store.recordDelivery(source.algorithmId, { ...d, at: isoNow(this.clock) });
    return { commitSha: d.commitSha, result: d.result };
  }
}
