import type { Kysely } from 'kysely';

/**
 * Event Flows: Kafka cluster connections (SASL passwords sealed with the cluster key), the flows
 * binding algorithms to topics and queues, and the record of every delivery.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('kafka_clusters')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('name_key', 'text', (c) => c.notNull().unique())
    .addColumn('bootstrap_servers', 'text', (c) => c.notNull()) // JSON array
    .addColumn('tls', 'integer', (c) => c.notNull())
    .addColumn('tls_ca', 'text')
    .addColumn('sasl_mechanism', 'text')
    .addColumn('sasl_username', 'text')
    .addColumn('sasl_password', 'text') // sealed (lib/secret-box.ts)
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('event_flows')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('algorithm_id', 'text', (c) => c.notNull().references('algorithms.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('cluster_id', 'text', (c) => c.references('kafka_clusters.id').onDelete('cascade'))
    .addColumn('topic', 'text')
    .addColumn('source_uri', 'text')
    .addColumn('credentials_kind', 'text')
    .addColumn('credentials_id', 'text')
    .addColumn('credentials_secret', 'text') // sealed
    .addColumn('timeout_s', 'real')
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addColumn('version', 'text')
    .addColumn('positioned', 'integer', (c) => c.notNull())
    // Who configured it (an admin for Kafka, the owner or a member for queues); kept when deleted.
    .addColumn('created_by', 'text', (c) => c.references('accounts.id').onDelete('set null'))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('event_flows_algorithm').on('event_flows').column('algorithm_id').execute();
  await db.schema.createIndex('event_flows_cluster').on('event_flows').column('cluster_id').execute();
  // One assignment per algorithm, topic and role (queue flows have no cluster: NULLs never collide).
  await db.schema
    .createIndex('event_flows_assignment')
    .unique()
    .on('event_flows')
    .columns(['cluster_id', 'topic', 'algorithm_id', 'role'])
    .execute();
  await db.schema
    .createTable('event_deliveries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('flow_id', 'text', (c) => c.notNull().references('event_flows.id').onDelete('cascade'))
    .addColumn('algorithm_id', 'text', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('error', 'text')
    .addColumn('dead_letter', 'text')
    .addColumn('request_id', 'text')
    .addColumn('latency_ms', 'real', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('event_deliveries_algorithm').on('event_deliveries').columns(['algorithm_id', 'created_at']).execute();
  await db.schema.createIndex('event_deliveries_flow').on('event_deliveries').columns(['flow_id', 'created_at']).execute();
  await db.schema.createIndex('event_deliveries_created').on('event_deliveries').column('created_at').execute();
}
