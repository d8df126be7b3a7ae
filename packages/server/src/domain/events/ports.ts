import type { Page, PageRequest } from '../pagination.js';
import type { Delivery, EventFlow, KafkaCluster, KafkaConnection } from './model.js';
import type { SqsCredentials } from './queue-credentials.js';

/** Kafka cluster connections, flows and delivery records (the metadata database). */
export interface EventStore {
  insertCluster(cluster: KafkaCluster): Promise<void>;
  listClusters(): Promise<KafkaCluster[]>;
  findCluster(idOrName: string): Promise<KafkaCluster | undefined>;
  /** Deleting a cluster deletes its flows (and their deliveries). */
  deleteCluster(id: string): Promise<void>;

  /** Throws DomainError conflict when the same (cluster, topic, algorithm, role) exists. */
  insertFlow(flow: EventFlow): Promise<void>;
  updateFlow(
    id: string,
    changes: Partial<Pick<EventFlow, 'enabled' | 'version' | 'positioned' | 'timeoutSeconds' | 'updatedAt'>>,
  ): Promise<void>;
  findFlow(id: string): Promise<EventFlow | undefined>;
  deleteFlow(id: string): Promise<void>;
  listFlowsOfAlgorithm(algorithmId: string): Promise<EventFlow[]>;
  listFlowsOfCluster(clusterId: string): Promise<EventFlow[]>;
  /** Flows of the algorithms an account owns, oldest first (event listeners). */
  listFlowsOfOwner(ownerId: string): Promise<(EventFlow & { algorithmName: string; createdByName: string | null })[]>;
  /** Every enabled flow of the cluster (what the workers run). */
  listEnabledFlows(): Promise<EventFlow[]>;

  insertDeliveries(deliveries: Delivery[]): Promise<void>;
  /** Newest first; `flowId` narrows to one flow. */
  listDeliveries(algorithmId: string, opts: { flowId?: string; page: PageRequest }): Promise<Page<Delivery>>;
  deleteDeliveriesBefore(iso: string): Promise<number>;
}

export interface TopicInfo {
  name: string;
  partitions: number;
}

/** What the domain asks of a Kafka cluster directly (listing); consumers and producers run in the workers. */
export interface KafkaAdmin {
  listTopics(connection: KafkaConnection): Promise<TopicInfo[]>;
}

/**
 * How much waits for a subscriber flow in its broker, asked from outside its consumer: what the
 * Events tab shows for a flow no node runs (flow-lag.ts). Each answers within the deadline's
 * signal or lets go when it aborts; a failure is an Error saying what failed (not naming where:
 * the caller does).
 */
export interface BacklogProbe {
  /**
   * Kafka: the records a consumer group would read, summed over the topic's partitions: each
   * partition's end offset less the group's committed offset, or less the partition's earliest
   * offset where the group has committed none (where the flow's consumer starts then).
   */
  kafka(connection: KafkaConnection, target: { groupId: string; topic: string }, signal: AbortSignal): Promise<number>;
  /** SQS: the queue's ApproximateNumberOfMessages, asked with the flow's own credentials only. */
  sqs(queue: { flowId: string; url: string; credentials: SqsCredentials }, signal: AbortSignal): Promise<number>;
}
