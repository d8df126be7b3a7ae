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
 * - The lock is renewed by the SDK for the call's timeout plus a margin; a node that stops
 *   mid-delivery leaves the lock to expire and the message to be delivered again (at least once).
 *
 * Hosts other than Azure's (only those the operator allows) are spoken to in plain AMQP, the
 * SDK's development-emulator mode: for test endpoints, never for a production namespace.
 */
import { ServiceBusClient, type ServiceBusReceivedMessage, type ServiceBusReceiver } from '@azure/service-bus';
import type { FlowDeliveries } from '../../domain/events/deliveries.js';
import { DEFAULT_FLOW_TIMEOUT_S, type ConsumerStatus, type EventFlow } from '../../domain/events/model.js';
import { isAzureServiceBusHost } from '../../domain/events/event-service.js';
import type { RetryPolicy, WorkerLog } from '../kafka/subscriber.js';

export interface ServiceBusSubscriberDeps {
  deliveries: FlowDeliveries;
  /** A shared access policy of the namespace or the queue (Listen rights are enough). */
  credentials: { keyName: string; key: string };
  /** Messages in delivery at once (the algorithm's runners). */
  concurrency: number;
  retry: RetryPolicy;
  log: WorkerLog;
}

/** How long one receive waits for messages; short enough that stopping never waits long. */
const WAIT_MS = 2000;
/** The lock is kept beyond the call's timeout by this much (saturation and backoff waits included). */
const LOCK_MARGIN_MS = 5 * 60 * 1000;

export class ServiceBusSubscriber {
  private readonly state: ConsumerStatus = { state: 'starting', lag: null, error: null };
  private readonly client: ServiceBusClient;
  private readonly queue: string;
  private receiver: ServiceBusReceiver | undefined;
  private readonly stopping = new AbortController();
  private readonly inFlight = new Set<Promise<void>>();
  private loop: Promise<void> | undefined;
  private saturated = 0;

  constructor(
    readonly flow: EventFlow,
    private readonly deps: ServiceBusSubscriberDeps,
  ) {
    const url = new URL(flow.sourceUri!);
    this.queue = decodeURIComponent(url.pathname.slice(1));
    const emulator = isAzureServiceBusHost(url.hostname) ? '' : ';UseDevelopmentEmulator=true';
    const { keyName, key } = deps.credentials;
    this.client = new ServiceBusClient(`Endpoint=sb://${url.host}/;SharedAccessKeyName=${keyName};SharedAccessKey=${key}${emulator}`, {
      // A few quick retries (the SDK's default waits 30 s between them): a refusal shows in seconds.
      retryOptions: { maxRetries: 2, retryDelayInMs: 1000, maxRetryDelayInMs: 5000, timeoutInMs: 15_000 },
    });
  }

  get status(): ConsumerStatus {
    return { ...this.state, state: this.state.state === 'running' && this.saturated > 0 ? 'paused' : this.state.state };
  }

  get failed(): boolean {
    return this.state.state === 'failed';
  }

  async start(): Promise<void> {
    this.receiver = this.client.createReceiver(this.queue, {
      receiveMode: 'peekLock',
      maxAutoLockRenewalDurationInMs: this.timeoutS() * 1000 + LOCK_MARGIN_MS,
    });
    this.state.state = 'running';
    this.loop = this.receiveLoop(this.receiver);
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    await this.loop;
    await Promise.allSettled([...this.inFlight]);
    await this.receiver?.close().catch(() => {});
    await this.client.close().catch(() => {});
  }

  private async receiveLoop(receiver: ServiceBusReceiver): Promise<void> {
    const signal = this.stopping.signal;
    while (!signal.aborted) {
      const free = this.deps.concurrency - this.inFlight.size;
      if (free <= 0 || this.saturated > 0) {
        // Full, or the algorithm said it is: wait for a delivery to end before taking more.
        await Promise.race([...this.inFlight, this.sleep(this.deps.retry.saturatedMs)]);
        continue;
      }
      let messages: ServiceBusReceivedMessage[];
      try {
        messages = await receiver.receiveMessages(free, { maxWaitTimeInMs: WAIT_MS, abortSignal: signal });
        if (this.state.state === 'failed') {
          this.state.state = 'running';
          this.state.error = null;
        }
      } catch (err) {
        if (signal.aborted) return;
        this.fail(err);
        await this.sleep(1000);
        continue;
      }
      for (const m of messages) {
        const work = this.deliver(receiver, m).catch((err: unknown) =>
          this.deps.log.error(
            { err, flow: this.flow.id, message: m.messageId },
            `Service Bus flow ${this.flow.id}: a delivery failed to complete`,
          ),
        );
        this.inFlight.add(work);
        void work.finally(() => this.inFlight.delete(work));
      }
    }
  }

  private async deliver(receiver: ServiceBusReceiver, m: ServiceBusReceivedMessage): Promise<void> {
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
      await receiver.completeMessage(m);
      await this.deps.deliveries.record(this.flow, {
        source: messageId,
        attempts: attempt,
        outcome: 'succeeded',
        requestId: outcome.requestId,
        latencyMs: outcome.latencyMs,
      });
      return;
    }
    const { retry } = this.deps;
    const saturated = outcome.kind === 'saturated';
    const delayMs = saturated ? retry.saturatedMs : Math.min(retry.maxMs, retry.baseMs * 2 ** (attempt - 1));
    if (saturated) this.markSaturated(retry.saturatedMs);
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

  /** Stops receiving for a while: the algorithm is saturated. */
  private markSaturated(ms: number): void {
    this.saturated++;
    setTimeout(() => this.saturated--, ms).unref();
  }

  private timeoutS(): number {
    return this.flow.timeoutSeconds ?? DEFAULT_FLOW_TIMEOUT_S;
  }

  private sleep(ms: number): Promise<void> {
    const signal = this.stopping.signal;
    if (signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener('abort', done, { once: true });
    });
  }

  private fail(err: unknown): void {
    if (this.stopping.signal.aborted) return;
    this.state.state = 'failed';
    this.state.error = messageOf(err);
    this.deps.log.warn({ err, flow: this.flow.id, queue: this.flow.sourceUri }, `Service Bus flow ${this.flow.id}: ${this.state.error}`);
  }
}

/** The SDK's retries end in an AggregateError with an empty message: the reason is its last error's. */
function messageOf(err: unknown): string {
  if (err instanceof AggregateError && err.errors.length > 0) return messageOf(err.errors[err.errors.length - 1]);
  return err instanceof Error ? err.message || err.name : String(err);
}

/** The SDK decodes the AMQP body: bytes stay bytes, text is UTF-8, anything else its JSON. */
function bodyOf(body: unknown): Buffer {
  if (Buffer.isBuffer(body)) return body;
  if (body instanceof Uint8Array) return Buffer.from(body);
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  return Buffer.from(JSON.stringify(body ?? null), 'utf8');
}
