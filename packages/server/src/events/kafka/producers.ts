/**
 * One Kafka producer per connected cluster, shared by publisher flows and dead-letter writes.
 * Records go out coalesced (lib/coalescing-batch.ts): one produce request at a time per cluster,
 * the records handed in meanwhile in the next one. A warm call never waits for the broker: the
 * publisher does not await this.
 */
import type { Producer } from '@platformatic/kafka';
import type { KafkaConnection } from '../../domain/events/model.js';
import type { OutgoingRecord, RecordSink } from '../../domain/events/publishing.js';
import { CoalescingBatch } from '../../lib/coalescing-batch.js';
import { clientOptions, kafkaFailureReason } from './connection.js';
import { kafkaLibrary } from './library.js';

interface Outgoing {
  topic: string;
  record: OutgoingRecord;
}

interface ClusterProducer {
  producer: Producer;
  batch: CoalescingBatch<Outgoing>;
}

/** Records per produce request at most (a flood's backlog goes out in several). */
const MAX_RECORDS_PER_REQUEST = 1000;

export class KafkaProducers implements RecordSink {
  private readonly clusters = new Map<string, Promise<ClusterProducer>>();
  private closed = false;

  constructor(private readonly connectionOf: (clusterId: string) => Promise<KafkaConnection>) {}

  async send(clusterId: string, topic: string, record: OutgoingRecord): Promise<void> {
    if (this.closed) throw new Error('the node is stopping: Kafka producers are closed');
    const cp = await this.producerFor(clusterId);
    try {
      await cp.batch.add({ topic, record });
    } catch (err) {
      throw new Error(`producing to the topic "${topic}": ${kafkaFailureReason(err)}`, { cause: err });
    }
  }

  /** A cluster's connection changed or it was removed: its producer is made again on next use. */
  async forget(clusterId: string): Promise<void> {
    const cp = this.clusters.get(clusterId);
    this.clusters.delete(clusterId);
    const made = await cp?.catch(() => undefined);
    if (!made) return;
    await made.batch.settled();
    await made.producer.close().catch(() => {});
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const id of [...this.clusters.keys()]) await this.forget(id);
  }

  private producerFor(clusterId: string): Promise<ClusterProducer> {
    let cp = this.clusters.get(clusterId);
    if (!cp) {
      cp = Promise.all([this.connectionOf(clusterId), kafkaLibrary()]).then(([connection, { Producer, ProduceAcks }]) => {
        // acks from all in-sync replicas: a record the producer reports sent survives a broker's loss.
        const producer = new Producer({ ...clientOptions(connection, 'algohost-producer'), acks: ProduceAcks.ALL });
        return { producer, batch: new CoalescingBatch((records) => produce(producer, records), { maxItems: MAX_RECORDS_PER_REQUEST }) };
      });
      cp.catch(() => this.clusters.delete(clusterId));
      this.clusters.set(clusterId, cp);
    }
    return cp;
  }
}

async function produce(producer: Producer, records: Outgoing[]): Promise<void> {
  await producer.send({
    messages: records.map(({ topic, record }) => ({
      topic,
      ...(record.key ? { key: record.key } : {}),
      value: record.value,
      headers: new Map(Object.entries(record.headers).map(([k, v]) => [Buffer.from(k), Buffer.from(v)])),
    })),
  });
}
