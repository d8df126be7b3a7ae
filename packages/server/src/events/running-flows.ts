/**
 * The subscriber flows this node runs, one consumer each: the flow workers (flow-workers.ts)
 * add and remove them; whoever reports on them (a flow's status in the API, the lag and paused
 * gauges, a cluster worker's presence entry) reads them here. Made before both, so neither
 * names the other.
 */
import type { ConsumerStatus, EventFlow } from '../domain/events/model.js';

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

  /** What the consumer of a flow reports (undefined when this node does not run it). */
  status(flowId: string): ConsumerStatus | undefined {
    return this.running.get(flowId)?.status;
  }

  /** Every running flow's status. */
  statuses(): { flow: EventFlow; status: ConsumerStatus }[] {
    return [...this.running.values()].map((s) => ({ flow: s.flow, status: s.status }));
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
