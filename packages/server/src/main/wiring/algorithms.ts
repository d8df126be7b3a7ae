/** Algorithms and builds: the Git repositories, algorithms, their versions, source and builds. */
import path from 'node:path';
import { AlgorithmService } from '../../domain/algorithm-objects/algorithm-service.js';
import type { ExternalSourcing } from '../../domain/scm/ports.js';
import { SourceService } from '../../domain/algorithms/source-service.js';
import { BuildService } from '../../domain/builds/build-service.js';
import type { Builder } from '../../domain/builds/ports.js';
import { VersionService } from '../../domain/versions/version-service.js';
import { GitRepositoryHost } from '../../git/repository-host.js';
import { JobTrigger } from '../../jobs/job-runner.js';
import { FileBuildLogStore } from '../../storage/build-store.js';
import type { Base } from './base.js';
import { clusterBuilds } from './cluster.js';

export function wireRepositories(base: Base): GitRepositoryHost {
  const { config } = base;
  return new GitRepositoryHost(
    config.repositoryDir ?? path.join(config.dataDir, 'repositories'),
    config.gitBinary,
    {
      maxPushBytes: config.maxPushBytes,
      maxRepositoryBytes: config.maxRepositoryBytes,
      maxAccountBytes: config.maxAccountRepositoryBytes,
    },
    async (ownerId) => (await base.algorithmStore.listAllByOwner(ownerId)).map((a) => a.id),
    base.clock,
  );
}

export interface AlgorithmServices {
  algorithms: AlgorithmService;
  versions: VersionService;
  /** An algorithm's commits and README, read from its repository. */
  source: SourceService;
}

export function wireAlgorithms(base: Base, repositories: GitRepositoryHost, external: ExternalSourcing): AlgorithmServices {
  const { config, accounts, access, clock, changes } = base;
  const algorithms = new AlgorithmService({
    algorithms: base.algorithmStore,
    accounts,
    access,
    catalog: base.catalog,
    repositories,
    defaults: { environmentName: config.defaultEnvironment, networkAccess: config.defaultNetworkAccess },
    clock,
    status: { versions: base.versionStore, builds: base.buildStore },
    external,
    changes,
  });
  const versions = new VersionService({
    versions: base.versionStore,
    builds: base.buildStore,
    algorithms,
    accounts,
    access,
    repositories,
    clock,
    changes,
  });
  return { algorithms, versions, source: new SourceService({ algorithms, repositories }) };
}

export interface BuildServices {
  builds: BuildService;
  /** Wakes the `build.schedule` job when a build is queued. */
  buildQueue: JobTrigger;
}

export function wireBuilds(
  base: Base,
  deps: { algorithms: AlgorithmService; repositories: GitRepositoryHost; builder: Builder },
): BuildServices {
  const { config } = base;
  const buildQueue = new JobTrigger();
  const builds = new BuildService({
    builds: base.buildStore,
    logs: new FileBuildLogStore(config.buildLogDir ?? path.join(config.dataDir, 'builds', 'logs')),
    algorithms: deps.algorithms,
    repositories: deps.repositories,
    builder: deps.builder,
    settings: {
      concurrency: config.buildConcurrency,
      perAccount: config.buildsPerAccount,
      timeoutMs: config.buildTimeoutSeconds * 1000,
      publicUrl: base.node.publicUrl,
    },
    clock: base.clock,
    queue: buildQueue,
    ...clusterBuilds(base),
    log: base.log,
  });
  return { builds, buildQueue };
}
