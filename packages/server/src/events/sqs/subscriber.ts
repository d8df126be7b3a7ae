/**
 * An SQS subscriber flow (docs/compatibility.md §8 and §10): long-polls the queue, each message a
 * call of the flow's version, at most as many at once as the algorithm may have runners.
 *
 * - Success deletes the message.
 * - Saturation (the algorithm's runners or its owner's call limit are full) returns the message
 *   to the queue with a delay (its visibility timeout set to RetryPolicy.saturatedMs).
 * - A failed call returns it with an exponential backoff by its receive count.
 * - Either way the queue's own redrive policy moves it to its dead-letter queue after
 *   maxReceiveCount receives; the delivery record of that last receive says `dead_lettered`.
 * - A message is invisible for the call's timeout plus a margin while it is delivered, so no
 *   other consumer takes it meanwhile; a node that stops mid-delivery leaves it to reappear
 *   (at-least-once). In a cluster every worker polls the queue, so another worker takes it.
 */
import {
  ChangeMessageVisibilityCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { fromTemporaryCredentials } from '@aws-sdk/credential-providers';
import type { EventFlow } from '../../domain/events/model.js';
import { QueueSubscriber, type QueueSubscriberDeps } from '../queue-subscriber.js';

export interface SqsSubscriberDeps extends QueueSubscriberDeps {
  credentials: { roleArn: string } | { accessKeyId: string; secretAccessKey: string };
  /** Region for queue URLs outside AWS (ElasticMQ and other SQS-compatible servers). */
  defaultRegion: string;
}

/** Long-poll wait; short enough that stopping never waits long for a receive to return. */
const WAIT_SECONDS = 2;
/** Seconds a message stays invisible beyond its call's timeout. */
const VISIBILITY_MARGIN_S = 30;
const MAX_VISIBILITY_S = 12 * 60 * 60;

export class SqsSubscriber extends QueueSubscriber<Message> {
  protected readonly broker = 'SQS';
  private readonly client: SQSClient;
  private maxReceives: number | null = null;
  private deadLetterArn: string | null = null;

  constructor(flow: EventFlow, deps: SqsSubscriberDeps) {
    super(flow, deps);
    const url = new URL(flow.sourceUri!);
    const aws = /^sqs\.([a-z0-9-]+)\.amazonaws\.com/.exec(url.host) ?? /^([a-z0-9-]+)\.queue\.amazonaws\.com/.exec(url.host);
    const credentials =
      'roleArn' in deps.credentials
        ? fromTemporaryCredentials({ params: { RoleArn: deps.credentials.roleArn, RoleSessionName: `algohost-flow-${flow.id}` } })
        : { accessKeyId: deps.credentials.accessKeyId, secretAccessKey: deps.credentials.secretAccessKey };
    this.client = new SQSClient({
      region: aws?.[1] ?? deps.defaultRegion,
      ...(aws ? {} : { endpoint: url.origin }),
      credentials,
      maxAttempts: 3,
    });
  }

  async start(): Promise<void> {
    try {
      // The queue's redrive policy, to say in the record which receive was the last.
      const attrs = await this.client.send(
        new GetQueueAttributesCommand({ QueueUrl: this.flow.sourceUri!, AttributeNames: ['RedrivePolicy', 'ApproximateNumberOfMessages'] }),
        { abortSignal: this.stopping.signal },
      );
      const redrive = attrs.Attributes?.RedrivePolicy ? (JSON.parse(attrs.Attributes.RedrivePolicy) as Record<string, unknown>) : undefined;
      this.maxReceives = redrive?.maxReceiveCount !== undefined ? Number(redrive.maxReceiveCount) : null;
      this.deadLetterArn = typeof redrive?.deadLetterTargetArn === 'string' ? redrive.deadLetterTargetArn : null;
      this.state.lag = Number(attrs.Attributes?.ApproximateNumberOfMessages ?? 0);
    } catch (err) {
      this.fail(err);
      throw err;
    }
    this.startReceiving();
  }

  protected async receive(max: number, signal: AbortSignal): Promise<Message[]> {
    const received = await this.client.send(
      new ReceiveMessageCommand({
        QueueUrl: this.flow.sourceUri!,
        MaxNumberOfMessages: Math.min(10, max),
        WaitTimeSeconds: WAIT_SECONDS,
        VisibilityTimeout: Math.min(MAX_VISIBILITY_S, Math.ceil(this.timeoutS() + VISIBILITY_MARGIN_S)),
        MessageSystemAttributeNames: ['ApproximateReceiveCount', 'SentTimestamp'],
        MessageAttributeNames: ['All'],
      }),
      { abortSignal: signal },
    );
    return received.Messages ?? [];
  }

  protected idOf(m: Message): string | undefined {
    return m.MessageId;
  }

  protected async close(): Promise<void> {
    this.client.destroy();
  }

  protected async deliver(m: Message): Promise<void> {
    const receives = Number(m.Attributes?.ApproximateReceiveCount ?? 1);
    const contentType =
      m.MessageAttributes?.['content-type']?.StringValue ?? m.MessageAttributes?.['Content-Type']?.StringValue ?? undefined;
    const event: Record<string, string> = {
      source: 'sqs',
      queue: this.flow.sourceUri!,
      message_id: m.MessageId ?? '',
      receive_count: String(receives),
    };
    const outcome = await this.deps.deliveries.call(this.flow, { body: Buffer.from(m.Body ?? '', 'utf8'), contentType, event });
    const source = m.MessageId ?? '';
    if (outcome.kind === 'succeeded') {
      // Recorded, then deleted: a node that dies between the two leaves the message to reappear
      // after its visibility timeout (at least once), never a delivery without a record.
      await this.deps.deliveries.record(this.flow, {
        source,
        attempts: receives,
        outcome: 'succeeded',
        requestId: outcome.requestId,
        latencyMs: outcome.latencyMs,
      });
      await this.client.send(new DeleteMessageCommand({ QueueUrl: this.flow.sourceUri!, ReceiptHandle: m.ReceiptHandle! }));
      return;
    }
    const saturated = outcome.kind === 'saturated';
    const delayMs = this.delayAfter(outcome, receives);
    // Back to the queue after the delay: visible again then, received again (or dead-lettered by the queue).
    await this.client.send(
      new ChangeMessageVisibilityCommand({
        QueueUrl: this.flow.sourceUri!,
        ReceiptHandle: m.ReceiptHandle!,
        VisibilityTimeout: Math.ceil(delayMs / 1000),
      }),
    );
    const last = this.maxReceives !== null && receives >= this.maxReceives;
    await this.deps.deliveries.record(this.flow, {
      source,
      attempts: receives,
      outcome: last ? 'dead_lettered' : saturated ? 'returned' : 'failed',
      error: outcome.error,
      deadLetter: last ? this.deadLetterArn : null,
      requestId: outcome.kind === 'failed' ? outcome.requestId : null,
      latencyMs: outcome.latencyMs,
    });
  }
}
