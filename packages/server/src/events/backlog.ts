/**
 * The BacklogProbe port (domain/events/ports.ts): what waits in a broker for a subscriber flow
 * that no node runs, asked with short-lived clients (Kafka: an admin client of the cluster's
 * connection; SQS: a client holding the flow's own credentials).
 */
import type { KafkaConnection } from '../domain/events/model.js';
import type { BacklogProbe } from '../domain/events/ports.js';
import type { SqsCredentials } from '../domain/events/queue-credentials.js';
import { KafkaBacklog } from './kafka/backlog.js';
import { queueDepth, sqsClient, type SqsPlace } from './sqs/client.js';

/** An SQS connection or request that takes longer gives up (the caller's deadline is a few seconds). */
const SQS_TIMEOUT_MS = 2500;

export class BrokerBacklog implements BacklogProbe {
  private readonly kafkaBacklog = new KafkaBacklog();

  constructor(private readonly sqsPlace: SqsPlace) {}

  kafka(connection: KafkaConnection, target: { groupId: string; topic: string }, signal: AbortSignal): Promise<number> {
    return this.kafkaBacklog.measure(connection, target, signal);
  }

  async sqs(queue: { flowId: string; url: string; credentials: SqsCredentials }, signal: AbortSignal): Promise<number> {
    const client = sqsClient(queue, this.sqsPlace, { maxAttempts: 1, timeoutMs: SQS_TIMEOUT_MS });
    try {
      return await queueDepth(client, queue.url, signal);
    } finally {
      client.destroy();
    }
  }
}
