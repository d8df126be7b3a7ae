/** Lists a cluster's topics for the admin API (the KafkaAdmin port). */
import type { KafkaConnection } from '../../domain/events/model.js';
import type { KafkaAdmin, TopicInfo } from '../../domain/events/ports.js';
import { clientOptions, kafkaFailureReason } from './connection.js';
import { kafkaLibrary } from './library.js';

export class PlatformaticKafkaAdmin implements KafkaAdmin {
  async listTopics(connection: KafkaConnection): Promise<TopicInfo[]> {
    // One short-lived client per listing: admins list rarely, and a cluster's credentials may change.
    const { Admin } = await kafkaLibrary();
    const admin = new Admin(clientOptions(connection, 'algohost-admin'));
    try {
      const names = (await admin.listTopics({ includeInternals: false })).sort();
      if (names.length === 0) return [];
      const metadata = await admin.metadata({ topics: names });
      return names.map((name) => ({ name, partitions: metadata.topics.get(name)?.partitionsCount ?? 0 }));
    } catch (err) {
      throw new Error(`listing its topics: ${kafkaFailureReason(err)}`, { cause: err });
    } finally {
      await admin.close().catch(() => {});
    }
  }
}
