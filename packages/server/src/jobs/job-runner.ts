/**
 * Runs the node's background jobs (the catalog is `catalog.ts`): starts them in the order given,
 * stops them in the reverse order, and logs every failure with the job's name. One job never
 * runs twice at once; a run that throws is logged and the job keeps its schedule.
 *
 * - An `interval` job runs `everyMs` after its previous run ended (so a slow run never piles up
 *   behind itself); `everyMs` ≤ 0 means it never runs on its own.
 * - A `queue` job runs once at start (to drain what is already queued), then whenever its
 *   trigger is woken; wakes that arrive while it runs make it run once more. With `everyMs`
 *   it also runs that long after its previous run ended (for changes its trigger cannot see:
 *   another node's, or a failure to retry).
 *
 * Stopping a job: no new run starts, the current run's signal is aborted (a run may end early
 * on it, or ignore it) and the run is awaited, then the job's own `stop` releases what it holds.
 */
import type { QueueSignal } from '../domain/work-queue.js';

/** The calls the runner makes on a pino logger (Fastify's `app.log` is one). */
export interface JobLogger {
  debug(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

interface JobCommon {
  /** Dotted, used in logs: `build.schedule`, `data.sweep`. */
  name: string;
  /** What it does, in one line (logged at start, debug level). */
  description: string;
  /**
   * Once, before the job is scheduled, awaited by `start` (recovering what a previous process
   * left). A failure fails the start.
   */
  prepare?: () => Promise<void>;
  /** One run. */
  run: (signal: AbortSignal) => Promise<unknown>;
  /** A run still going after this long has its signal aborted and is logged (it is still awaited). */
  timeoutMs?: number;
  /** After scheduling stopped and the current run ended: release what the job holds. */
  stop?: () => Promise<void>;
}

interface IntervalJob extends JobCommon {
  kind: 'interval';
  everyMs: number;
}

interface QueueJob extends JobCommon {
  kind: 'queue';
  trigger: JobTrigger;
  everyMs?: number;
}

export type Job = IntervalJob | QueueJob;

/**
 * The wake-up of a queue job, made before the services so a service can take it as its
 * `QueueSignal`. Wakes before the job starts are dropped: the job drains the queue when it starts.
 */
export class JobTrigger implements QueueSignal {
  private listener: (() => void) | undefined;

  wake(): void {
    this.listener?.();
  }

  /** @internal the runner's hook; undefined unbinds. */
  bind(listener: (() => void) | undefined): void {
    this.listener = listener;
  }
}

class Scheduled {
  private current: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private controller = new AbortController();

  constructor(
    readonly job: Job,
    private readonly log: JobLogger,
  ) {}

  start(): void {
    this.log.debug(
      { job: this.job.name, kind: this.job.kind, ...(this.job.kind === 'interval' ? { everyMs: this.job.everyMs } : {}) },
      this.job.description,
    );
    if (this.job.kind === 'queue') {
      this.job.trigger.bind(() => this.runSoon());
      this.runSoon();
    } else this.scheduleNext();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    if (this.job.kind === 'queue') this.job.trigger.bind(undefined);
    this.controller.abort(new Error(`job ${this.job.name} is stopping`));
    await this.current;
    await this.job.stop?.();
  }

  private scheduleNext(): void {
    const every = this.job.everyMs ?? 0;
    if (this.stopped || every <= 0) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.runSoon(), every);
    this.timer.unref();
  }

  private runSoon(): void {
    if (this.stopped) return;
    if (this.current) {
      this.again = true;
      return;
    }
    this.current = this.runLoop().finally(() => {
      this.current = undefined;
      this.scheduleNext();
    });
  }

  private async runLoop(): Promise<void> {
    do {
      this.again = false;
      await this.runOnce();
    } while (this.again && !this.stopped);
  }

  private async runOnce(): Promise<void> {
    const { job } = this;
    // One signal per run, also aborted by stop(): a timed-out run must not abort the next one.
    const controller = new AbortController();
    const onStop = () => controller.abort(this.controller.signal.reason);
    this.controller.signal.addEventListener('abort', onStop, { once: true });
    let timeout: NodeJS.Timeout | undefined;
    if (job.timeoutMs) {
      timeout = setTimeout(() => {
        this.log.warn({ job: job.name, timeoutMs: job.timeoutMs }, `job ${job.name} ran past its timeout; asked to stop`);
        controller.abort(new Error(`job ${job.name} ran past its timeout of ${job.timeoutMs} ms`));
      }, job.timeoutMs);
      timeout.unref();
    }
    try {
      await job.run(controller.signal);
    } catch (err) {
      if (this.stopped && controller.signal.aborted)
        this.log.warn({ job: job.name, err }, `job ${job.name} ended early: the node is stopping`);
      else this.log.error({ job: job.name, err }, `job ${job.name} failed`);
    } finally {
      clearTimeout(timeout);
      this.controller.signal.removeEventListener('abort', onStop);
    }
  }
}

export class JobRunner {
  private readonly started: Scheduled[] = [];
  private stopping: Promise<void> | undefined;

  constructor(
    private readonly jobs: readonly Job[],
    private readonly log: JobLogger,
  ) {
    const names = new Set<string>();
    for (const job of jobs) {
      if (names.has(job.name)) throw new Error(`two jobs are named ${job.name}`);
      names.add(job.name);
    }
  }

  /**
   * Prepares and schedules each job in order. When a `prepare` fails, the jobs already started
   * are stopped and the error is thrown (the server does not start half its background work).
   */
  async start(): Promise<void> {
    if (this.started.length || this.stopping) throw new Error('the job runner was already started');
    for (const job of this.jobs) {
      try {
        await job.prepare?.();
      } catch (err) {
        this.log.error({ job: job.name, err }, `job ${job.name} could not start`);
        await this.stop();
        throw err;
      }
      const scheduled = new Scheduled(job, this.log);
      this.started.push(scheduled);
      scheduled.start();
    }
  }

  /**
   * Stops the started jobs in reverse order, each after the one started after it has stopped.
   * A failing `stop` is logged and the others still stop (so the database can close after).
   */
  stop(): Promise<void> {
    return (this.stopping ??= (async () => {
      for (const scheduled of [...this.started].reverse()) {
        try {
          await scheduled.stop();
        } catch (err) {
          this.log.error({ job: scheduled.job.name, err }, `job ${scheduled.job.name} did not stop cleanly`);
        }
      }
    })());
  }
}
