/**
 * What waits for a Kafka consumer group that no consumer runs (the BacklogProbe port's Kafka
 * half): per partition, the end offset less the group's committed offset, or less the earliest
 * offset where the group has committed none; summed over the topic's partitions. The
 * measurements in flight on one cluster share one admin client (one connection per broker,
 * however many flows a listing measures), closed when the last of them ends.
 */
import type { Admin } from '@platformatic/kafka';
import type { KafkaConnection } from '../../domain/events/model.js';
import { clientOptions, kafkaFailureReason } from './connection.js';
import { kafkaLibrary } from './library.js';

/** One try, briefly: the caller's deadline (a few seconds) decides, and an abort closes the client. */
const PROBE_TIMEOUT_MS = 2500;

export class KafkaBacklog {
  private readonly admins = new Map<string, { admin: Admin; users: number }>();

  async measure(connection: KafkaConnection, target: { groupId: string; topic: string }, signal: AbortSignal): Promise<number> {
    const { admin, release } = this.acquire(connection, (await kafkaLibrary()).Admin);
    // Let go at the deadline: the caller has answered without it.
    signal.addEventListener('abort', release, { once: true });
    try {
      return await backlogOf(admin, target);
    } catch (err) {
      throw new Error(kafkaFailureReason(err), { cause: err });
    } finally {
      signal.removeEventListener('abort', release);
      release();
    }
  }

  /** The cluster's shared admin client, made for the first measurement in flight and closed after the last. */
  private acquire(connection: KafkaConnection, AdminClient: typeof Admin): { admin: Admin; release: () => void } {
    const key = JSON.stringify([connection.clusterId, connection.bootstrapServers, connection.tls, connection.tlsCa, connection.sasl]);
    let entry = this.admins.get(key);
    if (!entry) {
      const admin = new AdminClient({
        ...clientOptions(connection, 'algohost-lag'),
        connectTimeout: PROBE_TIMEOUT_MS,
        requestTimeout: PROBE_TIMEOUT_MS,
        retries: 0,
      });
      entry = { admin, users: 0 };
      this.admins.set(key, entry);
    }
    const held = entry;
    held.users++;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      if (--held.users > 0) return;
      if (this.admins.get(key) === held) this.admins.delete(key);
      void held.admin.close().catch(() => {});
    };
    return { admin: held.admin, release };
  }
}

async function backlogOf(admin: Admin, { groupId, topic }: { groupId: string; topic: string }): Promise<number> {
  // Metadata does not create a missing topic (autocreateTopics is off): a missing one is an error.
  const metadata = await admin.metadata({ topics: [topic] });
  const count = metadata.topics.get(topic)?.partitionsCount ?? 0;
  const partitions = Array.from({ length: count }, (_, i) => i);
  const offsets = (timestamp: bigint) =>
    admin.listOffsets({ topics: [{ name: topic, partitions: partitions.map((partitionIndex) => ({ partitionIndex, timestamp })) }] });
  const [ends, starts, groups] = await Promise.all([
    offsets(-1n),
    offsets(-2n),
    admin.listConsumerGroupOffsets({ groups: [{ groupId, topics: [{ name: topic, partitionIndexes: partitions }] }] }),
  ]);
  const byPartition = (list: { partitionIndex: number; offset: bigint }[] | undefined) =>
    new Map((list ?? []).map((p) => [p.partitionIndex, p.offset]));
  const end = byPartition(ends.find((t) => t.name === topic)?.partitions);
  const start = byPartition(starts.find((t) => t.name === topic)?.partitions);
  const committed = new Map(
    (groups[0]?.topics.find((t) => t.name === topic)?.partitions ?? []).map((p) => [p.partitionIndex, p.committedOffset]),
  );
  let lag = 0n;
  for (const p of partitions) {
    const last = end.get(p) ?? 0n;
    const c = committed.get(p) ?? -1n;
    const from = c >= 0n ? c : (start.get(p) ?? 0n);
    if (last > from) lag += last - from;
  }
  return Number(lag);
}
