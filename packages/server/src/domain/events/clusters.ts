/**
 * Kafka cluster connections (cluster admins): connecting, listing, removing a cluster and
 * reading its topics; and how the node reaches one, its password decrypted (the workers, the
 * producers of publisher flows and Insights).
 */
import crypto from 'node:crypto';
import { isoNow, type Clock } from '../clock.js';
import { Errors, invalid } from '../errors.js';
import type { ChangeNotifier } from '../changes.js';
import { requireAdmin, type Principal } from '../accounts/principal.js';
import { assertName } from '../names.js';
import { describeCluster, type KafkaCluster, type KafkaConnection } from './model.js';
import type { EventStore, KafkaAdmin, TopicInfo } from './ports.js';
import type { SecretBox } from '../../lib/secret-box.js';
import {
  BROKER_PATTERN,
  type ClusterInput,
  MAX_BROKERS,
  MAX_CLUSTER_NAME,
  MAX_PEM_BYTES,
  optionalString,
  parseSasl,
} from './flow-input.js';

export class EventClusters {
  constructor(
    private readonly store: EventStore,
    private readonly kafka: KafkaAdmin,
    private readonly secrets: SecretBox,
    private readonly clock: Clock,
    /** Told when a cluster is removed (and its flows with it). */
    private readonly changes: ChangeNotifier,
  ) {}

  async create(p: Principal, input: ClusterInput): Promise<KafkaCluster> {
    requireAdmin(p, 'connecting a Kafka cluster');
    const name = assertName('name', input.name, MAX_CLUSTER_NAME);
    const servers = input.bootstrap_servers;
    if (!Array.isArray(servers) || servers.length === 0 || servers.length > MAX_BROKERS) {
      throw invalid(`bootstrap_servers must be a list of 1 to ${MAX_BROKERS} host:port entries`);
    }
    for (const s of servers) {
      const m = typeof s === 'string' ? BROKER_PATTERN.exec(s) : null;
      if (!m || Number(m[1]) < 1 || Number(m[1]) > 65535) throw invalid(`bootstrap server ${JSON.stringify(s)} is not host:port`);
    }
    if (input.tls !== undefined && typeof input.tls !== 'boolean') throw invalid('tls must be true or false');
    const tlsCa = optionalString('tls_ca', input.tls_ca, MAX_PEM_BYTES);
    if (tlsCa !== null && !tlsCa.includes('-----BEGIN CERTIFICATE-----')) throw invalid('tls_ca must hold PEM certificates');
    if (tlsCa !== null && input.tls !== true) throw invalid('tls_ca needs tls: true');
    const sasl = parseSasl(input.sasl);
    if ((await this.store.findCluster(name)) !== undefined) throw Errors.eventClusterExists({ name });
    const cluster: KafkaCluster = {
      id: crypto.randomUUID(),
      name,
      bootstrapServers: servers as string[],
      tls: input.tls === true,
      tlsCa,
      saslMechanism: sasl?.mechanism ?? null,
      saslUsername: sasl?.username ?? null,
      saslPassword: sasl ? this.secrets.seal(sasl.password) : null,
      createdAt: isoNow(this.clock),
    };
    await this.store.insertCluster(cluster);
    return cluster;
  }

  async list(p: Principal): Promise<KafkaCluster[]> {
    requireAdmin(p, 'listing Kafka cluster connections');
    return this.store.listClusters();
  }

  async get(p: Principal, idOrName: string): Promise<KafkaCluster> {
    requireAdmin(p, 'reading a Kafka cluster connection');
    return this.require(idOrName);
  }

  async delete(p: Principal, idOrName: string): Promise<void> {
    requireAdmin(p, 'removing a Kafka cluster connection');
    const cluster = await this.require(idOrName);
    await this.store.deleteCluster(cluster.id);
    this.changes.publish({ kind: 'event_cluster_removed', clusterId: cluster.id });
  }

  /** The cluster's topics, asked of the cluster itself (internal topics left out). */
  async listTopics(p: Principal, idOrName: string): Promise<TopicInfo[]> {
    requireAdmin(p, 'listing the topics of a Kafka cluster');
    const cluster = await this.require(idOrName);
    return this.topicsOf(cluster);
  }

  /** How to reach a cluster, its password decrypted. */
  async connection(clusterId: string): Promise<KafkaConnection> {
    const cluster = await this.store.findCluster(clusterId);
    if (!cluster) throw Errors.eventClusterNotFound({ cluster: clusterId });
    return this.connectionOf(cluster);
  }

  private connectionOf(cluster: KafkaCluster): KafkaConnection {
    return {
      clusterId: cluster.id,
      clusterName: cluster.name,
      bootstrapServers: cluster.bootstrapServers,
      tls: cluster.tls,
      tlsCa: cluster.tlsCa,
      sasl:
        cluster.saslMechanism && cluster.saslUsername && cluster.saslPassword
          ? { mechanism: cluster.saslMechanism, username: cluster.saslUsername, password: this.secrets.open(cluster.saslPassword) }
          : null,
    };
  }

  /** The cluster's topics as its brokers list them (refused as unreachable when they do not answer). */
  async topicsOf(cluster: KafkaCluster): Promise<TopicInfo[]> {
    try {
      return await this.kafka.listTopics(this.connectionOf(cluster));
    } catch (err) {
      throw Errors.brokerUnreachable({ cluster: describeCluster(cluster), reason: err instanceof Error ? err.message : String(err) });
    }
  }

  /** A cluster by id or name, or its 404. */
  async require(idOrName: string): Promise<KafkaCluster> {
    const cluster = await this.store.findCluster(idOrName);
    if (!cluster) throw Errors.eventClusterNotFound({ cluster: idOrName });
    return cluster;
  }
}
