/**
 * The sandboxes of this node: the egress proxies, the supervisor, the builder, the runners and
 * their pool. An API node makes them too (its pool stays empty) but leaves the host's cgroups alone.
 */
import path from 'node:path';
import type { BlobArtifactStore } from '../../cluster/artifact-store.js';
import type { BlobStore } from '../../domain/data/ports.js';
import { SandboxBuilder } from '../../runtime/build/sandbox-builder.js';
import { LANGUAGE_ADAPTERS } from '../../runtime/languages/index.js';
import { RunnerFactory } from '../../runtime/runner/runner-factory.js';
import { RunnerPool } from '../../runtime/runner/runner-pool.js';
import type { CgroupReport } from '../../runtime/sandbox/cgroups.js';
import { EgressProxy } from '../../runtime/sandbox/egress-proxy.js';
import { Supervisor } from '../../runtime/sandbox/supervisor.js';
import { parseUidRange } from '../../runtime/sandbox/uids.js';
import type { WorkerLog } from '../../events/delivery-policy.js';
import { nodeServiceEndpoints } from '../settings.js';
import type { Base } from './base.js';
import { clusterArtifacts } from './cluster.js';

export interface Sandboxes {
  /** Build steps reach the registries (and the operator's extra hosts) through this proxy only. */
  egress: EgressProxy;
  /** Full-network runners' egress proxy (public addresses only). */
  runnerEgress: EgressProxy;
  supervisor: Supervisor;
  builder: SandboxBuilder;
  /** Cluster mode: where artifacts built on any worker are kept. */
  artifacts?: BlobArtifactStore;
  runners: RunnerFactory;
  pool: RunnerPool;
}

export function wireSandboxes(base: Base, blobs: BlobStore): Sandboxes {
  const { config, checked } = base;
  const egress = new EgressProxy({ dir: path.join(config.dataDir, 'egress'), allow: checked.egress });
  // Full-network runners' only way out: public addresses (and the operator's named private
  // hosts), never the node's own services, whatever address they are at.
  const runnerEgress = new EgressProxy({
    dir: path.join(config.dataDir, 'egress-runners'),
    allow: checked.runnerEgress,
    policy: 'internet',
    services: nodeServiceEndpoints(config),
  });
  const supervisor = wireSupervisor(base);
  const builder = new SandboxBuilder(supervisor, LANGUAGE_ADAPTERS, {
    root: path.join(config.dataDir, 'builds'),
    clock: base.clock,
    cacheDir: config.buildCacheDir && path.resolve(config.buildCacheDir),
    sharedCache: config.buildCacheShared,
    memoryBytes: config.buildMemoryMiB * 1024 * 1024,
    git: config.gitBinary,
    maxArtifactBytes: config.maxArtifactBytes,
    registries: checked.registries,
    egress,
  });
  const artifacts = clusterArtifacts(base, blobs, builder);
  const runners = new RunnerFactory(
    supervisor,
    builder,
    {
      memoryBytes: config.runnerMemoryMiB * 1024 * 1024,
      memoryBytesByEnvironment: checked.environmentMemory,
      pids: config.runnerPids,
      cpus: config.runnerCpus > 0 ? config.runnerCpus : undefined,
      outputLimitBytes: 15 * 1000 * 1000,
      startTimeoutMs: 10 * 60 * 1000,
    },
    runnerEgress,
    artifacts && ((key) => artifacts.ensure(key)),
    base.node.apiSockets,
  );
  const pool = wirePool(base, runners);
  // The pool's runners fetch through the store; the store keeps what they run.
  artifacts?.keepWarm(pool);
  return { egress, runnerEgress, supervisor, builder, ...(artifacts ? { artifacts } : {}), runners, pool };
}

/** Only nodes that run work touch the host's cgroups. */
function wireSupervisor(base: Base): Supervisor {
  const { config, role } = base;
  return new Supervisor({
    maxOpenFiles: Math.max(16, config.sandboxOpenFiles),
    cgroups: role.runsWork ? {} : false,
    requireCgroups: config.requireCgroups,
    uidRange: parseUidRange(config.sandboxUidRange),
  });
}

/**
 * The sandboxes' effects on the host, before the node serves: the proxies' and the builder's
 * directories, and the cgroups (on cgroup v2 this moves this process into a leaf group:
 * runtime/sandbox/cgroups.ts).
 */
export function startSandboxes(base: Base, s: Sandboxes): void {
  s.egress.prepare();
  s.runnerEgress.prepare();
  s.supervisor.prepare();
  if (base.role.runsWork) logCgroups(base.log, s.supervisor.cgroupReport, base.config.requireCgroups);
  s.builder.prepare();
  s.runners.prepare();
}

function wirePool(base: Base, runners: RunnerFactory): RunnerPool {
  const { config, checked } = base;
  return new RunnerPool(runners, {
    maxPerArtifact: config.runnersPerAlgorithm,
    maxTotal: config.maxRunners,
    idleMs: config.runnerIdleSeconds * 1000,
    maxPerAccount: config.runnersPerAccount,
    memoryPerAccount: config.runnerMemoryPerAccountMiB * 1024 * 1024,
    memoryBudget: config.runnerMemoryBudgetMiB * 1024 * 1024,
    memoryOf: (environment) => checked.environmentMemory.get(environment) ?? config.runnerMemoryMiB * 1024 * 1024,
    log: base.log,
  });
}

/** One start-up line saying which sandbox limits hold; a warning naming what is missing when not all do. */
function logCgroups(log: WorkerLog, report: CgroupReport, required: boolean): void {
  const holding = (['memory', 'pids', 'cpu'] as const).filter((c) => report.limits[c]);
  const facts = { cgroupVersion: report.version, limits: holding, changes: report.actions };
  if (!report.problem) {
    log.info(facts, `sandbox limits: memory, pids and cpu hold (cgroup v${report.version})`);
    return;
  }
  const safe = report.limits.memory && report.limits.pids;
  const consequence = safe
    ? 'sandboxes run with them'
    : required
      ? 'builds and runners are refused until they do (ALGOHOST_REQUIRE_CGROUPS=false runs them without)'
      : 'builds and runners run WITHOUT memory or pids limits (ALGOHOST_REQUIRE_CGROUPS=false)';
  log.warn(
    { ...facts, problem: report.problem },
    `sandbox limits: only ${holding.join(', ') || 'none'} of memory, pids and cpu hold; ${consequence}. ${report.problem}`,
  );
}
