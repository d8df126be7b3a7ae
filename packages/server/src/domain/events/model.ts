/**
 * Event Flows (docs/compatibility.md §10): algorithms connected to external brokers. Kafka
 * clusters are connected by cluster admins, who assign an algorithm to a topic as publisher or
 * subscriber; SQS queues are configured per algorithm by its owner. The owner enables a flow and
 * picks the published version it runs.
 */

export const FLOW_ROLES = ['publisher', 'subscriber'] as const;
export type FlowRole = (typeof FLOW_ROLES)[number];

export const SASL_MECHANISMS = ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512'] as const;
export type SaslMechanism = (typeof SASL_MECHANISMS)[number];

/** A Kafka cluster connection. `saslPassword` is ciphertext (SecretBox) and never leaves the domain. */
export interface KafkaCluster {
  id: string;
  /** Unique on the cluster, as admins name it. */
  name: string;
  bootstrapServers: string[];
  tls: boolean;
  /** PEM certificates trusted for TLS besides the system's; null = the system's only. */
  tlsCa: string | null;
  saslMechanism: SaslMechanism | null;
  saslUsername: string | null;
  saslPassword: string | null;
  createdAt: string;
}

/** How to reach a Kafka cluster, with the password decrypted: only for the broker adapters. */
export interface KafkaConnection {
  clusterId: string;
  /** Its name in algohost: what an error about it says. */
  clusterName: string;
  bootstrapServers: string[];
  tls: boolean;
  tlsCa: string | null;
  sasl: { mechanism: SaslMechanism; username: string; password: string } | null;
}

/** A cluster as an operator finds it in an error or a log: its name in algohost, its id and its bootstrap addresses. */
export function describeCluster(c: { id: string; name: string; bootstrapServers: string[] }): string {
  return `"${c.name}" (${c.id}; bootstrap servers ${c.bootstrapServers.join(', ')})`;
}

export type FlowKind = 'kafka' | 'sqs' | 'servicebus';
/** Queue flows: configured per algorithm by its owner. */
export const QUEUE_KINDS = ['sqs', 'servicebus'] as const;
export type QueueKind = (typeof QUEUE_KINDS)[number];

/**
 * One Event Flow: an algorithm bound to a Kafka topic (as publisher or subscriber) or
 * subscribed to an SQS or Azure Service Bus queue. Disabled until its owner enables it with a published version.
 */
export interface EventFlow {
  id: string;
  algorithmId: string;
  kind: FlowKind;
  role: FlowRole;
  /** Kafka: the connected cluster and topic. */
  clusterId: string | null;
  topic: string | null;
  /** Queues: the queue URL (SQS) or URI (Service Bus, sb://<namespace>/<queue>). */
  sourceUri: string | null;
  /**
   * Queues: SQS an IAM role ARN to assume, or static credentials (access key id shown, secret
   * encrypted); Service Bus a shared access policy (its name shown, its key encrypted).
   */
  credentialsKind: 'role' | 'static' | null;
  credentialsId: string | null;
  credentialsSecret: string | null;
  /** The call timeout of each delivery, seconds; null = the default (DEFAULT_FLOW_TIMEOUT_S). */
  timeoutSeconds: number | null;
  enabled: boolean;
  /** The published version (major.minor.patch) the flow runs; null until the owner picks one. */
  version: string | null;
  /**
   * Kafka subscribers: whether the consumer group's starting offsets were fixed (at the end of
   * each partition when the flow was first started), so later starts resume from commits and
   * never skip what arrived while the node was down.
   */
  positioned: boolean;
  createdBy: string;
  createdAt: string;
  updatedAt: string;
}

/** Delivery timeout when the flow sets none: a minute (the call API's own default is 300 s). */
export const DEFAULT_FLOW_TIMEOUT_S = 60;

export type DeliveryOutcome = 'succeeded' | 'failed' | 'dead_lettered' | 'returned';

/** One record or message and what became of it, kept for the Events tab (ALGOHOST_EVENT_DELIVERY_RETENTION). */
export interface Delivery {
  id: string;
  flowId: string;
  algorithmId: string;
  /** Where it came from: `topic/partition@offset` for Kafka, the message id for SQS. */
  source: string;
  attempts: number;
  outcome: DeliveryOutcome;
  /** The last error (algorithm error type and message, or why it was returned). */
  error: string | null;
  /** Kafka: the dead-letter topic it was written to. */
  deadLetter: string | null;
  requestId: string | null;
  latencyMs: number;
  createdAt: string;
}

/**
 * What a flow's consumer reports, for the Events tab and metrics; for a subscriber no node runs,
 * what algohost measured in its broker instead (state `stopped` when disabled, `starting` when
 * enabled and not picked up yet; flow-lag.ts).
 */
export interface ConsumerStatus {
  state: 'starting' | 'running' | 'paused' | 'failed' | 'stopped';
  /** Records behind the end of each partition (Kafka), summed, or messages in the queue; null when unknown. */
  lag: number | null;
  error: string | null;
}

/** The Kafka consumer group of a subscriber flow: its own, so its offsets are its alone. */
export const flowGroupId = (flowId: string): string => `algohost-flow-${flowId}`;
