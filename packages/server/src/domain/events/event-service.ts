/**
 * Event Flows as users and admins see them (docs/compatibility.md §10): Kafka cluster
 * connections and topic assignments (cluster admins), the flows of an algorithm and their
 * delivery records (its owner and organization members), SQS queue flows (the owner), and the
 * event listeners of an account (spec endpoint 7). The workers that run enabled flows are in
 * events/ and jobs/; they read flows through `enabledFlows` and report through the store.
 */
import crypto from 'node:crypto';
import { isoNow, type Clock } from '../clock.js';
import { Errors, forbidden, invalid } from '../errors.js';
import { isAdmin, refuseCallKey, requireAdmin, requireCapability, type Principal } from '../accounts/principal.js';
import type { OwnerAccess } from '../accounts/access.js';
import type { Account } from '../accounts/model.js';
import type { AccountStore } from '../accounts/ports.js';
import type { Algorithm } from '../algorithms/model.js';
import type { AlgorithmStore } from '../algorithms/ports.js';
import type { VersionStore } from '../versions/ports.js';
import type { Page, PageRequest } from '../pagination.js';
import { assertName } from '../names.js';
import { CoalescingBatch } from '../../lib/coalescing-batch.js';
import {
  type ConsumerStatus,
  DEFAULT_FLOW_TIMEOUT_S,
  type Delivery,
  type EventFlow,
  FLOW_ROLES,
  type FlowRole,
  type KafkaCluster,
  type KafkaConnection,
  QUEUE_KINDS,
  type QueueKind,
  SASL_MECHANISMS,
  type SaslMechanism,
} from './model.js';
import type { EventStore, KafkaAdmin, TopicInfo } from './ports.js';
import type { SecretBox } from '../../lib/secret-box.js';

/** The longest a delivery's call may run (the call API's maximum). */
const MAX_FLOW_TIMEOUT_S = 3000;
const MAX_CLUSTER_NAME = 64;
/** Kafka's own rule for topic names. */
const TOPIC_PATTERN = /^[A-Za-z0-9._-]{1,249}$/;
/** host:port, host a name or an IPv4 address or a bracketed IPv6 one. */
const BROKER_PATTERN = /^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252})|\[[0-9A-Fa-f:.]+\]):(\d{1,5})$/;
const MAX_BROKERS = 32;
const MAX_PEM_BYTES = 64 * 1024;
const MAX_CREDENTIAL = 1024;
/** SQS queue URLs at AWS: https://sqs.<region>.amazonaws.com/<account>/<queue> (also the legacy <region>.queue form). */
/** The shape of an SQS queue URL (the OpenAPI document states it): scheme, host, account, queue. */
export const QUEUE_URL_PATTERN = '^https?://[A-Za-z0-9.-]{1,253}(?::[0-9]{1,5})?/[0-9]{12}/[A-Za-z0-9_-]{1,80}(?:\\.fifo)?$';
const AWS_SQS_URL =
  /^https:\/\/(?:sqs\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?|([a-z0-9-]+)\.queue\.amazonaws\.com)\/\d{12}\/[A-Za-z0-9_-]{1,80}(?:\.fifo)?$/;
const ROLE_ARN = /^arn:aws[a-z-]*:iam::\d{12}:role\/[\w+=,.@/-]{1,512}$/;
/** The shape of a Service Bus queue URI (the OpenAPI document states it): sb://<namespace host>[:port]/<queue>. */
export const SERVICEBUS_URI_PATTERN = '^sb://[A-Za-z0-9.-]{1,253}(?::[0-9]{1,5})?/[A-Za-z0-9][A-Za-z0-9._-]{0,259}$';
/** Azure's Service Bus namespaces (public cloud, China, US Government). */
const AZURE_SERVICEBUS_HOST = /^[A-Za-z][A-Za-z0-9-]{4,48}[A-Za-z0-9]\.servicebus\.(?:windows\.net|chinacloudapi\.cn|usgovcloudapi\.net)$/;

/** Whether a host is one of Azure's Service Bus namespaces (spoken to with TLS); others only when allowed. */
export function isAzureServiceBusHost(hostname: string): boolean {
  return AZURE_SERVICEBUS_HOST.test(hostname);
}

export interface ClusterInput {
  name?: unknown;
  bootstrap_servers?: unknown;
  tls?: unknown;
  tls_ca?: unknown;
  sasl?: unknown;
}

export interface AssignmentInput {
  algorithm?: unknown;
  topic?: unknown;
  role?: unknown;
}

export interface FlowChanges {
  enabled?: unknown;
  version?: unknown;
  timeout?: unknown;
}

export interface QueueFlowInput {
  source_type?: unknown;
  source_uri?: unknown;
  credentials?: unknown;
  timeout?: unknown;
}

/** A flow with what the Events tab shows beside it. */
export interface FlowView {
  flow: EventFlow;
  algorithm: { owner: string; name: string };
  cluster: KafkaCluster | null;
  status: ConsumerStatus | null;
  /** SQS flows with a role: what the role's trust policy must require (see AssumeRoleIdentity). */
  assumeRole: AssumeRoleIdentity | null;
}

/**
 * How the node names an account when it assumes an IAM role for that account's SQS flows, so a
 * role answers only its own tenant (the confused-deputy defence AWS documents): every AssumeRole
 * carries the owning account's ExternalId, which the role's trust policy requires, and a
 * SourceIdentity naming the account, which CloudTrail records.
 */
export interface AssumeRoleIdentity {
  /** Derived from the cluster key and the account's id: the same on every node, never another account's. */
  externalId: string;
  /** `algohost-<account name>`. */
  sourceIdentity: string;
}

/** The subject of an ExternalId derivation (SecretBox.derive): changing it changes every ExternalId. */
const EXTERNAL_ID_PURPOSE = 'algohost sqs assume-role external id v1';

/** The trust policy an owner pastes into the role: this cluster's node may assume it only with the owner's ExternalId. */
export function trustPolicyOf(identity: AssumeRoleIdentity): object {
  return {
    Version: '2012-10-17',
    Statement: [
      {
        Effect: 'Allow',
        Principal: { AWS: '<the IAM role or user of the algohost nodes (ask the operator)>' },
        Action: ['sts:AssumeRole', 'sts:SetSourceIdentity'],
        Condition: { StringEquals: { 'sts:ExternalId': identity.externalId } },
      },
    ],
  };
}

/** Spec endpoint 7's element, field for field. */
export interface EventListener {
  id: string;
  sourceType: string;
  sourceURI: string;
  algoName: string;
  algoOwner: string;
  listenerOwner: string;
  credentials: string;
}

export interface EventSettings {
  /**
   * Hosts (host or host:port) besides AWS's own whose SQS queue URLs flows may name
   * (ALGOHOST_SQS_ENDPOINT_ALLOW): a queue URL makes the node connect there, so anything else
   * (the node's own network, metadata services) is refused.
   */
  sqsEndpointAllow: string[];
  /**
   * Hosts (host or host:port) besides Azure's namespaces that Service Bus queue URIs may name
   * (ALGOHOST_SERVICEBUS_ENDPOINT_ALLOW), spoken to in plain AMQP: test endpoints only.
   */
  serviceBusEndpointAllow: string[];
}

export interface EventServiceDeps {
  store: EventStore;
  accounts: AccountStore;
  algorithms: AlgorithmStore;
  versions: VersionStore;
  access: OwnerAccess;
  kafka: KafkaAdmin;
  secrets: SecretBox;
  clock: Clock;
  settings: EventSettings;
  /** What the running consumers report, by flow id (the workers' status board). */
  status?: (flowId: string) => ConsumerStatus | undefined;
  /** A flow was added, changed or removed: the workers and the publisher table reload. */
  onChanged?: () => void;
}

export class EventService {
  private readonly store: EventStore;
  private readonly accounts: AccountStore;
  private readonly algorithms: AlgorithmStore;
  private readonly versions: VersionStore;
  private readonly access: OwnerAccess;
  private readonly kafka: KafkaAdmin;
  private readonly secrets: SecretBox;
  private readonly clock: Clock;
  private readonly settings: EventSettings;
  private readonly status: (flowId: string) => ConsumerStatus | undefined;
  private readonly onChanged: () => void;

  /** 500 rows of 11 columns stay well within SQLite's and PostgreSQL's bounds on parameters. */
  private readonly deliveryWrites = new CoalescingBatch<Delivery>((rows) => this.store.insertDeliveries(rows), { maxItems: 500 });

  constructor(deps: EventServiceDeps) {
    this.store = deps.store;
    this.accounts = deps.accounts;
    this.algorithms = deps.algorithms;
    this.versions = deps.versions;
    this.access = deps.access;
    this.kafka = deps.kafka;
    this.secrets = deps.secrets;
    this.clock = deps.clock;
    this.settings = deps.settings;
    this.status = deps.status ?? (() => undefined);
    this.onChanged = deps.onChanged ?? (() => {});
  }

  // ---- Kafka clusters (cluster admins) ----

  async createCluster(p: Principal, input: ClusterInput): Promise<KafkaCluster> {
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

  async listClusters(p: Principal): Promise<KafkaCluster[]> {
    requireAdmin(p, 'listing Kafka cluster connections');
    return this.store.listClusters();
  }

  async getCluster(p: Principal, idOrName: string): Promise<KafkaCluster> {
    requireAdmin(p, 'reading a Kafka cluster connection');
    return this.requireCluster(idOrName);
  }

  async deleteCluster(p: Principal, idOrName: string): Promise<void> {
    requireAdmin(p, 'removing a Kafka cluster connection');
    const cluster = await this.requireCluster(idOrName);
    await this.store.deleteCluster(cluster.id);
    this.onChanged();
  }

  /** The cluster's topics, asked of the cluster itself (internal topics left out). */
  async listTopics(p: Principal, idOrName: string): Promise<TopicInfo[]> {
    requireAdmin(p, 'listing the topics of a Kafka cluster');
    const cluster = await this.requireCluster(idOrName);
    return this.topicsOf(cluster);
  }

  // ---- Topic assignments (cluster admins) ----

  /** Adds an algorithm to a topic as publisher or subscriber; only published algorithms (Errors row 4). */
  async assign(p: Principal, clusterIdOrName: string, input: AssignmentInput): Promise<FlowView> {
    requireAdmin(p, 'assigning an algorithm to a topic');
    const cluster = await this.requireCluster(clusterIdOrName);
    const role = parseRole(input.role);
    if (typeof input.topic !== 'string' || !TOPIC_PATTERN.test(input.topic)) {
      throw invalid('topic must be a Kafka topic name: 1 to 249 letters, digits, ".", "_" or "-"');
    }
    const topic = input.topic;
    const { owner, algorithm } = await this.requireAlgorithmAddress(input.algorithm);
    if (!(await this.versions.latest(algorithm.id))) throw Errors.algorithmNotPublished({ owner: owner.name, name: algorithm.name });
    const topics = await this.topicsOf(cluster);
    if (!topics.some((t) => t.name === topic)) throw Errors.topicNotFound({ topic, cluster: cluster.name });
    const now = isoNow(this.clock);
    const flow: EventFlow = {
      id: crypto.randomUUID(),
      algorithmId: algorithm.id,
      kind: 'kafka',
      role,
      clusterId: cluster.id,
      topic,
      sourceUri: null,
      credentialsKind: null,
      credentialsId: null,
      credentialsSecret: null,
      timeoutSeconds: null,
      enabled: false,
      version: null,
      positioned: false,
      createdBy: p.account.id,
      createdAt: now,
      updatedAt: now,
    };
    await this.store.insertFlow(flow);
    this.onChanged();
    return this.view(flow, owner, algorithm, cluster);
  }

  async listAssignments(p: Principal, clusterIdOrName: string): Promise<FlowView[]> {
    requireAdmin(p, 'listing the assignments of a Kafka cluster');
    const cluster = await this.requireCluster(clusterIdOrName);
    const out: FlowView[] = [];
    for (const flow of await this.store.listFlowsOfCluster(cluster.id)) {
      const algorithm = await this.algorithms.findById(flow.algorithmId);
      if (algorithm) out.push(this.view(flow, { name: algorithm.ownerName }, algorithm, cluster));
    }
    return out;
  }

  async unassign(p: Principal, clusterIdOrName: string, flowId: string): Promise<void> {
    requireAdmin(p, 'removing an algorithm from a topic');
    const cluster = await this.requireCluster(clusterIdOrName);
    const flow = await this.store.findFlow(flowId);
    if (!flow || flow.clusterId !== cluster.id) throw Errors.eventFlowNotFound({ flow: flowId });
    await this.store.deleteFlow(flow.id);
    this.onChanged();
  }

  // ---- The flows of one algorithm (its owner and members) ----

  async listFlows(p: Principal, ownerName: string, name: string): Promise<FlowView[]> {
    const { owner, algorithm } = await this.requireMember(p, ownerName, name);
    const clusters = new Map((await this.store.listClusters()).map((c) => [c.id, c]));
    return (await this.store.listFlowsOfAlgorithm(algorithm.id)).map((f) =>
      this.view(f, owner, algorithm, clusters.get(f.clusterId ?? '') ?? null),
    );
  }

  async getFlow(p: Principal, ownerName: string, name: string, flowId: string): Promise<FlowView> {
    const { owner, algorithm } = await this.requireMember(p, ownerName, name);
    const flow = await this.requireFlowOf(algorithm, owner, flowId);
    return this.view(flow, owner, algorithm, flow.clusterId ? ((await this.store.findCluster(flow.clusterId)) ?? null) : null);
  }

  /**
   * Enables or disables a flow, picks its version, sets its timeout. Enabling without a
   * version picks the latest published one; a version must be published (major.minor.patch).
   */
  async updateFlow(p: Principal, ownerName: string, name: string, flowId: string, changes: FlowChanges): Promise<FlowView> {
    const { owner, algorithm } = await this.requireManaged(p, ownerName, name);
    const flow = await this.requireFlowOf(algorithm, owner, flowId);
    if (changes.enabled !== undefined && typeof changes.enabled !== 'boolean') throw invalid('enabled must be true or false');
    let version = flow.version;
    if (changes.version !== undefined && changes.version !== null) {
      if (typeof changes.version !== 'string') throw invalid('version must be a published version such as "1.2.3"');
      const published = (await this.versions.listAll(algorithm.id)).find((v) => v.semanticVersion === changes.version);
      if (!published) throw Errors.versionNotPublished({ version: changes.version, owner: owner.name, name: algorithm.name });
      version = published.semanticVersion;
    } else if (changes.version === null) version = null;
    const enabled = (changes.enabled as boolean | undefined) ?? flow.enabled;
    if (enabled && version === null) {
      const latest = await this.versions.latest(algorithm.id);
      if (!latest) throw Errors.algorithmNotPublished({ owner: owner.name, name: algorithm.name });
      version = latest.semanticVersion;
    }
    const timeoutSeconds = changes.timeout === undefined ? flow.timeoutSeconds : parseTimeout(changes.timeout);
    const updated: EventFlow = { ...flow, enabled, version, timeoutSeconds, updatedAt: isoNow(this.clock) };
    await this.store.updateFlow(flow.id, { enabled, version, timeoutSeconds, updatedAt: updated.updatedAt });
    this.onChanged();
    return this.view(updated, owner, algorithm, flow.clusterId ? ((await this.store.findCluster(flow.clusterId)) ?? null) : null);
  }

  /**
   * An SQS queue flow, configured by the owner (no cluster-level step): each message of the
   * queue becomes a call. The queue's own redrive policy decides the dead-letter queue.
   */
  async createQueueFlow(p: Principal, ownerName: string, name: string, input: QueueFlowInput): Promise<FlowView> {
    const { owner, algorithm } = await this.requireManaged(p, ownerName, name);
    if (!(QUEUE_KINDS as readonly unknown[]).includes(input.source_type)) {
      throw invalid(`source_type must be one of ${QUEUE_KINDS.join(', ')} (the queue services supported natively)`);
    }
    const kind = input.source_type as QueueKind;
    const sourceUri = kind === 'sqs' ? this.parseQueueUrl(input.source_uri) : this.parseServiceBusUri(input.source_uri);
    const credentials = kind === 'sqs' ? parseQueueCredentials(input.credentials) : parseServiceBusCredentials(input.credentials);
    const now = isoNow(this.clock);
    const flow: EventFlow = {
      id: crypto.randomUUID(),
      algorithmId: algorithm.id,
      kind,
      role: 'subscriber',
      clusterId: null,
      topic: null,
      sourceUri,
      credentialsKind: credentials.kind,
      credentialsId: credentials.id,
      credentialsSecret: credentials.secret === null ? null : this.secrets.seal(credentials.secret),
      timeoutSeconds: input.timeout === undefined ? null : parseTimeout(input.timeout),
      enabled: false,
      version: null,
      positioned: true,
      createdBy: p.account.id,
      createdAt: now,
      updatedAt: now,
    };
    if ((await this.store.listFlowsOfAlgorithm(algorithm.id)).some((f) => f.kind === kind && f.sourceUri === sourceUri)) {
      throw Errors.eventFlowExists({ what: `a flow of ${owner.name}/${algorithm.name} from ${sourceUri}` });
    }
    await this.store.insertFlow(flow);
    this.onChanged();
    return this.view(flow, owner, algorithm, null);
  }

  /** Removes a queue flow (Kafka assignments are removed by cluster admins; owners disable them). */
  async deleteFlow(p: Principal, ownerName: string, name: string, flowId: string): Promise<void> {
    const { owner, algorithm } = await this.requireManaged(p, ownerName, name);
    const flow = await this.requireFlowOf(algorithm, owner, flowId);
    if (flow.kind === 'kafka' && !isAdmin(p)) {
      throw forbidden('a Kafka topic assignment is removed by a cluster admin; its owner may disable it (PATCH with {"enabled": false})');
    }
    await this.store.deleteFlow(flow.id);
    this.onChanged();
  }

  async listDeliveries(
    p: Principal,
    ownerName: string,
    name: string,
    opts: { flowId?: string; page: PageRequest },
  ): Promise<Page<Delivery>> {
    const { algorithm } = await this.requireMember(p, ownerName, name);
    return this.store.listDeliveries(algorithm.id, opts);
  }

  // ---- Event listeners (spec endpoint 7) ----

  /**
   * The subscriber flows configured natively on the algorithms an account owns (never the
   * whole cluster, Limits 5). `account` is the account's id (endpoint 6's `id`) or its name.
   * The account itself, members of an organization and admins may list them.
   */
  async listeners(p: Principal, account: string): Promise<EventListener[]> {
    refuseCallKey(p, 'listing event listeners');
    const owner = (await this.accounts.findById(account)) ?? (await this.accounts.findByName(account));
    if (!owner || !(await this.access.canManage(p, owner))) throw Errors.accountNotFound({ name: account });
    const clusters = new Map((await this.store.listClusters()).map((c) => [c.id, c]));
    return (await this.store.listFlowsOfOwner(owner.id))
      .filter((f) => f.role === 'subscriber')
      .map((f) => {
        const cluster = f.clusterId ? clusters.get(f.clusterId) : undefined;
        return {
          id: f.id,
          sourceType: f.kind === 'kafka' ? 'KAFKA' : f.kind === 'sqs' ? 'SQS' : 'SERVICEBUS',
          sourceURI: f.kind === 'kafka' ? `kafka://${cluster?.bootstrapServers.join(',') ?? ''}/${f.topic}` : f.sourceUri!,
          algoName: f.algorithmName,
          algoOwner: owner.name,
          listenerOwner: f.createdByName ?? owner.name,
          credentials: f.kind === 'kafka' ? `cluster:${cluster?.name ?? ''}` : (f.credentialsId ?? ''),
        };
      });
  }

  // ---- For the workers (no caller) ----

  /** How to reach a cluster, its password decrypted. */
  async connection(clusterId: string): Promise<KafkaConnection> {
    const cluster = await this.store.findCluster(clusterId);
    if (!cluster) throw Errors.eventClusterNotFound({ cluster: clusterId });
    return this.connectionOf(cluster);
  }

  /**
   * An SQS flow's credentials: a role to assume as the algorithm's owning account (its
   * ExternalId and SourceIdentity), or static keys (decrypted).
   */
  async queueCredentials(
    flow: EventFlow,
  ): Promise<({ roleArn: string } & AssumeRoleIdentity) | { accessKeyId: string; secretAccessKey: string }> {
    if (flow.credentialsKind === 'role') {
      const algorithm = await this.algorithms.findById(flow.algorithmId);
      if (!algorithm) throw Errors.eventFlowNotFound({ flow: flow.id });
      return { roleArn: flow.credentialsId!, ...this.assumeRoleIdentity({ id: algorithm.ownerId, name: algorithm.ownerName }) };
    }
    return { accessKeyId: flow.credentialsId!, secretAccessKey: this.secrets.open(flow.credentialsSecret!) };
  }

  /**
   * What an account's SQS flows send when they assume a role, for the account itself, its
   * organization's members and admins (the owner puts the ExternalId in the role's trust policy
   * before naming the role in a flow). Others get the account's 404, as for its listeners.
   */
  async assumeRoleSettings(p: Principal, account: string): Promise<{ account: Account; identity: AssumeRoleIdentity }> {
    refuseCallKey(p, 'reading the ExternalId of an account');
    const owner = (await this.accounts.findById(account)) ?? (await this.accounts.findByName(account));
    if (!owner || !(await this.access.canManage(p, owner))) throw Errors.accountNotFound({ name: account });
    return { account: owner, identity: this.assumeRoleIdentity(owner) };
  }

  private assumeRoleIdentity(owner: { id: string; name: string }): AssumeRoleIdentity {
    // 192 bits of the HMAC, in ExternalId's alphabet ([\w+=,.@:/-], 2 to 1224 characters).
    const externalId = `algohost-${this.secrets.derive(EXTERNAL_ID_PURPOSE, owner.id).toString('base64url').slice(0, 32)}`;
    // Account names are letters, digits and "_", at most 30: SourceIdentity's alphabet, within its 64.
    return { externalId, sourceIdentity: `algohost-${owner.name}` };
  }

  /** A Service Bus flow's shared access policy, its key decrypted. */
  serviceBusCredentials(flow: EventFlow): { keyName: string; key: string } {
    return { keyName: flow.credentialsId!, key: this.secrets.open(flow.credentialsSecret!) };
  }

  enabledFlows(): Promise<EventFlow[]> {
    return this.store.listEnabledFlows();
  }

  async markPositioned(flowId: string): Promise<void> {
    await this.store.updateFlow(flowId, { positioned: true });
  }

  /** Where a flow's calls go and as whom: the owner of the algorithm, its chosen version. */
  async target(flow: EventFlow): Promise<{ owner: Account; algorithm: Algorithm; path: string; timeoutSeconds: number } | undefined> {
    const algorithm = await this.algorithms.findById(flow.algorithmId);
    const owner = algorithm && (await this.accounts.findById(algorithm.ownerId));
    if (!algorithm || !owner || !flow.version) return undefined;
    return {
      owner,
      algorithm,
      path: `${owner.name}/${algorithm.name}/${flow.version}`,
      timeoutSeconds: flow.timeoutSeconds ?? DEFAULT_FLOW_TIMEOUT_S,
    };
  }

  /** Resolves once the record is stored; records arriving together are stored in one statement. */
  recordDelivery(delivery: Delivery): Promise<void> {
    return this.deliveryWrites.add(delivery);
  }

  /** Deletes delivery records older than `keepMs`. */
  deleteOldDeliveries(keepMs: number): Promise<number> {
    return this.store.deleteDeliveriesBefore(new Date(this.clock().getTime() - keepMs).toISOString());
  }

  // ---- helpers ----

  private connectionOf(cluster: KafkaCluster): KafkaConnection {
    return {
      clusterId: cluster.id,
      bootstrapServers: cluster.bootstrapServers,
      tls: cluster.tls,
      tlsCa: cluster.tlsCa,
      sasl:
        cluster.saslMechanism && cluster.saslUsername && cluster.saslPassword
          ? { mechanism: cluster.saslMechanism, username: cluster.saslUsername, password: this.secrets.open(cluster.saslPassword) }
          : null,
    };
  }

  private async topicsOf(cluster: KafkaCluster): Promise<TopicInfo[]> {
    try {
      return await this.kafka.listTopics(this.connectionOf(cluster));
    } catch (err) {
      throw Errors.brokerUnreachable({ cluster: cluster.name, reason: err instanceof Error ? err.message : String(err) });
    }
  }

  private view(flow: EventFlow, owner: { name: string }, algorithm: Algorithm, cluster: KafkaCluster | null): FlowView {
    return {
      flow,
      algorithm: { owner: owner.name, name: algorithm.name },
      cluster,
      status: flow.enabled && flow.role === 'subscriber' ? (this.status(flow.id) ?? null) : null,
      assumeRole:
        flow.kind === 'sqs' && flow.credentialsKind === 'role'
          ? this.assumeRoleIdentity({ id: algorithm.ownerId, name: owner.name })
          : null,
    };
  }

  private async requireCluster(idOrName: string): Promise<KafkaCluster> {
    const cluster = await this.store.findCluster(idOrName);
    if (!cluster) throw Errors.eventClusterNotFound({ cluster: idOrName });
    return cluster;
  }

  private async requireFlowOf(algorithm: Algorithm, owner: Account, flowId: string): Promise<EventFlow> {
    const flow = await this.store.findFlow(flowId);
    if (!flow || flow.algorithmId !== algorithm.id)
      throw Errors.eventFlowNotFound({ flow: flowId, owner: owner.name, name: algorithm.name });
    return flow;
  }

  /** `owner/name` as an admin names an algorithm in an assignment. */
  private async requireAlgorithmAddress(value: unknown): Promise<{ owner: Account; algorithm: Algorithm }> {
    const parts = typeof value === 'string' ? value.split('/') : [];
    if (parts.length !== 2 || !parts[0] || !parts[1]) throw invalid('algorithm must be "owner/name"');
    const owner = await this.accounts.findByName(parts[0]);
    const algorithm = owner && (await this.algorithms.find(owner.id, parts[1]));
    if (!owner || !algorithm) throw Errors.algorithmNotFound({ owner: parts[0], name: parts[1] });
    return { owner, algorithm };
  }

  /** Owners, organization members and admins see an algorithm's flows; others get the algorithm's 404. */
  private async requireMember(p: Principal, ownerName: string, name: string): Promise<{ owner: Account; algorithm: Algorithm }> {
    refuseCallKey(p, 'reading event flows');
    const owner = await this.accounts.findByName(ownerName);
    const algorithm = owner && (await this.algorithms.find(owner.id, name));
    if (!owner || !algorithm || !(await this.access.canManage(p, owner))) throw Errors.algorithmNotFound({ owner: ownerName, name });
    return { owner, algorithm };
  }

  private async requireManaged(p: Principal, ownerName: string, name: string): Promise<{ owner: Account; algorithm: Algorithm }> {
    requireCapability(p, 'manage_algorithms');
    return this.requireMember(p, ownerName, name);
  }

  private parseServiceBusUri(value: unknown): string {
    if (typeof value !== 'string' || value.length > 2048 || !new RegExp(SERVICEBUS_URI_PATTERN).test(value)) {
      throw invalid(
        `source_uri ${JSON.stringify(value)} is not a Service Bus queue URI: give sb://<namespace>.servicebus.windows.net/<queue>`,
      );
    }
    let url: URL | undefined;
    try {
      url = new URL(value);
    } catch {
      // Of the URI's shape but not a URL (a port above 65535): no host this cluster may reach.
      url = undefined;
    }
    if (url && isAzureServiceBusHost(url.hostname) && url.port === '') return value;
    // Of the URI's shape, but not one this cluster may reach: a refusal of policy.
    if (!url || !this.settings.serviceBusEndpointAllow.some((h) => h === url.host || h === url.hostname)) {
      throw forbidden(
        `source_uri "${value}" is not a Service Bus namespace this cluster may reach: use sb://<namespace>.servicebus.windows.net/<queue>` +
          ' (other endpoints only when the operator allows their host in ALGOHOST_SERVICEBUS_ENDPOINT_ALLOW)',
      );
    }
    return value;
  }

  private parseQueueUrl(value: unknown): string {
    if (typeof value !== 'string' || value.length > 2048) throw invalid('source_uri must be the queue URL');
    if (AWS_SQS_URL.test(value)) return value;
    if (!new RegExp(QUEUE_URL_PATTERN).test(value)) {
      throw invalid(`source_uri "${value}" is not a queue URL: give https://sqs.<region>.amazonaws.com/<account>/<queue>`);
    }
    let url: URL | undefined;
    try {
      url = new URL(value);
    } catch {
      url = undefined;
    }
    // Of the queue URL's shape, but not one this cluster may reach: a refusal of policy.
    const allowed = url && this.settings.sqsEndpointAllow.some((h) => h === url.host || h === url.hostname);
    if (!url || !allowed || url.username || url.password || url.search || url.hash) {
      throw forbidden(
        `source_uri "${value}" is not an SQS queue URL this cluster may reach: use https://sqs.<region>.amazonaws.com/<account>/<queue>` +
          ' (other endpoints only when the operator allows their host in ALGOHOST_SQS_ENDPOINT_ALLOW)',
      );
    }
    return url.toString();
  }
}

/** A shared access policy: its name (shown as the listener's credentials) and key (sealed). */
function parseServiceBusCredentials(value: unknown): { kind: 'static'; id: string; secret: string } {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || 'role_arn' in value) {
    throw invalid(
      'credentials of a Service Bus queue must be a shared access policy: {"shared_access_key_name", "shared_access_key"} (managed identities are not supported)',
    );
  }
  const v = value as Record<string, unknown>;
  const keyName = requiredString('credentials.shared_access_key_name', v.shared_access_key_name);
  const key = requiredString('credentials.shared_access_key', v.shared_access_key);
  // Both go into a connection string: its separators would change what it says.
  if (/[;=]/.test(keyName) || key.includes(';'))
    throw invalid('the shared access key name and key must not contain ";" (nor the name "=")');
  return { kind: 'static', id: keyName, secret: key };
}

function parseRole(value: unknown): FlowRole {
  if (!(FLOW_ROLES as readonly unknown[]).includes(value)) throw invalid(`role must be one of ${FLOW_ROLES.join(', ')}`);
  return value as FlowRole;
}

function parseTimeout(value: unknown): number | null {
  if (value === null) return null;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || value > MAX_FLOW_TIMEOUT_S) {
    throw invalid(
      `timeout must be a number of seconds above 0 and at most ${MAX_FLOW_TIMEOUT_S} (null = the default, ${DEFAULT_FLOW_TIMEOUT_S})`,
    );
  }
  return value;
}

function optionalString(what: string, value: unknown, max: number): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' || value.length === 0 || value.length > max)
    throw invalid(`${what} must be a string of 1 to ${max} characters`);
  return value;
}

function requiredString(what: string, value: unknown): string {
  const s = optionalString(what, value, MAX_CREDENTIAL);
  if (s === null) throw invalid(`${what} is required`);
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) < 0x20) throw invalid(`${what} must not contain control characters`);
  return s;
}

function parseSasl(value: unknown): { mechanism: SaslMechanism; username: string; password: string } | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'object' || Array.isArray(value)) throw invalid('sasl must be {mechanism, username, password}');
  const v = value as Record<string, unknown>;
  if (!(SASL_MECHANISMS as readonly unknown[]).includes(v.mechanism)) {
    throw invalid(`sasl.mechanism must be one of ${SASL_MECHANISMS.join(', ')}`);
  }
  return {
    mechanism: v.mechanism as SaslMechanism,
    username: requiredString('sasl.username', v.username),
    password: requiredString('sasl.password', v.password),
  };
}

function parseQueueCredentials(value: unknown): { kind: 'role' | 'static'; id: string; secret: string | null } {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalid('credentials must be {"role_arn": "arn:aws:iam::…:role/…"} or {"access_key_id", "secret_access_key"}');
  }
  const v = value as Record<string, unknown>;
  if (v.role_arn !== undefined) {
    if (typeof v.role_arn !== 'string' || !ROLE_ARN.test(v.role_arn))
      throw invalid('credentials.role_arn must be an IAM role ARN (arn:aws:iam::<account>:role/<name>)');
    return { kind: 'role', id: v.role_arn, secret: null };
  }
  return {
    kind: 'static',
    id: requiredString('credentials.access_key_id', v.access_key_id),
    secret: requiredString('credentials.secret_access_key', v.secret_access_key),
  };
}
