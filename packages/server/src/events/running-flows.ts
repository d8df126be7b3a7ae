/**
 * The flows this node runs: the subscribers, one consumer each, which the flow workers
 * (flow-workers.ts) add and remove, and the publishers' states, which the flow publisher keeps.
 * Whoever reports on them (a flow's status in the API, the lag and paused gauges, a cluster
 * worker's presence entry) reads them here. Made before both, so neither names the other.
 */
import type { ConsumerStatus, EventFlow } from '../domain/events/model.js';
import { PublisherStates } from '../domain/events/publishing.js';

/** One flow's consumer (a Kafka consumer, an SQS poller, a Service Bus receiver). */
export interface Subscriber {
  readonly flow: EventFlow;
  readonly status: ConsumerStatus;
  readonly failed: boolean;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export class RunningFlows {
  private readonly running = new Map<string, Subscriber>();
  /** The publishers' states, handed to the flow publisher (domain/events/publishing.ts). */
  readonly publishers = new PublisherStates();

  /** What a flow reports: its consumer's status, or its publisher's (undefined when this node runs neither). */
  status(flowId: string): ConsumerStatus | undefined {
    return this.running.get(flowId)?.status ?? this.publishers.status(flowId);
  }

  /** Every flow this node runs with its status: the consumers, and the publishers it sends for. */
  statuses(): { flow: EventFlow; status: ConsumerStatus }[] {
    const subscribers = [...this.running.values()].map((s) => ({ flow: s.flow, status: s.status }));
    return subscribers.concat(this.publishers.statuses());
  }

  has(flowId: string): boolean {
    return this.running.has(flowId);
  }

  add(sub: Subscriber): void {
    this.running.set(sub.flow.id, sub);
  }

  remove(flowId: string): void {
    this.running.delete(flowId);
  }

  entries(): [string, Subscriber][] {
    return [...this.running];
  }

  /** Forgets every consumer and returns them, to be stopped. */
  clear(): Subscriber[] {
    const all = [...this.running.values()];
    this.running.clear();
    return all;
  }
}
