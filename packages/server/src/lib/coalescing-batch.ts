/**
 * Writes that cost per request rather than per item (a database insert, a Kafka produce or
 * offset commit) coalesce here: while one flush is in flight, items handed in wait and go out
 * together in the next one. At a low rate an item goes alone and at once (no added latency); under
 * load the batches grow by themselves, with no timer to tune. Nagle's idea, for requests.
 */
export interface CoalescingBatchOptions {
  /** At most this many items per flush (a database's bound on parameters, a request size). */
  maxItems?: number;
  /** A pause after each flush before the next one starts: fewer, larger flushes (offset commits). */
  gapMs?: number;
}

interface Waiting<T> {
  item: T;
  resolve: () => void;
  reject: (err: unknown) => void;
}

export class CoalescingBatch<T> {
  private queue: Waiting<T>[] = [];
  private running: Promise<void> | undefined;
  private readonly maxItems: number;
  private readonly gapMs: number;

  constructor(
    /** Writes one batch; its outcome (done or the error) is each of the batch's items' outcome. */
    private readonly flush: (items: T[]) => Promise<void>,
    options: CoalescingBatchOptions = {},
  ) {
    this.maxItems = options.maxItems ?? Number.POSITIVE_INFINITY;
    this.gapMs = options.gapMs ?? 0;
  }

  /** Resolves once the batch that carried `item` is written; rejects with that batch's error. */
  add(item: T): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.running ??= this.run();
    });
  }

  /** Resolves once every item handed in so far is written or failed. */
  async settled(): Promise<void> {
    while (this.running) await this.running;
  }

  private async run(): Promise<void> {
    try {
      // The rest of this turn of the event loop joins the first batch.
      await new Promise<void>((resolve) => setImmediate(resolve));
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, this.maxItems);
        try {
          await this.flush(batch.map((w) => w.item));
          for (const w of batch) w.resolve();
        } catch (err) {
          for (const w of batch) w.reject(err);
        }
        if (this.gapMs > 0 && this.queue.length > 0) await new Promise<void>((resolve) => setTimeout(resolve, this.gapMs));
      }
    } finally {
      this.running = undefined;
    }
  }
}
