/**
 * Event Flows as users and admins see them (docs/compatibility.md §10): topic assignments
 * (cluster admins), the flows of an algorithm and their delivery records (its owner and
 * organization members), queue flows (the owner), and the event listeners of an account (spec
 * endpoint 7).
 */
import crypto from 'node:crypto';
import { isoNow, type Clock } from '../clock.js';
import type { ChangeNotifier } from '../changes.js';
import { Errors, forbidden, invalid } from '../errors.js';
import { isAdmin, refuseCallKey, requireAdmin, requireCapability, type Principal } from '../accounts/principal.js';
import type { OwnerAccess } from '../accounts/access.js';
import type { Account } from '../accounts/model.js';
import type { AccountStore } from '../accounts/ports.js';
import type { Algorithm } from '../algorithms/model.js';
import type { AlgorithmStore } from '../algorithms/ports.js';
import type { VersionStore } from '../versions/ports.js';
import type { Page, PageRequest } from '../pagination.js';
import { type ConsumerStatus, type Delivery, type EventFlow, type KafkaCluster, QUEUE_KINDS, type QueueKind } from './model.js';
import type { EventStore } from './ports.js';
import type { EventClusters } from './clusters.js';
import type { AssumeRoleIdentity, QueueCredentials } from './queue-credentials.js';
import type { FlowLag } from './flow-lag.js';
import {
  type AssignmentInput,
  type FlowChanges,
  parseQueueCredentials,
  parseQueueUrl,
  parseRole,
  parseServiceBusCredentials,
  parseServiceBusUri,
  parseTimeout,
  type QueueFlowInput,
  TOPIC_PATTERN,
} from './flow-input.js';

/** A flow with what the Events tab shows beside it. */
export interface FlowView {
  flow: EventFlow;
  algorithm: { owner: string; name: string };
  cluster: KafkaCluster | null;
  /**
   * What the nodes running it report; for a subscriber no node runs, its state (stopped or
   * starting) and the lag measured in its broker (flow-lag.ts); null for a publisher no node sends for.
   */
  status: ConsumerStatus | null;
  /** SQS flows with a role: what the role's trust policy must require (see AssumeRoleIdentity). */
  assumeRole: AssumeRoleIdentity | null;
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

/** What FlowService is made from (named, so the composition root reads as a list of parts). */
export interface FlowServiceDeps {
  store: EventStore;
  accounts: AccountStore;
  algorithms: AlgorithmStore;
  versions: VersionStore;
  access: OwnerAccess;
  clusters: EventClusters;
  credentials: QueueCredentials;
  clock: Clock;
  settings: EventSettings;
  /** What the running consumers report, by flow id (the workers' status board). */
  status: (flowId: string) => ConsumerStatus | undefined;
  /** Measures what waits for a subscriber no node runs. */
  lag: FlowLag;
  /** Told when a flow is added, changed or removed. */
  changes: ChangeNotifier;
}

export class FlowService {
  private readonly store: EventStore;
  private readonly accounts: AccountStore;
  private readonly algorithms: AlgorithmStore;
  private readonly versions: VersionStore;
  private readonly access: OwnerAccess;
  private readonly clusters: EventClusters;
  private readonly credentials: QueueCredentials;
  private readonly clock: Clock;
  private readonly settings: EventSettings;
  private readonly status: (flowId: string) => ConsumerStatus | undefined;
  private readonly lag: FlowLag;
  private readonly changes: ChangeNotifier;

  constructor(deps: FlowServiceDeps) {
    this.store = deps.store;
    this.accounts = deps.accounts;
    this.algorithms = deps.algorithms;
    this.versions = deps.versions;
    this.access = deps.access;
    this.clusters = deps.clusters;
    this.credentials = deps.credentials;
    this.clock = deps.clock;
    this.settings = deps.settings;
    this.status = deps.status;
    this.lag = deps.lag;
    this.changes = deps.changes;
  }

  // ---- Topic assignments (cluster admins) ----

  /** Adds an algorithm to a topic as publisher or subscriber; only published algorithms (Errors row 4). */
  async assign(p: Principal, clusterIdOrName: string, input: AssignmentInput): Promise<FlowView> {
    requireAdmin(p, 'assigning an algorithm to a topic');
    const cluster = await this.clusters.require(clusterIdOrName);
    const role = parseRole(input.role);
    if (typeof input.topic !== 'string' || !TOPIC_PATTERN.test(input.topic)) {
      throw invalid('topic must be a Kafka topic name: 1 to 249 letters, digits, ".", "_" or "-"');
    }
    const topic = input.topic;
    const { owner, algorithm } = await this.requireAlgorithmAddress(input.algorithm);
    if (!(await this.versions.latest(algorithm.id))) throw Errors.algorithmNotPublished({ owner: owner.name, name: algorithm.name });
    const topics = await this.clusters.topicsOf(cluster);
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
    this.changes.publish({ kind: 'flow_changed', flowId: flow.id });
    return this.view(flow, owner, algorithm, cluster);
  }

  async listAssignments(p: Principal, clusterIdOrName: string): Promise<FlowView[]> {
    requireAdmin(p, 'listing the assignments of a Kafka cluster');
    const cluster = await this.clusters.require(clusterIdOrName);
    const out: Promise<FlowView>[] = [];
    for (const flow of await this.store.listFlowsOfCluster(cluster.id)) {
      const algorithm = await this.algorithms.findById(flow.algorithmId);
      if (algorithm) out.push(this.view(flow, { name: algorithm.ownerName }, algorithm, cluster));
    }
    return Promise.all(out);
  }

  async unassign(p: Principal, clusterIdOrName: string, flowId: string): Promise<void> {
    requireAdmin(p, 'removing an algorithm from a topic');
    const cluster = await this.clusters.require(clusterIdOrName);
    const flow = await this.store.findFlow(flowId);
    if (!flow || flow.clusterId !== cluster.id) throw Errors.eventFlowNotFound({ flow: flowId });
    await this.store.deleteFlow(flow.id);
    this.changes.publish({ kind: 'flow_changed', flowId: flow.id });
  }

  // ---- The flows of one algorithm (its owner and members) ----

  async listFlows(p: Principal, ownerName: string, name: string): Promise<FlowView[]> {
    const { owner, algorithm } = await this.requireMember(p, ownerName, name);
    const clusters = new Map((await this.store.listClusters()).map((c) => [c.id, c]));
    // Measured side by side: a listing waits at most one measurement's deadline.
    return Promise.all(
      (await this.store.listFlowsOfAlgorithm(algorithm.id)).map((f) =>
        this.view(f, owner, algorithm, clusters.get(f.clusterId ?? '') ?? null),
      ),
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
    this.changes.publish({ kind: 'flow_changed', flowId: flow.id });
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
    const sourceUri =
      kind === 'sqs'
        ? parseQueueUrl(input.source_uri, this.settings.sqsEndpointAllow)
        : parseServiceBusUri(input.source_uri, this.settings.serviceBusEndpointAllow);
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
      credentialsSecret: credentials.secret === null ? null : this.credentials.seal(credentials.secret),
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
    this.changes.publish({ kind: 'flow_changed', flowId: flow.id });
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
    this.changes.publish({ kind: 'flow_changed', flowId: flow.id });
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

  // ---- helpers ----

  private async view(flow: EventFlow, owner: { name: string }, algorithm: Algorithm, cluster: KafkaCluster | null): Promise<FlowView> {
    return {
      flow,
      algorithm: { owner: owner.name, name: algorithm.name },
      cluster,
      status: await this.statusOf(flow),
      assumeRole:
        flow.kind === 'sqs' && flow.credentialsKind === 'role'
          ? this.credentials.assumeRoleIdentity({ id: algorithm.ownerId, name: owner.name })
          : null,
    };
  }

  /** What the nodes report while one runs the flow; else a subscriber's measured lag, a publisher's null. */
  private async statusOf(flow: EventFlow): Promise<ConsumerStatus | null> {
    const reported = flow.enabled ? this.status(flow.id) : undefined;
    if (reported) return reported;
    return flow.role === 'subscriber' ? this.lag.statusOf(flow) : null;
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
}
