/**
 * What the queue subscribers (SQS, Service Bus) share: a receive loop that takes at most as many
 * messages as the algorithm may have runners, stops taking more for a while when the algorithm
 * says it is saturated, backs off after a failed receive, and on stop lets the deliveries in
 * progress end. Each broker's subclass says how to receive and how to settle a message.
 */
import type { FlowDeliveries, CallOutcome } from '../domain/events/deliveries.js';
import { DEFAULT_FLOW_TIMEOUT_S, type ConsumerStatus, type EventFlow } from '../domain/events/model.js';
import { backoffMs, sleepUnlessAborted, type RetryPolicy, type WorkerLog } from './delivery-policy.js';

export interface QueueSubscriberDeps {
  deliveries: FlowDeliveries;
  /** Messages in delivery at once (the algorithm's runners). */
  concurrency: number;
  retry: RetryPolicy;
  log: WorkerLog;
}

/** After a failed receive (the queue unreachable, credentials refused), the loop waits this long. */
const RECEIVE_RETRY_MS = 1000;

export abstract class QueueSubscriber<M> {
  protected readonly state: ConsumerStatus = { state: 'starting', lag: null, error: null };
  protected readonly stopping = new AbortController();
  private readonly inFlight = new Set<Promise<void>>();
  private loop: Promise<void> | undefined;
  /** Saturated deliveries whose pause has not ended: no new receives while any is. */
  private saturated = 0;

  /** The broker's name in log lines ("SQS", "Service Bus"). */
  protected abstract readonly broker: string;

  constructor(
    readonly flow: EventFlow,
    protected readonly deps: QueueSubscriberDeps,
  ) {}

  get status(): ConsumerStatus {
    return { ...this.state, state: this.state.state === 'running' && this.saturated > 0 ? 'paused' : this.state.state };
  }

  get failed(): boolean {
    return this.state.state === 'failed';
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    await this.loop;
    await Promise.allSettled([...this.inFlight]);
    await this.close();
  }

  /** Takes up to `max` messages (a long poll that returns early when `signal` aborts). */
  protected abstract receive(max: number, signal: AbortSignal): Promise<M[]>;
  /** Makes the call of one message and settles it with the broker; the delivery is recorded. */
  protected abstract deliver(message: M): Promise<void>;
  /** The message's id, for log lines. */
  protected abstract idOf(message: M): string | undefined;
  /** Lets go of the broker's client once nothing is in delivery. */
  protected abstract close(): Promise<void>;

  /** Starts the receive loop; the subclass calls it at the end of its start(). */
  protected startReceiving(): void {
    this.state.state = 'running';
    this.loop = this.receiveLoop();
  }

  protected timeoutS(): number {
    return this.flow.timeoutSeconds ?? DEFAULT_FLOW_TIMEOUT_S;
  }

  /**
   * How long a message that did not succeed waits before it is tried again: the saturation pause
   * (and receiving stops meanwhile) or the backoff of its attempt.
   */
  protected delayAfter(outcome: Exclude<CallOutcome, { kind: 'succeeded' | 'refused' }>, attempt: number): number {
    const { retry } = this.deps;
    if (outcome.kind !== 'saturated') return backoffMs(retry, attempt);
    this.saturated++;
    setTimeout(() => this.saturated--, retry.saturatedMs).unref();
    return retry.saturatedMs;
  }

  protected sleep(ms: number): Promise<boolean> {
    return sleepUnlessAborted(ms, this.stopping.signal);
  }

  protected fail(err: unknown): void {
    if (this.stopping.signal.aborted) return;
    this.state.state = 'failed';
    // Named in the status itself: the SDKs' errors say what failed ("connect ECONNREFUSED 10.0.0.5:443") but not where.
    this.state.error = `the ${this.broker} queue ${this.flow.sourceUri}: ${messageOf(err)}`;
    this.deps.log.warn({ err, flow: this.flow.id, queue: this.flow.sourceUri }, `${this.broker} flow ${this.flow.id}: ${this.state.error}`);
  }

  private async receiveLoop(): Promise<void> {
    const signal = this.stopping.signal;
    while (!signal.aborted) {
      const free = this.deps.concurrency - this.inFlight.size;
      if (free <= 0 || this.saturated > 0) {
        // Full, or the algorithm said it is: wait for a delivery to end before taking more.
        await Promise.race([...this.inFlight, this.sleep(this.deps.retry.saturatedMs)]);
        continue;
      }
      let messages: M[];
      try {
        messages = await this.receive(free, signal);
        if (this.state.state === 'failed') {
          this.state.state = 'running';
          this.state.error = null;
        }
      } catch (err) {
        if (signal.aborted) return;
        this.fail(err);
        await this.sleep(RECEIVE_RETRY_MS);
        continue;
      }
      for (const m of messages) {
        const work = this.deliver(m).catch((err: unknown) =>
          this.deps.log.error(
            { err, flow: this.flow.id, message: this.idOf(m) },
            `${this.broker} flow ${this.flow.id}: a delivery failed to complete`,
          ),
        );
        this.inFlight.add(work);
        void work.finally(() => this.inFlight.delete(work));
      }
    }
  }
}

/** The Azure SDK's retries end in an AggregateError with an empty message: the reason is its last error's. */
function messageOf(err: unknown): string {
  if (err instanceof AggregateError && err.errors.length > 0) return messageOf(err.errors[err.errors.length - 1]);
  return err instanceof Error ? err.message || err.name : String(err);
}
