/**
 * An Azure Service Bus queue flow (docs/compatibility.md §10), through `@azure/service-bus` in
 * peek-lock mode: each message a call of the flow's version, at most as many at once as the
 * algorithm may have runners.
 *
 * - Success completes the message.
 * - Saturation (the algorithm's runners or its owner's call limit are full) keeps the message
 *   locked for RetryPolicy.saturatedMs, then abandons it: it returns to the queue with its
 *   delivery count up. A failed call abandons it after an exponential backoff by that count.
 * - Either way the queue's own max delivery count moves it to its dead-letter sub-queue
 *   (`<queue>/$DeadLetterQueue`, reason MaxDeliveryCountExceeded).
 * - A message whose input the call refuses before anything runs (malformed or too deeply nested
 *   JSON…) is dead-lettered at once (reason InputRefused, the refusal as its description).
 * - The lock is renewed by the SDK for the call's timeout plus a margin; a node that stops
 *   mid-delivery leaves the lock to expire and the message to be delivered again (at least once).
 *
 * Hosts other than Azure's (only those the operator allows) are spoken to in plain AMQP, the
 * SDK's development-emulator mode: for test endpoints, never for a production namespace.
 */
import { ServiceBusClient, type ServiceBusReceivedMessage, type ServiceBusReceiver } from '@azure/service-bus';
import type { EventFlow } from '../../domain/events/model.js';
import { isAzureServiceBusHost } from '../../domain/events/flow-input.js';
import { QueueSubscriber, type QueueSubscriberDeps } from '../queue-subscriber.js';

export interface ServiceBusSubscriberDeps extends QueueSubscriberDeps {
  /** A shared access policy of the namespace or the queue (Listen rights are enough). */
  credentials: { keyName: string; key: string };
}

/** How long one receive waits for messages; short enough that stopping never waits long. */
const WAIT_MS = 2000;
/** The lock is kept beyond the call's timeout by this much (saturation and backoff waits included). */
const LOCK_MARGIN_MS = 5 * 60 * 1000;

export class ServiceBusSubscriber extends QueueSubscriber<ServiceBusReceivedMessage> {
  protected readonly broker = 'Service Bus';
  private readonly client: ServiceBusClient;
  private readonly queue: string;
  private receiver: ServiceBusReceiver | undefined;

  constructor(flow: EventFlow, deps: ServiceBusSubscriberDeps) {
    super(flow, deps);
    const url = new URL(flow.sourceUri!);
    this.queue = decodeURIComponent(url.pathname.slice(1));
    const emulator = isAzureServiceBusHost(url.hostname) ? '' : ';UseDevelopmentEmulator=true';
    const { keyName, key } = deps.credentials;
    this.client = new ServiceBusClient(`Endpoint=sb://${url.host}/;SharedAccessKeyName=${keyName};SharedAccessKey=${key}${emulator}`, {
      // A few quick retries (the SDK's default waits 30 s between them): a refusal shows in seconds.
      retryOptions: { maxRetries: 2, retryDelayInMs: 1000, maxRetryDelayInMs: 5000, timeoutInMs: 15_000 },
    });
  }

  async start(): Promise<void> {
    this.receiver = this.client.createReceiver(this.queue, {
      receiveMode: 'peekLock',
      maxAutoLockRenewalDurationInMs: this.timeoutS() * 1000 + LOCK_MARGIN_MS,
    });
    this.startReceiving();
  }

  protected receive(max: number, signal: AbortSignal): Promise<ServiceBusReceivedMessage[]> {
    return this.receiver!.receiveMessages(max, { maxWaitTimeInMs: WAIT_MS, abortSignal: signal });
  }

  protected idOf(m: ServiceBusReceivedMessage): string | undefined {
    return m.messageId === undefined ? undefined : String(m.messageId);
  }

  protected async close(): Promise<void> {
    await this.receiver?.close().catch(() => {});
    await this.client.close().catch(() => {});
  }

  protected async deliver(m: ServiceBusReceivedMessage): Promise<void> {
    const receiver = this.receiver!;
    // The AMQP header's count of earlier deliveries: this is delivery number count + 1.
    const attempt = (m.deliveryCount ?? 0) + 1;
    const messageId = m.messageId === undefined ? '' : String(m.messageId);
    const event: Record<string, string> = {
      source: 'servicebus',
      queue: this.flow.sourceUri!,
      message_id: messageId,
      delivery_count: String(attempt),
      ...(m.sequenceNumber !== undefined ? { sequence_number: m.sequenceNumber.toString() } : {}),
    };
    const outcome = await this.deps.deliveries.call(this.flow, { body: bodyOf(m.body), contentType: m.contentType, event });
    if (outcome.kind === 'succeeded') {
      // Recorded, then completed: a node that dies between the two leaves the message to be
      // delivered again when its lock expires (at least once), never a delivery without a record.
      await this.deps.deliveries.record(this.flow, {
        source: messageId,
        attempts: attempt,
        outcome: 'succeeded',
        requestId: outcome.requestId,
        latencyMs: outcome.latencyMs,
      });
      await receiver.completeMessage(m);
      return;
    }
    if (outcome.kind === 'refused') {
      // Refused as invalid input: it would be refused on every delivery, so to the dead-letter
      // sub-queue now, with the reason, rather than abandoned until the max delivery count.
      await this.deps.deliveries.record(this.flow, {
        source: messageId,
        attempts: attempt,
        outcome: 'dead_lettered',
        error: outcome.error,
        deadLetter: `${this.queue}/$DeadLetterQueue`,
        latencyMs: outcome.latencyMs,
      });
      await receiver.deadLetterMessage(m, { deadLetterReason: 'InputRefused', deadLetterErrorDescription: outcome.error.slice(0, 4096) });
      return;
    }
    const saturated = outcome.kind === 'saturated';
    const delayMs = this.delayAfter(outcome, attempt);
    // Held (locked) for the delay, then abandoned: back on the queue, or dead-lettered by its max delivery count.
    await this.sleep(delayMs);
    await receiver.abandonMessage(m);
    await this.deps.deliveries.record(this.flow, {
      source: messageId,
      attempts: attempt,
      outcome: saturated ? 'returned' : 'failed',
      error: outcome.error,
      requestId: outcome.kind === 'failed' ? outcome.requestId : null,
      latencyMs: outcome.latencyMs,
    });
  }
}

/** The SDK decodes the AMQP body: bytes stay bytes, text is UTF-8, anything else its JSON. */
function bodyOf(body: unknown): Buffer {
  if (Buffer.isBuffer(body)) return body;
  if (body instanceof Uint8Array) return Buffer.from(body);
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  return Buffer.from(JSON.stringify(body ?? null), 'utf8');
}
