/**
 * The node's Prometheus metrics (GET /metrics), kept by prom-client in a registry of this
 * server's own (tests start several servers in one process). The runner pool's counters are
 * read when scraped; the latency histograms are fed by decorators around the call runtime and
 * the builder, so the domain services stay unaware of them.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Builder } from '../domain/builds/ports.js';
import type { AlgorithmRuntime } from '../domain/calls/ports.js';
import type { PoolStats } from '../runtime/runner/pool-records.js';
import { RecentCount } from '../lib/recent-count.js';
import type { ConsumerStatus, DeliveryOutcome, EventFlow } from '../domain/events/model.js';

/** Seconds, from a sub-millisecond warm call to a call at the longest timeout. */
const CALL_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 3000];
/** Seconds, from a fast interpreter start to a slow JVM start. */
const COLD_START_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 600];
/** Seconds, from a cached build to one at the longest build timeout. */
const BUILD_BUCKETS = [1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1200, 1800, 3600];
/** Seconds from a record's first call to its outcome (retries and waits for runners included). */
const DELIVERY_BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 60, 300, 3000];

/** The running flows' consumers, read at scrape time for the lag and state gauges. */
interface FlowStatuses {
  statuses(): { flow: EventFlow; status: ConsumerStatus }[];
}

export class NodeMetrics {
  private readonly registry = new Registry();
  private readonly callDuration: Histogram<'outcome'>;
  private readonly coldStart: Histogram;
  /** The call histogram's two series, resolved once rather than by label object on every call. */
  private readonly callsOk: { observe(seconds: number): void };
  private readonly callsFailed: { observe(seconds: number): void };
  private readonly buildDuration: Histogram<'outcome'>;
  /** Calls handed to the runtime in the last minute, for the admin status. */
  private readonly recentCalls: RecentCount;
  private readonly deliveries: Histogram<'flow' | 'outcome'>;
  private readonly published: Counter<'flow' | 'outcome'>;

  /** `pool`: whose counters are read when scraped; `flows`: the subscriber flows running here, read when scraped. */
  constructor(opts: { pool: { readonly stats: PoolStats; warmRunners(): number }; flows?: FlowStatuses; now?: () => number }) {
    const { pool } = opts;
    this.recentCalls = new RecentCount(60, opts.now ?? Date.now);
    const registers = [this.registry];
    // A counter whose value is the pool's running total, read at scrape time.
    const total = (name: string, help: string, read: (s: PoolStats) => number) =>
      new Counter({
        name,
        help,
        registers,
        collect() {
          this.reset();
          this.inc(read(pool.stats));
        },
      });
    total('algohost_calls_total', 'Algorithm calls served by runners on this node.', (s) => s.calls);
    total('algohost_warm_calls_total', 'Calls served by a runner that was already warm.', (s) => s.warmCalls);
    total('algohost_call_queue_seconds_total', 'Time calls waited for a free runner.', (s) => s.queueSeconds);
    total('algohost_call_start_seconds_total', 'Time calls waited for a runner to start (cold starts).', (s) => s.startSeconds);
    total('algohost_call_run_seconds_total', 'Time runners spent answering calls.', (s) => s.runSeconds);
    total('algohost_cold_starts_total', 'Runners started (a call that had to wait for a new runner).', (s) => s.coldStarts);
    new Counter({
      name: 'algohost_runner_failures_total',
      help: 'Calls that failed in the runner, by error type.',
      labelNames: ['error_type'],
      registers,
      collect() {
        this.reset();
        for (const [type, n] of Object.entries(pool.stats.failures)) this.inc({ error_type: type }, n);
      },
    });
    new Gauge({
      name: 'algohost_runners',
      help: 'Started runners on this node, idle or busy.',
      registers,
      collect() {
        this.set(pool.warmRunners());
      },
    });
    this.callDuration = new Histogram({
      name: 'algohost_call_duration_seconds',
      help: 'Time from handing a call to the runner pool to its answer, queue and cold start included; outcome is ok or failed (the runner, not the algorithm, failed).',
      labelNames: ['outcome'],
      buckets: CALL_BUCKETS,
      registers,
    });
    this.callsOk = this.callDuration.labels('ok');
    this.callsFailed = this.callDuration.labels('failed');
    this.coldStart = new Histogram({
      name: 'algohost_cold_start_seconds',
      help: 'Time a call waited for a new runner to start.',
      buckets: COLD_START_BUCKETS,
      registers,
    });
    this.buildDuration = new Histogram({
      name: 'algohost_build_duration_seconds',
      help: 'Time a build step ran in the sandbox; outcome is succeeded or failed.',
      labelNames: ['outcome'],
      buckets: BUILD_BUCKETS,
      registers,
    });
    this.deliveries = new Histogram({
      name: 'algohost_event_delivery_seconds',
      help: 'Event Flow deliveries (a record or message to its outcome: succeeded, failed, dead_lettered, returned), by flow.',
      labelNames: ['flow', 'outcome'],
      buckets: DELIVERY_BUCKETS,
      registers,
    });
    this.published = new Counter({
      name: 'algohost_event_published_total',
      help: 'Results sent by publisher flows (outcome ok, or failed when the cluster did not take them), by flow.',
      labelNames: ['flow', 'outcome'],
      registers,
    });
    // Lag and pausing are a subscriber's: a publisher reads nothing.
    const flows = () => (opts.flows?.statuses() ?? []).filter(({ flow }) => flow.role === 'subscriber');
    new Gauge({
      name: 'algohost_event_flow_lag',
      help: 'Records (Kafka) or messages (SQS, approximate) waiting for a subscriber flow running on this node.',
      labelNames: ['flow'],
      registers,
      collect() {
        this.reset();
        for (const { flow, status } of flows()) if (status.lag !== null) this.set({ flow: flow.id }, status.lag);
      },
    });
    new Gauge({
      name: 'algohost_event_flow_paused',
      help: '1 while a subscriber flow on this node is paused because its algorithm is saturated, 0 otherwise.',
      labelNames: ['flow'],
      registers,
      collect() {
        this.reset();
        for (const { flow, status } of flows()) this.set({ flow: flow.id }, status.state === 'paused' ? 1 : 0);
      },
    });
  }

  flowDelivered(flowId: string, outcome: DeliveryOutcome, latencyMs: number): void {
    this.deliveries.observe({ flow: flowId, outcome }, latencyMs / 1000);
  }

  flowPublished(flowId: string, ok: boolean): void {
    this.published.inc({ flow: flowId, outcome: ok ? 'ok' : 'failed' });
  }

  /** The Prometheus text exposition of every metric. */
  render(): Promise<string> {
    return this.registry.metrics();
  }

  /** Calls handed to the runtime in the last 60 seconds. */
  callsInLastMinute(): number {
    return this.recentCalls.total();
  }

  /** The runtime, timing each call. Returns the runtime's own promise: no extra turn per call. */
  timedRuntime(inner: AlgorithmRuntime): AlgorithmRuntime {
    return {
      execute: (target, request, timeoutMs, call) => {
        this.recentCalls.record();
        const t0 = performance.now();
        const execution = inner.execute(target, request, timeoutMs, call);
        execution.then(
          (e) => {
            this.callsOk.observe((performance.now() - t0) / 1000);
            if (e.cold) this.coldStart.observe(e.startMs / 1000);
          },
          () => this.callsFailed.observe((performance.now() - t0) / 1000),
        );
        return execution;
      },
    };
  }

  /** The builder, timing each build. */
  timedBuilder(inner: Builder): Builder {
    return {
      build: async (req, log, signal) => {
        const t0 = performance.now();
        let outcome = 'failed';
        try {
          const result = await inner.build(req, log, signal);
          outcome = 'succeeded';
          return result;
        } finally {
          this.buildDuration.observe({ outcome }, (performance.now() - t0) / 1000);
        }
      },
    };
  }
}
