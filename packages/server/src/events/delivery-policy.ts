/** What every subscriber flow (Kafka, SQS, Service Bus) shares: its retry policy, waits and log. */

export interface RetryPolicy {
  /** Calls per record before it is dead-lettered (1 = no retry). */
  attempts: number;
  /** Backoff before the second attempt; doubled each time, up to maxMs. */
  baseMs: number;
  maxMs: number;
  /** How long a record or message waits before it is tried again when the algorithm is saturated. */
  saturatedMs: number;
}

/** The calls a worker makes on a pino logger. */
export interface WorkerLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** The wait before the given attempt's retry: exponential from baseMs, capped at maxMs. */
export function backoffMs(retry: RetryPolicy, attempt: number): number {
  return Math.min(retry.maxMs, retry.baseMs * 2 ** (attempt - 1));
}

/** Waits `ms`, unless `signal` aborts first; true when the whole wait passed. */
export function sleepUnlessAborted(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve(!signal.aborted);
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
