/**
 * Publisher flows: every successful call of an enabled publisher's version (by any caller: the
 * API, a pipeline, another flow) sends its result to the flow's topic. The call path pays one
 * map lookup; the table of enabled publishers is reloaded when flows change, and sending is
 * left to the RecordSink (a batching producer), never awaited by the call.
 */
import type { Logger } from '../logger.js';
import type { CallObserver, SucceededCall } from '../calls/ports.js';
import type { ConsumerStatus, EventFlow } from './model.js';

export interface OutgoingRecord {
  key?: Buffer;
  value: Buffer;
  headers: Record<string, string>;
}

/** Sends records to a topic of a connected cluster (events/kafka: one producer per cluster). */
export interface RecordSink {
  send(clusterId: string, topic: string, record: OutgoingRecord): Promise<void>;
}

const MIME: Record<SucceededCall['contentType'], string> = {
  json: 'application/json',
  text: 'text/plain; charset=utf-8',
  binary: 'application/octet-stream',
  void: 'application/json',
};

/**
 * What each publisher in the table reports, by flow id: running from the moment it is in the
 * table (it sends every result from then on), failed with the cluster's error while its last
 * record was refused. It has no lag: it writes to its topic, it reads nothing. A table of its
 * own, made before the publisher, so that whoever reports on the flows this node runs (the API's
 * flow status, a cluster worker's presence entry) reads it without naming the publisher.
 */
export class PublisherStates {
  private states = new Map<string, { flow: EventFlow; status: ConsumerStatus }>();

  /** Keeps the states of the flows given (a new one starts running) and forgets the rest. */
  replace(flows: EventFlow[]): void {
    const states = new Map<string, { flow: EventFlow; status: ConsumerStatus }>();
    for (const flow of flows) {
      const status = this.states.get(flow.id)?.status ?? { state: 'running', lag: null, error: null };
      states.set(flow.id, { flow, status });
    }
    this.states = states;
  }

  /** What the publisher flow reports on this node (undefined when it is not in the table: disabled, no version). */
  status(flowId: string): ConsumerStatus | undefined {
    return this.states.get(flowId)?.status;
  }

  /** Every publisher in the table with its status. */
  statuses(): { flow: EventFlow; status: ConsumerStatus }[] {
    return [...this.states.values()];
  }

  /** Records the outcome of the flow's last send: a refused record marks it failed until one is taken. */
  sent(flowId: string, error: string | null): void {
    const status = this.states.get(flowId)?.status;
    if (!status) return;
    status.state = error === null ? 'running' : 'failed';
    status.error = error;
  }
}

export class FlowPublisher implements CallObserver {
  /** Enabled publisher flows by algorithm id. */
  private byAlgorithm = new Map<string, EventFlow[]>();

  constructor(
    private readonly sink: RecordSink,
    private readonly log: Logger,
    private readonly states: PublisherStates,
    /** Called for every record sent (or not): Prometheus counters. */
    private readonly observe: (flow: EventFlow, ok: boolean) => void = () => {},
  ) {}

  /** Replaces the table with the enabled flows given (called when flows change and at start). */
  load(enabled: EventFlow[]): void {
    const next = new Map<string, EventFlow[]>();
    const publishing: EventFlow[] = [];
    for (const flow of enabled) {
      if (flow.role !== 'publisher' || flow.kind !== 'kafka' || !flow.enabled || !flow.version) continue;
      const list = next.get(flow.algorithmId);
      if (list) list.push(flow);
      else next.set(flow.algorithmId, [flow]);
      publishing.push(flow);
    }
    this.byAlgorithm = next;
    this.states.replace(publishing);
  }

  /** On the call path: only a map lookup unless the algorithm publishes. */
  succeeded(call: SucceededCall): void {
    const flows = this.byAlgorithm.get(call.algorithmId);
    if (!flows) return;
    for (const flow of flows) {
      if (flow.version !== call.version) continue;
      const record: OutgoingRecord = {
        value: valueOf(call),
        headers: {
          'algohost-algorithm': `${call.owner}/${call.name}`,
          'algohost-version': call.version,
          'algohost-request-id': call.requestId,
          'content-type': MIME[call.contentType],
        },
      };
      this.sink.send(flow.clusterId!, flow.topic!, record).then(
        () => {
          this.states.sent(flow.id, null);
          this.observe(flow, true);
        },
        (err: unknown) => {
          this.states.sent(flow.id, err instanceof Error ? err.message : String(err));
          this.observe(flow, false);
          this.log.warn(
            { err, flow: flow.id, topic: flow.topic },
            `publisher flow ${flow.id}: the result of ${call.requestId} was not sent`,
          );
        },
      );
    }
  }
}

/** The record value: JSON text, the text itself, or the bytes of a binary result (base64 in the envelope). */
function valueOf(call: SucceededCall): Buffer {
  if (call.contentType === 'text' && typeof call.result === 'string') return Buffer.from(call.result, 'utf8');
  if (call.contentType === 'binary' && typeof call.result === 'string') return Buffer.from(call.result, 'base64');
  return Buffer.from(JSON.stringify(call.result ?? null), 'utf8');
}
