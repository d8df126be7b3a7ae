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
 * - A message whose input the call refuses before anything runs (malformed or too deeply nested
 *   JSON, too large, a content type the call API does not take) would be refused on every
 *   receive: it goes to the redrive policy's dead-letter queue at once (with the reason in
 *   attribute `algohost-error`), or is deleted when the queue has none; its record says why.
 * - A role is assumed with the node's own AWS credentials, always with the ExternalId of the
 *   algorithm's owning account and a SourceIdentity naming it: a role whose trust policy
 *   requires one account's ExternalId cannot be used by another account's flow.
 * - A message is invisible for the call's timeout plus a margin while it is delivered, so no
 *   other consumer takes it meanwhile; a node that stops mid-delivery leaves it to reappear
 *   (at-least-once). In a cluster every worker polls the queue, so another worker takes it.
 */
import {
  ChangeMessageVisibilityCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  type Message,
  type MessageAttributeValue,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import type { EventFlow } from '../../domain/events/model.js';
import type { SqsCredentials } from '../../domain/events/queue-credentials.js';
import type { CallOutcome } from '../../domain/events/deliveries.js';
import { QueueSubscriber, type QueueSubscriberDeps } from '../queue-subscriber.js';
import { queueDepth, sqsClient, type SqsPlace } from './client.js';

export interface SqsSubscriberDeps extends QueueSubscriberDeps, SqsPlace {
  credentials: SqsCredentials;
}

/** SQS allows 10 message attributes; the dead-lettered copy adds its reason only when one is free. */
const MAX_MESSAGE_ATTRIBUTES = 10;
const MAX_REASON_CHARS = 1024;

/** Long-poll wait; short enough that stopping never waits long for a receive to return. */
const WAIT_SECONDS = 2;
/** Seconds a message stays invisible beyond its call's timeout. */
const VISIBILITY_MARGIN_S = 30;
const MAX_VISIBILITY_S = 12 * 60 * 60;
/** How often the lag (the queue's ApproximateNumberOfMessages) is asked again while the flow runs. */
const LAG_EVERY_MS = 5000;

export class SqsSubscriber extends QueueSubscriber<Message> {
  protected readonly broker = 'SQS';
  private readonly client: SQSClient;
  private maxReceives: number | null = null;
  private deadLetterArn: string | null = null;
  /** The dead-letter queue's URL, looked up from its ARN the first time a message goes there. */
  private deadLetterUrl: Promise<string> | undefined;
  private lagTimer: ReturnType<typeof setInterval> | undefined;

  constructor(flow: EventFlow, deps: SqsSubscriberDeps) {
    super(flow, deps);
    this.client = sqsClient({ flowId: flow.id, url: flow.sourceUri!, credentials: deps.credentials }, deps, { maxAttempts: 3 });
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
    this.lagTimer = setInterval(() => void this.measureLag(), LAG_EVERY_MS);
    this.lagTimer.unref();
  }

  /** The lag asked again; a failed ask keeps the last (the receive loop reports the queue's failures). */
  private async measureLag(): Promise<void> {
    try {
      this.state.lag = await queueDepth(this.client, this.flow.sourceUri!, this.stopping.signal);
    } catch {
      // Kept as it was.
    }
  }

  protected async receive(max: number, signal: AbortSignal): Promise<Message[]> {
    const received = await this.client.send(
      new ReceiveMessageCommand({
        QueueUrl: this.flow.sourceUri!,
        MaxNumberOfMessages: Math.min(10, max),
        WaitTimeSeconds: WAIT_SECONDS,
        VisibilityTimeout: Math.min(MAX_VISIBILITY_S, Math.ceil(this.timeoutS() + VISIBILITY_MARGIN_S)),
        MessageSystemAttributeNames: ['ApproximateReceiveCount', 'SentTimestamp', 'MessageGroupId'],
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
    clearInterval(this.lagTimer);
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
    if (outcome.kind === 'refused') {
      await this.deadLetterAtOnce(m, receives, outcome);
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

  /**
   * A message refused as invalid input: to the dead-letter queue now (or deleted when the queue
   * has none), never back to the queue, where it would be received and refused again until the
   * redrive policy (if any) moved it. Recorded before it is deleted, as a success is.
   */
  private async deadLetterAtOnce(m: Message, receives: number, outcome: Extract<CallOutcome, { kind: 'refused' }>): Promise<void> {
    const source = m.MessageId ?? '';
    const record = { source, attempts: receives, requestId: null, latencyMs: outcome.latencyMs };
    if (this.deadLetterArn === null) {
      await this.deps.deliveries.record(this.flow, {
        ...record,
        outcome: 'dead_lettered',
        error: `${outcome.error} (deleted: the queue has no dead-letter queue)`,
      });
      await this.client.send(new DeleteMessageCommand({ QueueUrl: this.flow.sourceUri!, ReceiptHandle: m.ReceiptHandle! }));
      return;
    }
    try {
      await this.client.send(
        new SendMessageCommand({
          QueueUrl: await this.deadLetterQueueUrl(this.deadLetterArn),
          MessageBody: m.Body ?? '',
          MessageAttributes: attributesWithReason(m.MessageAttributes, outcome.error),
          // A FIFO dead-letter queue wants the group, and a deduplication id (the original's id
          // makes a second send after a crash one message, not two).
          ...(this.deadLetterArn.endsWith('.fifo')
            ? { MessageGroupId: m.Attributes?.MessageGroupId ?? 'algohost', MessageDeduplicationId: m.MessageId }
            : {}),
        }),
      );
    } catch (err) {
      // Not allowed to send there (the role may only receive): the message goes back at once and
      // the queue's redrive policy moves it after maxReceiveCount receives, each refused at once.
      this.deps.log.warn({ err, flow: this.flow.id, message: source }, `SQS flow ${this.flow.id}: sending to the dead-letter queue failed`);
      await this.client.send(
        new ChangeMessageVisibilityCommand({ QueueUrl: this.flow.sourceUri!, ReceiptHandle: m.ReceiptHandle!, VisibilityTimeout: 0 }),
      );
      const last = this.maxReceives !== null && receives >= this.maxReceives;
      await this.deps.deliveries.record(this.flow, {
        ...record,
        outcome: last ? 'dead_lettered' : 'failed',
        error: `${outcome.error} (sending it to the dead-letter queue failed: ${err instanceof Error ? err.message : String(err)})`,
        deadLetter: last ? this.deadLetterArn : null,
      });
      return;
    }
    await this.deps.deliveries.record(this.flow, {
      ...record,
      outcome: 'dead_lettered',
      error: outcome.error,
      deadLetter: this.deadLetterArn,
    });
    await this.client.send(new DeleteMessageCommand({ QueueUrl: this.flow.sourceUri!, ReceiptHandle: m.ReceiptHandle! }));
  }

  private deadLetterQueueUrl(arn: string): Promise<string> {
    // arn:aws:sqs:<region>:<account>:<queue name>
    const [, , , , account, name] = arn.split(':');
    this.deadLetterUrl ??= this.client
      .send(new GetQueueUrlCommand({ QueueName: name, QueueOwnerAWSAccountId: account }))
      .then((r) => r.QueueUrl!)
      .catch((err: unknown) => {
        this.deadLetterUrl = undefined;
        throw err;
      });
    return this.deadLetterUrl;
  }
}

/** The message's own attributes as SendMessage takes them, and the refusal's reason when there is room. */
function attributesWithReason(
  attributes: Record<string, MessageAttributeValue> | undefined,
  reason: string,
): Record<string, MessageAttributeValue> {
  const out: Record<string, MessageAttributeValue> = {};
  for (const [name, v] of Object.entries(attributes ?? {})) {
    out[name] = {
      DataType: v.DataType,
      ...(v.StringValue !== undefined ? { StringValue: v.StringValue } : { BinaryValue: v.BinaryValue }),
    };
  }
  if (Object.keys(out).length < MAX_MESSAGE_ATTRIBUTES && !('algohost-error' in out)) {
    out['algohost-error'] = { DataType: 'String', StringValue: reason.slice(0, MAX_REASON_CHARS) };
  }
  return out;
}
