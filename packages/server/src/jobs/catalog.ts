/**
 * The node's background work, declared in one place: what each job does, when it runs and how
 * it stops. `main/server.ts` hands this list to a `JobRunner` once the stores are ready, which
 * starts the jobs in this order and stops them in the reverse order before the database
 * closes. In cluster mode (`cluster` set) the list depends on the node's role: workers take
 * builds and async calls from NATS (`cluster.worker`) instead of the `build.schedule` job, every
 * node runs `events.flows` (workers run the subscriber flows, API nodes only reload the publisher
 * table: FlowWorkers' `subscribers`), and the sweeps run on one node of the cluster at a time,
 * the holder of their lease in the database.
 */
import type { AuditService } from '../domain/audit/audit-service.js';
import type { BuildService } from '../domain/builds/build-service.js';
import type { AsyncCallService } from '../domain/calls/async-calls.js';
import type { DataService } from '../domain/data/data-service.js';
import type { EventServices } from '../domain/events/event-services.js';
import type { Job, JobTrigger } from './job-runner.js';

/** Expired async results are deleted this often (they are already unreadable once expired). */
const ASYNC_SWEEP_MS = 5 * 60 * 1000;
/**
 * Idle runners are looked at every 10 s, or every idle time when that is shorter, but at most
 * once a second (an idle time of 0 stops runners within a second, without a busy loop).
 */
const runnerSweepMs = (idleMs: number) => Math.max(1000, Math.min(10_000, idleMs));

/** How often running flows are checked against the database besides on every change (failed consumers restart). */
const FLOWS_RECONCILE_MS = 5000;
/** Delivery records older than the retention are deleted this often. */
const DELIVERY_SWEEP_MS = 60 * 60 * 1000;
/** Audit entries past their retention (and anonymous ones past their cap) are deleted this often. */
const AUDIT_SWEEP_MS = 60 * 60 * 1000;
/** Aggregated sign-in entries show their attempts at most this late. */
const AUDIT_COUNTS_MS = 5000;

/** What the flows job needs of the flow workers (events/flow-workers.ts; main passes them). */
interface FlowRunner {
  reconcile(): Promise<void>;
  stop(): Promise<void>;
}

/** What the idle sweep needs of the runner pool (jobs/ sees only the domain; main passes the pool). */
interface IdleRunners {
  sweep(): void;
}

/** What the cgroup sweep needs of the sandbox supervisor (runtime/sandbox/supervisor.ts; main passes it). */
interface SandboxGroups {
  sweepStaleGroups(olderThanMs: number): Promise<number>;
}

/**
 * Sandboxes' cgroups left behind (by a node that was killed, or a removal that gave up while a
 * process tree took long to die) are looked for at start and this often.
 */
const CGROUP_SWEEP_MS = 10 * 60 * 1000;
/**
 * Only groups older than this go: a group is made a moment before its process moves in, and
 * another node on the same host may be making one (they share the host's cgroup tree).
 */
const CGROUP_STALE_MS = 60 * 1000;

/** What the `cluster.worker` job runs (cluster/worker.ts; main passes it). */
interface WorkerLoop {
  start(): Promise<void>;
  announce(): Promise<void>;
  stop(): Promise<void>;
}

/** A node of a cluster: its role, the lease that keeps sweeps to one node, its worker loop. */
export interface ClusterJobs {
  role: 'all' | 'api' | 'worker';
  /** Takes or renews the lease of a job for `ttlMs`: true while this node holds it. */
  lease(name: string, ttlMs: number): Promise<boolean>;
  /** Gives a lease up (this node stops), so another node takes the job at once. */
  release(name: string): Promise<void>;
  /** Set on nodes that run work (roles worker and all). */
  worker?: WorkerLoop;
}

/** Workers renew their presence entry (and their sync-call routes) this often. */
const WORKER_ANNOUNCE_MS = 5000;

export interface JobServices {
  builds: BuildService;
  /** The trigger the build service was given as its queue signal. */
  buildQueue: JobTrigger;
  data: DataService;
  asyncCalls: AsyncCallService;
  runners: IdleRunners;
  sandboxes: SandboxGroups;
  events: EventServices;
  audit: AuditService;
  flows: FlowRunner;
  /** Woken when an event flow is added, changed or removed. */
  flowChanges: JobTrigger;
  /** Cluster mode; unset on a node that does everything itself (the embedded default). */
  cluster?: ClusterJobs;
}

export interface JobSettings {
  /** Between data sweeps; 0 = none (ALGOHOST_DATA_SWEEP_INTERVAL). */
  dataSweepMs: number;
  /** How long a runner may stay idle (ALGOHOST_RUNNER_IDLE). */
  runnerIdleMs: number;
  /** How long delivery records are kept (ALGOHOST_EVENT_DELIVERY_RETENTION). */
  deliveryRetentionMs: number;
  /** How long audit log entries are kept; 0 = no age limit (ALGOHOST_AUDIT_RETENTION). */
  auditRetentionMs: number;
}

export function jobCatalog(s: JobServices, settings: JobSettings): Job[] {
  const all = embeddedJobs(s, settings);
  const c = s.cluster;
  if (!c) return all;
  const byName = new Map(all.map((j) => [j.name, j]));
  const once = (name: string): Job => onePerCluster(byName.get(name)!, c);
  const jobs: Job[] = [];
  if (c.worker) {
    const worker = c.worker;
    jobs.push({
      name: 'cluster.worker',
      kind: 'interval',
      description: 'takes builds and async calls from NATS, answers sync calls, announces this worker',
      everyMs: WORKER_ANNOUNCE_MS,
      prepare: () => worker.start(),
      run: () => worker.announce(),
      // Builds in progress are cancelled and go back to NATS for another worker.
      stop: () => worker.stop(),
    });
  }
  // Results a stopped worker left are completed by redelivery, not here: only expiry remains.
  const asyncSweep = byName.get('calls.async-sweep')!;
  jobs.push(
    once('data.sweep'),
    onePerCluster({ ...asyncSweep, prepare: undefined }, c),
    byName.get('runners.idle-sweep')!,
    // Every node: each host has its own cgroup tree (an API node, which runs no sandbox, has none).
    byName.get('sandbox.cgroup-sweep')!,
    byName.get('events.flows')!,
    // Every node: each counts the sign-ins it answered.
    byName.get('audit.sign-in-counts')!,
  );
  jobs.push(once('events.delivery-sweep'), once('audit.sweep'));
  return jobs;
}

/**
 * An interval job that runs on the lease holder only: each run first takes or renews the lease
 * (for two periods and a minute, so a holder that stops answering is replaced within that).
 */
function onePerCluster(job: Job, c: ClusterJobs): Job {
  const ttlMs = Math.max(0, job.everyMs ?? 0) * 2 + 60_000;
  return {
    ...job,
    run: async (signal) => {
      if (await c.lease(job.name, ttlMs)) return job.run(signal);
    },
    stop: async () => {
      await job.stop?.();
      await c.release(job.name);
    },
  };
}

function embeddedJobs(s: JobServices, settings: JobSettings): Job[] {
  return [
    {
      name: 'build.schedule',
      kind: 'queue',
      description: 'starts queued builds in push order, fairly across accounts, up to the concurrency',
      trigger: s.buildQueue,
      // Builds a previous process left in progress go back to the queue (or fail on the second time).
      prepare: () => s.builds.recoverInterrupted(),
      run: () => s.builds.startQueued(),
      // Running builds are cancelled, awaited and requeued for the next start.
      stop: () => s.builds.stop(),
    },
    {
      name: 'data.sweep',
      kind: 'interval',
      description: 'expires temp files, ended sessions and deleted algorithms’ data; hourly, unreferenced blobs',
      everyMs: settings.dataSweepMs,
      run: (signal) => s.data.sweep({ signal }),
    },
    {
      name: 'calls.async-sweep',
      kind: 'interval',
      description: 'deletes async call results past their expiry',
      everyMs: ASYNC_SWEEP_MS,
      // Calls a previous process left running are completed as SystemExit.
      prepare: () => s.asyncCalls.recoverInterrupted(),
      run: () => s.asyncCalls.deleteExpired(),
    },
    {
      name: 'runners.idle-sweep',
      kind: 'interval',
      description: 'stops runners idle past the idle time',
      everyMs: runnerSweepMs(settings.runnerIdleMs),
      run: async () => s.runners.sweep(),
    },
    {
      name: 'sandbox.cgroup-sweep',
      kind: 'interval',
      description: 'removes the cgroups of sandboxes that are gone (left by a killed node or a removal that gave up)',
      everyMs: CGROUP_SWEEP_MS,
      prepare: async () => void (await s.sandboxes.sweepStaleGroups(CGROUP_STALE_MS)),
      run: () => s.sandboxes.sweepStaleGroups(CGROUP_STALE_MS),
    },
    {
      name: 'events.flows',
      kind: 'queue',
      description: 'runs the enabled subscriber flows (Kafka consumers, SQS pollers) and reloads the publisher table',
      trigger: s.flowChanges,
      everyMs: FLOWS_RECONCILE_MS,
      run: () => s.flows.reconcile(),
      // Consumers finish the record in delivery (uncommitted ones are delivered again after a restart).
      stop: () => s.flows.stop(),
    },
    {
      name: 'events.delivery-sweep',
      kind: 'interval',
      description: 'deletes event delivery records past their retention',
      everyMs: DELIVERY_SWEEP_MS,
      run: () => s.events.workers.deleteOldDeliveries(settings.deliveryRetentionMs),
    },
    {
      name: 'audit.sweep',
      kind: 'interval',
      description: 'deletes audit log entries past their retention, and entries of no account past the newest 100,000',
      everyMs: AUDIT_SWEEP_MS,
      run: () => s.audit.sweep(settings.auditRetentionMs),
    },
    {
      name: 'audit.sign-in-counts',
      kind: 'interval',
      description: "writes the attempt counts of this node's aggregated sign-in entries (and the last ones when it stops)",
      everyMs: AUDIT_COUNTS_MS,
      run: () => s.audit.flushSignIns(),
      stop: () => s.audit.flushSignIns(),
    },
  ];
}
