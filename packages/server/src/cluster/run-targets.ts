/**
 * What a worker runs for a sync call, from the database: the message names only an algorithm id
 * and one of its builds' artifacts (cluster/dispatch.ts RunMessage), and everything that decides
 * how the call runs (the artifact being a succeeded build of that algorithm, its environment,
 * the algorithm's network access and pipeline setting, its owner) is read here, as the API node
 * read it when it resolved the call (domain/calls/call-service.ts). A message naming a build of
 * another algorithm, or settings the algorithm does not have, cannot make a runner of them.
 *
 * Targets are kept for a moment (the same TTL as the API node's resolutions): a warm call
 * reads nothing, a change of settings applies here within the TTL, and calls of one build share
 * one target object (the pool keys its runners by it).
 */
import type { AlgorithmStore } from '../domain/algorithms/ports.js';
import type { BuildStore } from '../domain/builds/ports.js';
import type { Catalog } from '../domain/catalog/catalog.js';
import type { RunTarget } from '../domain/calls/ports.js';
import { Errors } from '../domain/errors.js';
import type { VersionStore } from '../domain/versions/ports.js';
import { RefreshingCache } from '../lib/refreshing-cache.js';

export interface RunTargetDeps {
  algorithms: Pick<AlgorithmStore, 'findById'>;
  builds: Pick<BuildStore, 'findSucceededArtifact'>;
  versions: Pick<VersionStore, 'findByBuild'>;
  catalog: Pick<Catalog, 'environmentByName'>;
  ttlMs: number;
}

interface Key {
  algorithmId: string;
  artifact: string;
}

/** A target and whether a published version of its build reports to Insights (insights_enabled). */
interface Known {
  target: RunTarget;
  /** The same target with the API socket (pipeline), for calls that carry an Insights token. */
  withInsights: RunTarget | undefined;
}

export class RunTargets {
  private readonly cache: RefreshingCache<string, Known, Key>;

  constructor(private readonly deps: RunTargetDeps) {
    this.cache = new RefreshingCache({ max: 10_000, ttlMs: deps.ttlMs, load: (_key, k) => this.load(k) });
  }

  /**
   * The target of a call of `artifact`, which must be a succeeded build of the algorithm;
   * `insights`: the call carries an Insights token (the runner then reaches the API, as on the
   * API node, when a published version of this build has insights_enabled).
   */
  async get(algorithmId: string, artifact: string, insights: boolean): Promise<RunTarget> {
    const key = `${algorithmId}|${artifact}`;
    const known = this.cache.get(key) ?? (await this.cache.fetch(key, { algorithmId, artifact }));
    return (insights && known.withInsights) || known.target;
  }

  private async load({ algorithmId, artifact }: Key): Promise<Known> {
    const algorithm = await this.deps.algorithms.findById(algorithmId);
    const build = algorithm && (await this.deps.builds.findSucceededArtifact(algorithmId, artifact));
    // Not run: the API node resolved it from the same database, so only a message that did not
    // come from one names it (or the algorithm was deleted since).
    if (!algorithm || !build)
      throw Errors.unavailable('this worker finds no succeeded build of that algorithm with this artifact; call again');
    const environment = this.deps.catalog.environmentByName(build.environmentName);
    // A node of another release that knows an environment this one does not: refused, not run wrong.
    if (!environment) throw Errors.unavailable(`this worker does not know the environment ${build.environmentName}; call again`);
    const version = await this.deps.versions.findByBuild(algorithmId, build.id);
    const target: RunTarget = {
      algorithmId,
      artifact,
      algorithmName: algorithm.name,
      environment,
      network: algorithm.settings.networkAccess === 'full' ? 'internet' : 'none',
      pipeline: algorithm.settings.pipelineEnabled,
      owner: { id: algorithm.ownerId, name: algorithm.ownerName },
    };
    const withInsights = version?.insightsEnabled && !target.pipeline ? { ...target, pipeline: true } : undefined;
    return { target, withInsights };
  }
}
