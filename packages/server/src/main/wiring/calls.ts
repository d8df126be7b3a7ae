/** Calls: sync calls (here or on a worker, as the role says), async calls, and what a worker runs for a sync call. */
import { RunTargets } from '../../cluster/run-targets.js';
import { natsAsyncDispatch } from '../../cluster/dispatch.js';
import type { KeyService } from '../../domain/accounts/key-service.js';
import { AsyncCallService } from '../../domain/calls/async-calls.js';
import { CallService } from '../../domain/calls/call-service.js';
import type { FlowPublisher } from '../../domain/events/publishing.js';
import type { InsightsService } from '../../domain/insights/insights-service.js';
import type { VersionService } from '../../domain/versions/version-service.js';
import type { RunnerPool } from '../../runtime/runner/runner-pool.js';
import { SqlAsyncRequestStore } from '../../storage/async-request-store.js';
import type { NodeMetrics } from '../metrics.js';
import type { Base } from './base.js';

export interface CallDeps {
  keys: KeyService;
  versions: VersionService;
  pool: RunnerPool;
  metrics: NodeMetrics;
  publisher: FlowPublisher;
  insights: InsightsService;
}

export function wireCalls(base: Base, deps: CallDeps): CallService {
  const { keys, metrics } = deps;
  const placement = base.role.placeCalls({ runtime: deps.pool, gpuAvailable: () => base.gpu }, base.cluster, (secret) =>
    keys.callKeyPrincipal(secret),
  );
  const calls = new CallService({
    accounts: base.accounts,
    algorithms: base.algorithmStore,
    versions: deps.versions,
    access: base.access,
    catalog: base.catalog,
    runtime: metrics.timedRuntime(placement.runtime),
    keys,
    settings: {
      maxInFlightPerAccount: base.config.maxCallsPerAccount,
      gpuAvailable: placement.gpuAvailable,
    },
    onSucceeded: (call) => deps.publisher.succeeded(call),
    insights: deps.insights,
    log: base.log,
    resolutionTtlMs: base.cacheTtlMs,
  });
  // What a call resolves to (callability, `latest`, who may call a private algorithm) changes
  // with these: the next call resolves again.
  base.changes.on('algorithm_changed', () => calls.forgetResolutions());
  base.changes.on('version_published', () => calls.forgetResolutions());
  base.changes.on('membership_changed', () => calls.forgetResolutions());
  return calls;
}

export function wireAsyncCalls(base: Base, calls: CallService): AsyncCallService {
  return new AsyncCallService({
    calls,
    store: new SqlAsyncRequestStore(base.db),
    clock: base.clock,
    log: base.log,
    ...(base.cluster ? { dispatch: natsAsyncDispatch(base.cluster.nats), accounts: base.accounts } : {}),
  });
}

/** What a worker runs for a sync call, read from the database (cluster/run-targets.ts). */
export function wireRunTargets(base: Base): RunTargets {
  return new RunTargets({
    algorithms: base.algorithmStore,
    builds: base.buildStore,
    versions: base.versionStore,
    catalog: base.catalog,
    ttlMs: base.cacheTtlMs ?? 2000,
  });
}
