/**
 * A Kafka subscriber flow (docs/compatibility.md §10): a consumer group of its own
 * (`algohost-flow-<flow id>`), each record a call of the flow's version.
 *
 * - Order per partition: one record of a partition is in delivery at a time; partitions run side by side.
 * - At-least-once: a record's offset is committed only after its outcome is recorded, so a
 *   node that stops mid-delivery delivers it again after its restart. Commits are coalesced: the
 *   partition goes on to its next record while the commit travels, and records delivered
 *   meanwhile are covered by one commit of each partition's latest, at most every COMMIT_GAP_MS
 *   (a crash before it lands redelivers them; a stop commits what was delivered first).
 * - A failing call is retried with exponential backoff; after the last attempt the record goes
 *   to the dead-letter topic `<topic>.dlq` (made when missing) with the error in its headers. A
 *   record whose input the call refuses before anything runs goes there after its first attempt.
 * - Saturation (the algorithm's runners or its owner's call limit are full) is not a failure:
 *   the partition waits and tries again, and the consumer stops fetching while too many
 *   records wait (it pauses rather than buffer without bound).
 * - A new flow starts at the end of each partition (what arrives after it was enabled); the
 *   starting offsets are committed before the first fetch, so later starts resume from commits.
 */
import type { Consumer, Message, MessagesStream } from '@platformatic/kafka';
import { type ConsumerStatus, describeCluster, type EventFlow, flowGroupId, type KafkaConnection } from '../../domain/events/model.js';
import type { FlowDeliveries } from '../../domain/events/deliveries.js';
import type { RecordSink } from '../../domain/events/publishing.js';
import { CoalescingBatch } from '../../lib/coalescing-batch.js';
import { clientOptions, kafkaFailureReason, missingTopic } from './connection.js';
import { kafkaLibrary } from './library.js';
import { backoffMs, sleepUnlessAborted, type RetryPolicy, type WorkerLog } from '../delivery-policy.js';

export interface SubscriberDeps {
  deliveries: FlowDeliveries;
  sink: RecordSink;
  markPositioned: (flowId: string) => Promise<void>;
  retry: RetryPolicy;
  log: WorkerLog;
}

/** Records waiting in this consumer beyond which it stops fetching (and below which it fetches again). */
const HIGH_WATER = 256;
const LOW_WATER = 64;
const LAG_EVERY_MS = 5000;
/** The pause between offset commits while records keep coming (one commit request per partition each time). */
const COMMIT_GAP_MS = 100;

type Record_ = Message<Buffer, Buffer, Buffer, Buffer>;

export const deadLetterTopic = (topic: string) => `${topic}.dlq`;

export class KafkaSubscriber {
  private readonly state: ConsumerStatus = { state: 'starting', lag: null, error: null };
  private consumer: Consumer<Buffer, Buffer, Buffer, Buffer> | undefined;
  private stream: MessagesStream<Buffer, Buffer, Buffer, Buffer> | undefined;
  private readonly partitions = new Map<number, Record_[]>();
  private readonly running = new Set<Promise<void>>();
  private buffered = 0;
  private fetching = true;
  private saturated = 0;
  private readonly stopping = new AbortController();
  /** Delivered records whose offsets are not committed yet. */
  private readonly commits = new CoalescingBatch<Record_>((records) => this.commit(records), { gapMs: COMMIT_GAP_MS });

  constructor(
    readonly flow: EventFlow,
    private readonly connection: KafkaConnection,
    private readonly deps: SubscriberDeps,
  ) {}

  get status(): ConsumerStatus {
    return { ...this.state, state: this.state.state === 'running' && (!this.fetching || this.saturated > 0) ? 'paused' : this.state.state };
  }

  async start(): Promise<void> {
    const topic = this.flow.topic!;
    const groupId = flowGroupId(this.flow.id);
    const options = clientOptions(this.connection, groupId);
    try {
      await this.prepare(options, groupId, topic);
      const { Consumer } = await kafkaLibrary();
      const consumer = new Consumer({ ...options, groupId, sessionTimeout: 10_000, heartbeatInterval: 1000, rebalanceTimeout: 10_000 });
      this.consumer = consumer;
      const stream = await consumer.consume({
        topics: [topic],
        // Resume from the group's commits; a partition without one (added after the flow
        // started) starts at its beginning, which holds only what came after.
        mode: 'committed',
        fallbackMode: 'earliest',
        autocommit: false,
        maxWaitTime: 500,
      });
      this.stream = stream;
      stream.on('data', (record: Record_) => this.enqueue(record));
      stream.on('error', (err: Error) => this.fail(err));
      consumer.on('consumer:lag', (lag) => {
        let sum = 0;
        for (const partitions of lag.values()) for (const n of partitions) if (n > 0n) sum += Number(n);
        this.state.lag = sum;
      });
      consumer.on('consumer:lag:error', () => {});
      consumer.startLagMonitoring({ topics: [topic] }, LAG_EVERY_MS);
      this.state.state = 'running';
      this.state.error = null;
    } catch (err) {
      this.fail(err);
      throw err;
    }
  }

  /** Stops fetching, lets each partition finish the record it is delivering (its wait is cut short), leaves the group. */
  async stop(): Promise<void> {
    this.stopping.abort();
    this.stream?.pause();
    await Promise.allSettled([...this.running]);
    // What was delivered is committed before the group is left.
    await this.commits.settled();
    this.consumer?.stopLagMonitoring();
    await this.stream?.close().catch(() => {});
    const consumer = this.consumer;
    if (consumer) await new Promise<void>((resolve) => consumer.close(true, () => resolve()));
  }

  /** The dead-letter topic exists; a never-started flow's group starts at the end of each partition. */
  private async prepare(options: ReturnType<typeof clientOptions>, groupId: string, topic: string): Promise<void> {
    const { Admin } = await kafkaLibrary();
    const admin = new Admin(options);
    try {
      const dlq = deadLetterTopic(topic);
      // Asked first, and of the list (a metadata request naming it would make a broker that
      // auto-creates topics create it): a missing topic is the operator's to create.
      const existing = await admin.listTopics();
      if (!existing.includes(topic)) throw new Error(missingTopic(topic));
      const metadata = await admin.metadata({ topics: [topic] });
      const partitions = metadata.topics.get(topic)?.partitionsCount ?? 1;
      if (!existing.includes(dlq)) {
        try {
          await admin.createTopics({ topics: [dlq], partitions, replicas: -1 });
        } catch (err) {
          // Another node (or an admin) made it meanwhile.
          if (!(await admin.listTopics()).includes(dlq)) throw err;
        }
      }
      if (!this.flow.positioned) {
        const ends = await admin.listOffsets({
          topics: [{ name: topic, partitions: Array.from({ length: partitions }, (_, i) => ({ partitionIndex: i, timestamp: -1n })) }],
        });
        await admin.alterConsumerGroupOffsets({
          groupId,
          topics: ends.map((t) => ({
            name: t.name,
            partitionOffsets: t.partitions.map((p) => ({ partition: p.partitionIndex, offset: p.offset })),
          })),
        });
        await this.deps.markPositioned(this.flow.id);
      }
    } finally {
      await admin.close().catch(() => {});
    }
  }

  private enqueue(record: Record_): void {
    let queue = this.partitions.get(record.partition);
    if (!queue) this.partitions.set(record.partition, (queue = []));
    queue.push(record);
    this.buffered++;
    if (this.buffered >= HIGH_WATER && this.fetching) {
      this.fetching = false;
      this.stream?.pause();
    }
    if (queue.length === 1) this.drain(record.partition, queue);
  }

  /** Delivers a partition's records one after another, in order. */
  private drain(partition: number, queue: Record_[]): void {
    const run = (async () => {
      while (queue.length > 0 && !this.stopping.signal.aborted) {
        await this.deliver(queue[0]!);
        if (this.stopping.signal.aborted) return;
        queue.shift();
        this.buffered--;
        if (!this.fetching && this.buffered <= LOW_WATER) {
          this.fetching = true;
          this.stream?.resume();
        }
      }
    })().catch((err: unknown) => this.fail(err));
    this.running.add(run);
    void run.finally(() => {
      this.running.delete(run);
      if (queue.length === 0) this.partitions.delete(partition);
    });
  }

  /** One record to its outcome: succeeded, or dead-lettered after the last attempt. Then its offset is committed. */
  private async deliver(record: Record_): Promise<void> {
    const { retry } = this.deps;
    const source = `${record.topic}/${record.partition}@${record.offset}`;
    const event: Record<string, string> = {
      source: 'kafka',
      topic: record.topic,
      partition: String(record.partition),
      offset: String(record.offset),
      timestamp: String(record.timestamp),
    };
    if (record.key) event.key = record.key.toString('utf8');
    let contentType: string | undefined;
    for (const [k, v] of record.headers) if (k.toString().toLowerCase() === 'content-type') contentType = v.toString();
    const input = { body: record.value ?? Buffer.alloc(0), contentType, event };
    let attempts = 0;
    let latency = 0;
    for (;;) {
      const outcome = await this.deps.deliveries.call(this.flow, input);
      latency += outcome.latencyMs;
      if (outcome.kind === 'saturated') {
        // Nothing ran: not an attempt. The partition waits (and the consumer pauses as records pile up).
        this.saturated++;
        try {
          if (!(await this.sleep(retry.saturatedMs))) return;
        } finally {
          this.saturated--;
        }
        continue;
      }
      attempts++;
      if (outcome.kind === 'succeeded') {
        await this.deps.deliveries.record(this.flow, {
          source,
          attempts,
          outcome: 'succeeded',
          requestId: outcome.requestId,
          latencyMs: latency,
        });
        break;
      }
      // Input refused before it ran (malformed or too deeply nested JSON…): every attempt would
      // be refused alike, so it goes to the dead-letter topic now.
      if (outcome.kind === 'failed' && attempts < retry.attempts) {
        if (!(await this.sleep(backoffMs(retry, attempts)))) return;
        continue;
      }
      const requestId = outcome.kind === 'failed' ? outcome.requestId : null;
      const dlq = deadLetterTopic(record.topic);
      await this.deps.sink.send(this.connection.clusterId, dlq, {
        ...(record.key ? { key: record.key } : {}),
        value: record.value ?? Buffer.alloc(0),
        headers: {
          ...Object.fromEntries([...record.headers].map(([k, v]) => [k.toString(), v.toString()])),
          'algohost-error': outcome.error.slice(0, 4096),
          'algohost-attempts': String(attempts),
          'algohost-flow': this.flow.id,
          'algohost-source': source,
          ...(requestId ? { 'algohost-request-id': requestId } : {}),
        },
      });
      await this.deps.deliveries.record(this.flow, {
        source,
        attempts,
        outcome: 'dead_lettered',
        error: outcome.error,
        deadLetter: dlq,
        requestId,
        latencyMs: latency,
      });
      break;
    }
    this.commitLater(record);
  }

  /** Commits the record's offset soon, with whatever else was delivered by then. */
  private commitLater(record: Record_): void {
    void this.commits.add(record);
  }

  /** One commit per partition, of its latest delivered record. */
  private async commit(records: Record_[]): Promise<void> {
    const latest = new Map<number, Record_>();
    for (const r of records) latest.set(r.partition, r);
    const results = await Promise.allSettled([...latest.values()].map((r) => r.commit()));
    for (const r of results) {
      // Not committed: the records are delivered again after a restart (at least once), never lost.
      if (r.status === 'rejected') {
        this.deps.log.warn({ err: r.reason, flow: this.flow.id }, `Kafka flow ${this.flow.id}: an offset commit failed`);
      }
    }
  }

  /** Waits, unless the subscriber stops first; false when it stopped. */
  private sleep(ms: number): Promise<boolean> {
    return sleepUnlessAborted(ms, this.stopping.signal);
  }

  private fail(err: unknown): void {
    if (this.stopping.signal.aborted) return;
    this.state.state = 'failed';
    const c = this.connection;
    this.state.error = `the Kafka cluster ${describeCluster({ id: c.clusterId, name: c.clusterName, bootstrapServers: c.bootstrapServers })} failed: ${kafkaFailureReason(err)}`;
    this.deps.log.error(
      { err, flow: this.flow.id, topic: this.flow.topic },
      `Kafka subscriber flow ${this.flow.id} failed (${this.state.error}); it restarts on the next reconcile`,
    );
  }

  get failed(): boolean {
    return this.state.state === 'failed';
  }
}
