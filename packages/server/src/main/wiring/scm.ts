/** External SCM hosting: provider configurations, users' OAuth authorizations, mirrored sources and their sync. */
import type { AlgorithmService } from '../../domain/algorithm-objects/algorithm-service.js';
import type { BuildService } from '../../domain/builds/build-service.js';
import { AuthorizationService } from '../../domain/scm/authorization-service.js';
import { ScmConfigService } from '../../domain/scm/config-service.js';
import { ExternalSourceService } from '../../domain/scm/external-source-service.js';
import { SourceSyncService } from '../../domain/scm/source-sync-service.js';
import type { GitRepositoryHost } from '../../git/repository-host.js';
import { SCM_PROVIDER_ADAPTERS } from '../../scm/index.js';
import { SqlScmStore } from '../../storage/scm-store.js';
import type { Base } from './base.js';

export interface ScmSourcing {
  store: SqlScmStore;
  scmConfigs: ScmConfigService;
  scmAuthorizations: AuthorizationService;
  /** How an algorithm's source is hosted elsewhere and mirrored here. */
  externalSources: ExternalSourceService;
}

export function wireScmSourcing(base: Base, repositories: GitRepositoryHost): ScmSourcing {
  const { secrets, clock } = base;
  const { publicUrl } = base.node;
  const store = new SqlScmStore(base.db);
  const scmConfigs = new ScmConfigService({ store, providers: SCM_PROVIDER_ADAPTERS, secrets, clock, publicUrl });
  const scmAuthorizations = new AuthorizationService({
    store,
    configs: scmConfigs,
    accounts: base.accounts,
    secrets,
    clock,
    redirectUri: `${publicUrl}/v1/scms/oauth/callback`,
    log: base.log,
  });
  const externalSources = new ExternalSourceService({
    store,
    configs: scmConfigs,
    authorizations: scmAuthorizations,
    secrets,
    mirror: repositories,
    clock,
    publicUrl,
  });
  return { store, scmConfigs, scmAuthorizations, externalSources };
}

/** Webhooks and "sync now": fetch the external repository into the mirror and build what changed. */
export function wireScmSync(
  base: Base,
  scm: ScmSourcing,
  deps: { repositories: GitRepositoryHost; algorithms: AlgorithmService; builds: BuildService },
): SourceSyncService {
  return new SourceSyncService({
    store: scm.store,
    configs: scm.scmConfigs,
    authorizations: scm.scmAuthorizations,
    secrets: base.secrets,
    mirror: deps.repositories,
    repositories: deps.repositories,
    algorithms: deps.algorithms,
    builds: deps.builds,
    clock: base.clock,
  });
}
