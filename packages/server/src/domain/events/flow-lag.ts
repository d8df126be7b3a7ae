/**
 * The status of a subscriber flow that no node runs (disabled, or enabled and not picked up
 * yet): its state, and its lag measured in the broker through the BacklogProbe port, so the
 * owner sees what waits for it before enabling it.
 *
 * - Kafka: the flow's consumer group's committed offsets against the topic's end offsets. A flow
 *   never started has no commits and would start at the end of each partition (its starting
 *   offsets are fixed when it first starts; kafka/subscriber.ts), so its lag is 0; a partition
 *   without a commit in a started flow's group counts from its earliest offset, where the
 *   consumer would start it.
 * - SQS: the queue's ApproximateNumberOfMessages, asked with the flow's own credentials, and
 *   only of a queue URL the operator's allow-list still names (the URL is checked again: it
 *   makes this node connect there).
 * - Service Bus: not measured. Its message count is told only to a policy with Manage rights,
 *   and a flow holds a Listen policy.
 *
 * A broker that does not answer within MEASURE_DEADLINE_MS leaves the lag null with an error
 * naming it; a listing never waits longer. A measurement is kept for LAG_CACHE_MS (and shared by
 * the requests that ask meanwhile), so a listing of many flows or a refreshing page does not ask
 * the broker again and again.
 */
import type { Clock } from '../clock.js';
import { DomainError } from '../errors.js';
import { type ConsumerStatus, describeCluster, type EventFlow, flowGroupId } from './model.js';
import type { BacklogProbe } from './ports.js';
import type { EventClusters } from './clusters.js';
import type { QueueCredentials } from './queue-credentials.js';
import { parseQueueUrl } from './flow-input.js';

/** How long a measurement may take before the lag is reported as not measured. */
export const MEASURE_DEADLINE_MS = 3000;
/** How long a measurement is reused. */
export const LAG_CACHE_MS = 5000;
/** Cached measurements beyond which expired ones are swept. */
const SWEEP_ABOVE = 1000;

type Measured = Pick<ConsumerStatus, 'lag' | 'error'>;

export interface FlowLagDeps {
  probe: BacklogProbe;
  clusters: EventClusters;
  credentials: QueueCredentials;
  /** The hosts besides AWS's own that SQS queue URLs may name (ALGOHOST_SQS_ENDPOINT_ALLOW). */
  sqsEndpointAllow: readonly string[];
  clock: Clock;
  deadlineMs?: number;
}

class DeadlinePassed extends Error {}

export class FlowLag {
  private readonly cache = new Map<string, { at: number; key: string; measured: Promise<Measured> }>();
  private readonly deadlineMs: number;

  constructor(private readonly deps: FlowLagDeps) {
    this.deadlineMs = deps.deadlineMs ?? MEASURE_DEADLINE_MS;
  }

  /** A subscriber flow no node runs: stopped (disabled or without a version) or starting, with what waits for it. */
  async statusOf(flow: EventFlow): Promise<ConsumerStatus> {
    const state = flow.enabled && flow.version !== null ? 'starting' : 'stopped';
    const { lag, error } = await this.measured(flow);
    return { state, lag, error };
  }

  private measured(flow: EventFlow): Promise<Measured> {
    const now = this.deps.clock().getTime();
    // A change of the flow (its version, its positioning) is measured afresh.
    const key = `${flow.updatedAt} ${flow.positioned}`;
    const hit = this.cache.get(flow.id);
    if (hit && hit.key === key && now - hit.at < LAG_CACHE_MS) return hit.measured;
    if (this.cache.size >= SWEEP_ABOVE) {
      for (const [id, entry] of this.cache) if (now - entry.at >= LAG_CACHE_MS) this.cache.delete(id);
    }
    const measured = this.measure(flow);
    this.cache.set(flow.id, { at: now, key, measured });
    return measured;
  }

  private async measure(flow: EventFlow): Promise<Measured> {
    if (flow.kind === 'servicebus') {
      return {
        lag: null,
        error:
          'lag not measured: Service Bus tells how many messages a queue holds only to a shared access policy with Manage rights, ' +
          'and a flow holds a Listen policy (algohost asks for no more)',
      };
    }
    if (flow.kind === 'kafka' && !flow.positioned) return { lag: 0, error: null };
    let where = flow.kind === 'kafka' ? `the Kafka cluster ${flow.clusterId}` : `the SQS queue ${flow.sourceUri}`;
    try {
      if (flow.kind === 'kafka') {
        const connection = await this.deps.clusters.connection(flow.clusterId!);
        where = `the Kafka cluster ${describeCluster({ id: connection.clusterId, name: connection.clusterName, bootstrapServers: connection.bootstrapServers })}`;
        const target = { groupId: flowGroupId(flow.id), topic: flow.topic! };
        return { lag: await this.withinDeadline((signal) => this.deps.probe.kafka(connection, target, signal)), error: null };
      }
      const url = this.allowedQueueUrl(flow);
      if (url === null) {
        return {
          lag: null,
          error: `lag not measured: ${where}: not a queue this cluster may reach now (ALGOHOST_SQS_ENDPOINT_ALLOW does not name its host)`,
        };
      }
      const credentials = await this.deps.credentials.queueCredentials(flow);
      return {
        lag: await this.withinDeadline((signal) => this.deps.probe.sqs({ flowId: flow.id, url, credentials }, signal)),
        error: null,
      };
    } catch (err) {
      const reason =
        err instanceof DeadlinePassed
          ? `it did not answer within ${this.deadlineMs / 1000} s`
          : err instanceof DomainError
            ? err.message
            : `it failed: ${err instanceof Error ? err.message : String(err)}`;
      return { lag: null, error: `lag not measured: ${where}: ${reason}` };
    }
  }

  /** The flow's queue URL if the allow-list names its host as it is now (the operator may have narrowed it since the flow was made). */
  private allowedQueueUrl(flow: EventFlow): string | null {
    try {
      return parseQueueUrl(flow.sourceUri, this.deps.sqsEndpointAllow);
    } catch {
      return null;
    }
  }

  /** The probe's answer, or DeadlinePassed once the deadline passes (the probe is told to let go then). */
  private async withinDeadline<T>(work: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        reject(new DeadlinePassed());
        controller.abort();
      }, this.deadlineMs);
    });
    try {
      return await Promise.race([work(controller.signal), deadline]);
    } finally {
      clearTimeout(timer);
    }
  }
}
