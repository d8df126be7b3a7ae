/**
 * Runs the enabled subscriber flows of the cluster on this node: one Kafka consumer, SQS poller
 * or Service Bus receiver per flow. `reconcile` (the `events.flows` job: at start, whenever flows change, and
 * every few seconds) starts what is enabled and not running, restarts what failed, and stops
 * what was disabled, changed or removed. Publisher flows need no worker: the call path reports
 * successful calls to the FlowPublisher, whose table is reloaded here too.
 *
 * In a cluster every worker runs every subscriber flow (a Kafka consumer group member, an SQS
 * poller, a Service Bus receiver each), and its deliveries call the algorithm on that worker.
 * Durability is the broker's: an outcome is recorded before the offset is committed or the
 * message deleted, so the records and messages of a worker that dies go to the other workers
 * (a group rebalance; the visibility timeout or lock expiring) and are delivered again there.
 * API nodes run none; they only keep the publisher table.
 */
import type { EventFlow } from '../domain/events/model.js';
import { parseQueueUrl, parseServiceBusUri } from '../domain/events/flow-input.js';
import type { EventServices } from '../domain/events/event-services.js';
import type { EventSettings } from '../domain/events/flow-service.js';
import type { FlowDeliveries } from '../domain/events/deliveries.js';
import type { FlowPublisher, RecordSink } from '../domain/events/publishing.js';
import { KafkaSubscriber } from './kafka/subscriber.js';
import type { RetryPolicy, WorkerLog } from './delivery-policy.js';
import type { RunningFlows, Subscriber } from './running-flows.js';
import { SqsSubscriber } from './sqs/subscriber.js';
import { ServiceBusSubscriber } from './servicebus/subscriber.js';

export interface FlowWorkersDeps {
  events: EventServices;
  /** Where the consumers this node runs are kept, and read by whoever reports on them. */
  running: RunningFlows;
  deliveries: FlowDeliveries;
  publisher: FlowPublisher;
  sink: RecordSink;
  retry: RetryPolicy;
  /** Queue (SQS, Service Bus) deliveries at once per flow (the algorithm's runners, ALGOHOST_RUNNERS_PER_ALGORITHM). */
  sqsConcurrency: number;
  sqsDefaultRegion: string;
  /** The STS endpoint SQS flows assume their roles at (ALGOHOST_SQS_STS_ENDPOINT); unset = AWS's for the queue's region. */
  sqsStsEndpoint?: string;
  /**
   * The queue hosts the operator allows now (ALGOHOST_SQS_ENDPOINT_ALLOW,
   * ALGOHOST_SERVICEBUS_ENDPOINT_ALLOW): a flow stored while its host was allowed is not polled
   * once the operator stops allowing it.
   */
  endpointAllow: EventSettings;
  /** Whether this node runs the subscriber flows (false on a cluster's API nodes: the workers do). */
  subscribers: boolean;
  log: WorkerLog;
}

export class FlowWorkers {
  private readonly running: RunningFlows;
  private stopped = false;

  constructor(private readonly deps: FlowWorkersDeps) {
    this.running = deps.running;
  }

  async reconcile(): Promise<void> {
    if (this.stopped) return;
    const enabled = await this.deps.events.workers.enabledFlows();
    this.deps.publisher.load(enabled);
    if (!this.deps.subscribers) return;
    const wanted = new Map(enabled.filter((f) => f.role === 'subscriber' && f.version).map((f) => [f.id, f]));
    for (const [id, sub] of this.running.entries()) {
      const flow = wanted.get(id);
      if (!flow || sub.failed || changed(sub.flow, flow)) {
        this.running.remove(id);
        await sub.stop().catch((err: unknown) => this.deps.log.warn({ err, flow: id }, `flow ${id} did not stop cleanly`));
      }
    }
    for (const flow of wanted.values()) {
      if (this.stopped || this.running.has(flow.id)) continue;
      const sub = await this.make(flow);
      if (!sub) continue;
      this.running.add(sub);
      try {
        await sub.start();
        this.deps.log.info({ flow: flow.id, kind: flow.kind, version: flow.version }, `flow ${flow.id} started`);
      } catch {
        // It reports itself failed (status and log); the next reconcile tries again.
      }
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    const all = this.running.clear();
    await Promise.allSettled(all.map((s) => s.stop()));
  }

  private async make(flow: EventFlow): Promise<Subscriber | undefined> {
    const { deps } = this;
    try {
      if (flow.kind === 'kafka') {
        const connection = await deps.events.clusters.connection(flow.clusterId!);
        return new KafkaSubscriber(flow, connection, {
          deliveries: deps.deliveries,
          sink: deps.sink,
          markPositioned: (id) => deps.events.workers.markPositioned(id),
          retry: deps.retry,
          log: deps.log,
        });
      }
      if (flow.kind === 'servicebus') {
        parseServiceBusUri(flow.sourceUri, deps.endpointAllow.serviceBusEndpointAllow);
        return new ServiceBusSubscriber(flow, {
          deliveries: deps.deliveries,
          credentials: deps.events.credentials.serviceBusCredentials(flow),
          concurrency: deps.sqsConcurrency,
          retry: deps.retry,
          log: deps.log,
        });
      }
      parseQueueUrl(flow.sourceUri, deps.endpointAllow.sqsEndpointAllow);
      return new SqsSubscriber(flow, {
        deliveries: deps.deliveries,
        credentials: await deps.events.credentials.queueCredentials(flow),
        concurrency: deps.sqsConcurrency,
        retry: deps.retry,
        defaultRegion: deps.sqsDefaultRegion,
        stsEndpoint: deps.sqsStsEndpoint,
        log: deps.log,
      });
    } catch (err) {
      deps.log.error({ err, flow: flow.id }, `flow ${flow.id} cannot start`);
      return undefined;
    }
  }
}

/** A change that needs a new consumer (the version, the timeout; positioned is the worker's own). */
function changed(a: EventFlow, b: EventFlow): boolean {
  return a.version !== b.version || a.timeoutSeconds !== b.timeoutSeconds || a.updatedAt !== b.updatedAt;
}
