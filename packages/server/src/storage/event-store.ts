import type { Selectable } from 'kysely';
import { Errors } from '../domain/errors.js';
import type { Delivery, DeliveryOutcome, EventFlow, FlowKind, FlowRole, KafkaCluster, SaslMechanism } from '../domain/events/model.js';
import type { EventStore } from '../domain/events/ports.js';
import { nameKey } from '../domain/names.js';
import { type Page, type PageRequest, toPage } from '../domain/pagination.js';
import { type Db, hasNul, isUniqueViolation } from './database.js';
import type { EventDeliveriesTable, EventFlowsTable, KafkaClustersTable } from './schema.js';

export class SqlEventStore implements EventStore {
  constructor(private readonly db: Db) {}

  async insertCluster(c: KafkaCluster): Promise<void> {
    try {
      await this.db
        .insertInto('kafka_clusters')
        .values({
          id: c.id,
          name: c.name,
          name_key: nameKey(c.name),
          bootstrap_servers: JSON.stringify(c.bootstrapServers),
          tls: c.tls ? 1 : 0,
          tls_ca: c.tlsCa,
          sasl_mechanism: c.saslMechanism,
          sasl_username: c.saslUsername,
          sasl_password: c.saslPassword,
          created_at: c.createdAt,
        })
        .execute();
    } catch (err) {
      if (isUniqueViolation(err)) throw Errors.eventClusterExists({ name: c.name });
      throw err;
    }
  }

  async listClusters(): Promise<KafkaCluster[]> {
    return (await this.db.selectFrom('kafka_clusters').selectAll().orderBy('created_at').orderBy('id').execute()).map(clusterFromRow);
  }

  async findCluster(idOrName: string): Promise<KafkaCluster | undefined> {
    if (hasNul(idOrName)) return undefined;
    const row = await this.db
      .selectFrom('kafka_clusters')
      .selectAll()
      .where((eb) => eb.or([eb('id', '=', idOrName), eb('name_key', '=', nameKey(idOrName))]))
      .executeTakeFirst();
    return row && clusterFromRow(row);
  }

  async deleteCluster(id: string): Promise<void> {
    await this.db.deleteFrom('kafka_clusters').where('id', '=', id).execute();
  }

  async insertFlow(f: EventFlow): Promise<void> {
    try {
      await this.db
        .insertInto('event_flows')
        .values({
          id: f.id,
          algorithm_id: f.algorithmId,
          kind: f.kind,
          role: f.role,
          cluster_id: f.clusterId,
          topic: f.topic,
          source_uri: f.sourceUri,
          credentials_kind: f.credentialsKind,
          credentials_id: f.credentialsId,
          credentials_secret: f.credentialsSecret,
          timeout_s: f.timeoutSeconds,
          enabled: f.enabled ? 1 : 0,
          version: f.version,
          positioned: f.positioned ? 1 : 0,
          created_by: f.createdBy,
          created_at: f.createdAt,
          updated_at: f.updatedAt,
        })
        .execute();
    } catch (err) {
      if (isUniqueViolation(err)) throw Errors.eventFlowExists({ what: `the ${f.role} assignment of this algorithm to topic ${f.topic}` });
      throw err;
    }
  }

  async updateFlow(
    id: string,
    changes: Partial<Pick<EventFlow, 'enabled' | 'version' | 'positioned' | 'timeoutSeconds' | 'updatedAt'>>,
  ): Promise<void> {
    const set: Partial<Pick<EventFlowsTable, 'enabled' | 'version' | 'positioned' | 'timeout_s' | 'updated_at'>> = {};
    if (changes.enabled !== undefined) set.enabled = changes.enabled ? 1 : 0;
    if (changes.version !== undefined) set.version = changes.version;
    if (changes.positioned !== undefined) set.positioned = changes.positioned ? 1 : 0;
    if (changes.timeoutSeconds !== undefined) set.timeout_s = changes.timeoutSeconds;
    if (changes.updatedAt !== undefined) set.updated_at = changes.updatedAt;
    if (Object.keys(set).length === 0) return;
    await this.db.updateTable('event_flows').set(set).where('id', '=', id).execute();
  }

  async findFlow(id: string): Promise<EventFlow | undefined> {
    if (hasNul(id)) return undefined;
    const row = await this.db.selectFrom('event_flows').selectAll().where('id', '=', id).executeTakeFirst();
    return row && flowFromRow(row);
  }

  async deleteFlow(id: string): Promise<void> {
    await this.db.deleteFrom('event_flows').where('id', '=', id).execute();
  }

  async listFlowsOfAlgorithm(algorithmId: string): Promise<EventFlow[]> {
    const rows = await this.db
      .selectFrom('event_flows')
      .selectAll()
      .where('algorithm_id', '=', algorithmId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map(flowFromRow);
  }

  async listFlowsOfCluster(clusterId: string): Promise<EventFlow[]> {
    const rows = await this.db
      .selectFrom('event_flows')
      .selectAll()
      .where('cluster_id', '=', clusterId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map(flowFromRow);
  }

  async listFlowsOfOwner(ownerId: string): Promise<(EventFlow & { algorithmName: string; createdByName: string | null })[]> {
    const rows = await this.db
      .selectFrom('event_flows as f')
      .innerJoin('algorithms as a', 'a.id', 'f.algorithm_id')
      .leftJoin('accounts as u', 'u.id', 'f.created_by')
      .selectAll('f')
      .select(['a.name as algorithm_name', 'u.name as created_by_name'])
      .where('a.owner_id', '=', ownerId)
      .orderBy('f.created_at')
      .orderBy('f.id')
      .execute();
    return rows.map((r) => ({ ...flowFromRow(r), algorithmName: r.algorithm_name, createdByName: r.created_by_name ?? null }));
  }

  async listEnabledFlows(): Promise<EventFlow[]> {
    const rows = await this.db.selectFrom('event_flows').selectAll().where('enabled', '=', 1).orderBy('created_at').orderBy('id').execute();
    return rows.map(flowFromRow);
  }

  /** Many delivery records in one statement (a flood records hundreds a second). */
  async insertDeliveries(deliveries: Delivery[]): Promise<void> {
    if (deliveries.length === 0) return;
    await this.db
      .insertInto('event_deliveries')
      .values(
        deliveries.map((d) => ({
          id: d.id,
          flow_id: d.flowId,
          algorithm_id: d.algorithmId,
          source: d.source,
          attempts: d.attempts,
          outcome: d.outcome,
          error: d.error,
          dead_letter: d.deadLetter,
          request_id: d.requestId,
          latency_ms: d.latencyMs,
          created_at: d.createdAt,
        })),
      )
      .execute();
  }

  async listDeliveries(algorithmId: string, opts: { flowId?: string; page: PageRequest }): Promise<Page<Delivery>> {
    // Newest first by creation time, then id; the marker carries both.
    let q = this.db.selectFrom('event_deliveries').selectAll().where('algorithm_id', '=', algorithmId);
    if (opts.flowId !== undefined) q = q.where('flow_id', '=', hasNul(opts.flowId) ? '' : opts.flowId);
    if (opts.page.after !== undefined) {
      // A marker never issued still names a position (domain/pagination.ts): before that time.
      const i = opts.page.after.indexOf('|');
      const at = i < 0 ? opts.page.after : opts.page.after.slice(0, i);
      const id = i < 0 ? '' : opts.page.after.slice(i + 1);
      q = q.where((eb) => eb.or([eb('created_at', '<', at), eb.and([eb('created_at', '=', at), eb('id', '<', id)])]));
    }
    const rows = await q
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(opts.page.limit + 1)
      .execute();
    return toPage(rows.map(deliveryFromRow), opts.page.limit, (d) => `${d.createdAt}|${d.id}`);
  }

  async deleteDeliveriesBefore(iso: string): Promise<number> {
    const result = await this.db.deleteFrom('event_deliveries').where('created_at', '<', iso).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}

function clusterFromRow(r: Selectable<KafkaClustersTable>): KafkaCluster {
  return {
    id: r.id,
    name: r.name,
    bootstrapServers: JSON.parse(r.bootstrap_servers) as string[],
    tls: r.tls === 1,
    tlsCa: r.tls_ca,
    saslMechanism: r.sasl_mechanism as SaslMechanism | null,
    saslUsername: r.sasl_username,
    saslPassword: r.sasl_password,
    createdAt: r.created_at,
  };
}

function flowFromRow(r: Selectable<EventFlowsTable>): EventFlow {
  return {
    id: r.id,
    algorithmId: r.algorithm_id,
    kind: r.kind as FlowKind,
    role: r.role as FlowRole,
    clusterId: r.cluster_id,
    topic: r.topic,
    sourceUri: r.source_uri,
    credentialsKind: r.credentials_kind as EventFlow['credentialsKind'],
    credentialsId: r.credentials_id,
    credentialsSecret: r.credentials_secret,
    timeoutSeconds: r.timeout_s === null ? null : Number(r.timeout_s),
    enabled: Number(r.enabled) === 1,
    version: r.version,
    positioned: Number(r.positioned) === 1,
    createdBy: r.created_by ?? '',
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

function deliveryFromRow(r: Selectable<EventDeliveriesTable>): Delivery {
  return {
    id: r.id,
    flowId: r.flow_id,
    algorithmId: r.algorithm_id,
    source: r.source,
    attempts: Number(r.attempts),
    outcome: r.outcome as DeliveryOutcome,
    error: r.error,
    deadLetter: r.dead_letter,
    requestId: r.request_id,
    latencyMs: Number(r.latency_ms),
    createdAt: r.created_at,
  };
}
