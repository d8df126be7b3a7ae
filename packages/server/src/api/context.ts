import type { FastifyBaseLogger, FastifyInstance, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AlgorithmService } from '../domain/algorithm-objects/algorithm-service.js';
import type { SourceService } from '../domain/algorithms/source-service.js';
import type { ClusterStatusService } from '../domain/cluster/status-service.js';
import type { AuditService } from '../domain/audit/audit-service.js';
import type { KeyService } from '../domain/accounts/key-service.js';
import type { OrganizationService } from '../domain/accounts/organization-service.js';
import type { UserService } from '../domain/accounts/user-service.js';
import type { Catalog } from '../domain/catalog/catalog.js';
import type { BuildService } from '../domain/builds/build-service.js';
import type { CallService } from '../domain/calls/call-service.js';
import type { AsyncCallService } from '../domain/calls/async-calls.js';
import type { DataService } from '../domain/data/data-service.js';
import type { EventServices } from '../domain/events/event-services.js';
import type { InsightsService } from '../domain/insights/insights-service.js';
import type { VersionService } from '../domain/versions/version-service.js';
import type { ScmConfigService } from '../domain/scm/config-service.js';
import type { AuthorizationService } from '../domain/scm/authorization-service.js';
import type { SourceSyncService } from '../domain/scm/source-sync-service.js';
import type { Links } from './presenters.js';

/** What the HTTP layer needs from the domain; built by the composition root. */
export interface ApiServices {
  users: UserService;
  organizations: OrganizationService;
  keys: KeyService;
  algorithms: AlgorithmService;
  /** An algorithm's commits and README, read from its repository. */
  source: SourceService;
  /** The admin status of this node and cluster. */
  cluster: ClusterStatusService;
  /** The log of administrative and security-relevant actions (api/audit.ts records them). */
  audit: AuditService;
  catalog: Catalog;
  builds: BuildService;
  versions: VersionService;
  calls: CallService;
  asyncCalls: AsyncCallService;
  data: DataService;
  events: EventServices;
  /** External SCM configurations (admins manage them). */
  scmConfigs: ScmConfigService;
  /** Each user's OAuth authorization of a configuration. */
  scmAuthorizations: AuthorizationService;
  /** Webhooks and "sync now" of externally hosted algorithms. */
  scmSources: SourceSyncService;
  insights: InsightsService;
  /** Prometheus text for /metrics. */
  metrics: () => Promise<string>;
  links: Links;
}

export type Api = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

/** Absolute URL of the current request, for next_link. */
export const requestUrl = (links: Links, url: string) => `${links.publicUrl}${url}`;
