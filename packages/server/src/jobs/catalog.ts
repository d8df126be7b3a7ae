/**
 * The node's background work, declared in one place: what each job does, when it runs and how
 * it stops. `main/server.ts` hands this list to a `JobRunner` once the stores are ready, which
 * starts the jobs in this order and stops them in the reverse order before the database
 * closes. Cluster mode will move jobs onto workers here.
 */
import type { BuildService } from '../domain/builds/build-service.js';
import type { AsyncCallService } from '../domain/calls/async-calls.js';
import type { DataService } from '../domain/data/data-service.js';
import type { EventService } from '../domain/events/event-service.js';
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

/** What the flows job needs of the flow workers (events/flow-workers.ts; main passes them). */
interface FlowRunner {
  reconcile(): Promise<void>;
  stop(): Promise<void>;
}

/** What the idle sweep needs of the runner pool (jobs/ sees only the domain; main passes the pool). */
interface IdleRunners {
  sweep(): void;
}

export interface JobServices {
  builds: BuildService;
  /** The trigger the build service was given as its queue signal. */
  buildQueue: JobTrigger;
  data: DataService;
  asyncCalls: AsyncCallService;
  runners: IdleRunners;
  events: EventService;
  flows: FlowRunner;
  /** Woken when an event flow is added, changed or removed. */
  flowChanges: JobTrigger;
}

export interface JobSettings {
  /** Between data sweeps; 0 = none (ALGOHOST_DATA_SWEEP_INTERVAL). */
  dataSweepMs: number;
  /** How long a runner may stay idle (ALGOHOST_RUNNER_IDLE). */
  runnerIdleMs: number;
  /** How long delivery records are kept (ALGOHOST_EVENT_DELIVERY_RETENTION). */
  deliveryRetentionMs: number;
}

export function jobCatalog(s: JobServices, settings: JobSettings): Job[] {
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
      run: () => s.events.deleteOldDeliveries(settings.deliveryRetentionMs),
    },
  ];
}
