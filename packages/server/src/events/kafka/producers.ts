/**
 * One Kafka producer per connected cluster, shared by publisher flows and dead-letter writes.
 * Records sent in the same turn of the event loop go out as one produce request (a warm call
 * never waits for the broker: the publisher does not await this).
 */
import { Producer, ProduceAcks } from '@platformatic/kafka';
import type { KafkaConnection } from '../../domain/events/model.js';
import type { OutgoingRecord, RecordSink } from '../../domain/events/publishing.js';
import { clientOptions } from './connection.js';

interface Pending {
  topic: string;
  record: OutgoingRecord;
  resolve: () => void;
  reject: (err: unknown) => void;
}

interface ClusterProducer {
  producer: Producer;
  queue: Pending[];
  scheduled: boolean;
}

export class KafkaProducers implements RecordSink {
  private readonly clusters = new Map<string, Promise<ClusterProducer>>();
  private closed = false;

  constructor(private readonly connectionOf: (clusterId: string) => Promise<KafkaConnection>) {}

  send(clusterId: string, topic: string, record: OutgoingRecord): Promise<void> {
    if (this.closed) return Promise.reject(new Error('the node is stopping: Kafka producers are closed'));
    return new Promise<void>((resolve, reject) => {
      this.producerFor(clusterId).then((cp) => {
        cp.queue.push({ topic, record, resolve, reject });
        if (!cp.scheduled) {
          cp.scheduled = true;
          setImmediate(() => this.flush(cp));
        }
      }, reject);
    });
  }

  /** A cluster's connection changed or it was removed: its producer is made again on next use. */
  async forget(clusterId: string): Promise<void> {
    const cp = this.clusters.get(clusterId);
    this.clusters.delete(clusterId);
    if (cp) await (await cp.catch(() => undefined))?.producer.close().catch(() => {});
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const id of [...this.clusters.keys()]) await this.forget(id);
  }

  private producerFor(clusterId: string): Promise<ClusterProducer> {
    let cp = this.clusters.get(clusterId);
    if (!cp) {
      cp = this.connectionOf(clusterId).then((connection) => ({
        // acks from all in-sync replicas: a record the producer reports sent survives a broker's loss.
        producer: new Producer({ ...clientOptions(connection, 'algohost-producer'), acks: ProduceAcks.ALL }),
        queue: [],
        scheduled: false,
      }));
      cp.catch(() => this.clusters.delete(clusterId));
      this.clusters.set(clusterId, cp);
    }
    return cp;
  }

  private flush(cp: ClusterProducer): void {
    cp.scheduled = false;
    const batch = cp.queue.splice(0);
    if (batch.length === 0) return;
    cp.producer
      .send({
        messages: batch.map((p) => ({
          topic: p.topic,
          ...(p.record.key ? { key: p.record.key } : {}),
          value: p.record.value,
          headers: new Map(Object.entries(p.record.headers).map(([k, v]) => [Buffer.from(k), Buffer.from(v)])),
        })),
      })
      .then(
        () => batch.forEach((p) => p.resolve()),
        (err: unknown) => batch.forEach((p) => p.reject(err)),
      );
  }
}
