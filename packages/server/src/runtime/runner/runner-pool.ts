/**
 * Warm runners per artifact (one pool per built commit and environment): calls reuse an idle
 * runner; when none is idle a new one starts, up to a per-algorithm maximum, else the call
 * waits its turn. Idle runners stop after a while. A runner that failed (timeout, OOM, crash)
 * is discarded, so the next call starts a fresh one. A new build never touches runners of the
 * old artifact: calls in flight finish there.
 *
 * Limits on what runners may hold, counted by the memory limit each runner gets (what it may
 * grow to, not what it happens to use now):
 * - per account (the algorithm's owner, whose code runs): a number of runners and their total
 *   memory. Over it, the account's least recently used idle runner stops to make room; when
 *   all of its runners are busy, a call to an algorithm that has a busy runner waits for it (as
 *   before), and any other call is refused at once with 429 (waiting could deadlock a pipeline
 *   whose algorithms call each other). Another account's runners are never touched for it.
 * - per node: a number of runners and a memory budget. Over it, the least recently used idle
 *   runner of any account stops; when every runner is busy, the call waits for one of its own
 *   algorithm's busy runners, or is refused with 503 naming the budget: never an OOM later.
 * A runner being stopped still counts until its process is gone, so room is never promised
 * twice.
 *
 * Pipelining: when an algorithm has no idle runner and no room for another, a call goes behind
 * a busy runner whose harness marks where each call's output ends (RunnerProcess.pipelines)
 * instead of waiting here: its request is written at once and the harness reads it the moment it
 * answered the calls before, rather than idling until this process, busy with other requests,
 * gets round to writing it (and this process then reads several answers at a time). At most
 * PIPELINE_DEPTH calls wait in a runner, and only while the wait they can expect (the running
 * call's time so far plus the pool's average run time for each call before them) stays under
 * PIPELINE_MAX_RUN_MS, so a call never waits long in one runner while another frees up.
 * Algorithms that call the API (pipelines) never pipeline, since a call of an algorithm to
 * itself would wait behind its own caller.
 */
import { Errors } from '../../domain/errors.js';
import { type AlgorithmRuntime, type Execution, type PipeRequest, type RunTarget, RuntimeFailure } from '../../domain/calls/ports.js';
import { CallNotStarted, type CallOutcome, RunnerFailure } from './runner-outcome.js';
import { SandboxUnavailableError } from '../sandbox/supervisor.js';
import {
  type AccountUsage,
  newPool,
  newSlot,
  type Pool,
  type PoolRunnerFactory,
  type PoolSettings,
  type PoolStats,
  poolKeyOf,
  type RunnerSlot,
} from './pool-records.js';
import { Pipelining } from './pipelining.js';
import { RunnerLimits } from './runner-limits.js';
import { RunnerRetirement } from './runner-retirement.js';

/** A runner taken for one call: `startMs` is the time its start took (0 when it was warm). */
interface Acquired {
  slot: RunnerSlot;
  cold: boolean;
  startMs: number;
}

export class RunnerPool implements AlgorithmRuntime {
  private readonly pools = new Map<string, Pool>();
  /** Runners still starting: not idle or busy in their pool yet, but stopAll must reach them too. */
  private readonly starting = new Set<RunnerSlot>();
  private readonly retirement: RunnerRetirement;
  private readonly limits: RunnerLimits;
  private readonly pipelining: Pipelining;
  /** Set by stopAll: no runner starts or goes back to a pool after it. */
  private stopped = false;
  readonly stats: PoolStats = {
    calls: 0,
    warmCalls: 0,
    queueSeconds: 0,
    startSeconds: 0,
    runSeconds: 0,
    coldStarts: 0,
    failures: {},
    runners: 0,
  };

  private readonly now: () => number;

  constructor(
    private readonly factory: PoolRunnerFactory,
    private readonly settings: PoolSettings,
  ) {
    this.now = settings.now ?? Date.now;
    this.retirement = new RunnerRetirement(settings.log);
    this.limits = new RunnerLimits(settings, this.pools, this.retirement, this.stats);
    this.pipelining = new Pipelining(settings);
  }

  async execute(target: RunTarget, request: PipeRequest, timeoutMs: number): Promise<Execution> {
    const t0 = performance.now();
    const key = poolKeyOf(target);
    let startMs = 0;
    for (;;) {
      const acquired = await this.acquire(target, key);
      const { slot, cold } = acquired;
      startMs += acquired.startMs;
      const t1 = performance.now();
      let outcome: CallOutcome;
      try {
        outcome = await slot.runner.call(request, timeoutMs);
      } catch (err) {
        // Written behind a call on a runner that died before reaching it: it ran nowhere, so
        // it goes to another runner as it is.
        if (err instanceof CallNotStarted) {
          this.discard(slot);
          continue;
        }
        this.countStart(cold, t1 - t0 - startMs, startMs);
        // A response refused for its size leaves a healthy runner; one the runner had to kill
        // for it (or any other failure) leaves a dying one, which release() would discard too.
        if (err instanceof RunnerFailure && err.errorType === 'TooLargeError') this.release(slot);
        else this.discard(slot);
        if (err instanceof RunnerFailure) {
          this.stats.failures[err.errorType] = (this.stats.failures[err.errorType] ?? 0) + 1;
          throw new RuntimeFailure(err.errorType, err.message, err.output);
        }
        throw err;
      }
      // Time spent waiting in the runner behind another call is queueing, not running.
      const waitedMs = outcome.waitedMs ?? 0;
      const queueMs = t1 - t0 - startMs + waitedMs;
      const runMs = performance.now() - t1 - waitedMs;
      this.countStart(cold, queueMs, startMs);
      this.stats.runSeconds += runMs / 1000;
      const pool = slot.pool;
      pool.runMs = pool.runMs === undefined ? runMs : pool.runMs * 0.8 + runMs * 0.2;
      this.release(slot);
      return {
        response: outcome.response,
        stdout: outcome.stdout,
        cold,
        queueMs: round(queueMs),
        startMs: round(startMs),
        runMs: round(runMs),
      };
    }
  }

  private countStart(cold: boolean, queueMs: number, startMs: number): void {
    this.stats.calls++;
    if (!cold) this.stats.warmCalls++;
    this.stats.queueSeconds += queueMs / 1000;
    this.stats.startSeconds += startMs / 1000;
  }

  async stopAll(): Promise<void> {
    this.stopped = true;
    const all: RunnerSlot[] = [...this.starting];
    for (const pool of this.pools.values()) {
      all.push(...pool.idle, ...pool.busy);
      for (const w of pool.waiters) w(undefined);
    }
    this.pools.clear();
    await Promise.all([...all.map((slot) => slot.runner.stop()), this.retirement.allGone()]);
  }

  /** Runners that have started and not been told to stop: idle ones and those serving a call. */
  warmRunners(): number {
    let n = 0;
    for (const pool of this.pools.values()) n += pool.idle.length + pool.busy.size;
    return n;
  }

  /** The artifacts that have runners started or starting here (cluster mode routes their calls to this node). */
  warmArtifacts(): Set<string> {
    const out = new Set<string>();
    for (const [key, pool] of this.pools) {
      if (pool.idle.length + pool.busy.size + pool.starting) out.add(key.split('|')[1]!);
    }
    return out;
  }

  /** Runners and their memory per account (owner id), counting starting and stopping ones. */
  usage(): Map<string, AccountUsage> {
    return this.limits.usage();
  }

  private pool(target: RunTarget, key: string): Pool {
    let p = this.pools.get(key);
    if (!p) this.pools.set(key, (p = newPool(target, key, this.settings.memoryOf?.(target.environment.name) ?? 0)));
    return p;
  }

  private async acquire(target: RunTarget, key: string): Promise<Acquired> {
    if (this.stopped) throw stopping();
    const pool = this.pool(target, key);
    for (;;) {
      if (this.stopped) throw stopping();
      const idle = pool.idle.pop();
      if (idle) {
        if (!idle.runner.alive) {
          // Died while idle: gone, or going (its memory counts until it is).
          void this.retirement.stop(idle);
          continue;
        }
        pool.busy.add(idle);
        idle.callBegan = performance.now();
        return { slot: idle, cold: false, startMs: 0 };
      }
      if (pool.busy.size + pool.starting < this.settings.maxPerArtifact) {
        // Decided and acted on in the same turn: nothing else can take the room in between.
        const admission = this.limits.admit(pool);
        if (admission.kind === 'start') return this.startRunner(target, pool);
        if (admission.kind === 'after') {
          await admission.done;
          continue;
        }
      }
      const behind = this.pipelining.queueBehind(pool);
      if (behind) return { slot: behind, cold: false, startMs: 0 };
      const handed = await new Promise<RunnerSlot | undefined>((resolve) => pool.waiters.push(resolve));
      if (handed) return { slot: handed, cold: false, startMs: 0 };
    }
  }

  private async startRunner(target: RunTarget, pool: Pool): Promise<Acquired> {
    const runner = this.factory.create({
      artifact: target.artifact,
      algorithmName: target.algorithmName,
      environment: target.environment,
      network: target.network,
      pipeline: target.pipeline,
      owner: target.owner,
      // One CPU group per account: under contention accounts share the CPU equally, however
      // many runners each has.
      cpuGroup: `account-${target.owner.id.replace(/[^A-Za-z0-9_-]/g, '_')}`,
    });
    if (!runner)
      throw new RuntimeFailure('UnsupportedError', `algorithms of language ${target.environment.language} cannot be run on this cluster`);
    const slot = newSlot(runner, pool);
    pool.starting++;
    this.starting.add(slot);
    const t = performance.now();
    try {
      await runner.start();
    } catch (err) {
      pool.starting--;
      this.starting.delete(slot);
      await this.retirement.stop(slot);
      this.wakeWaiter(pool);
      if (this.stopped) throw stopping();
      if (err instanceof RunnerFailure) throw new RuntimeFailure(err.errorType, err.message, err.output);
      // No sandbox uid free (all held by running or ending sandboxes): the node is full for now.
      if (err instanceof SandboxUnavailableError) throw Errors.unavailable(err.message, { retryAfterSeconds: 5 });
      throw err;
    }
    pool.starting--;
    this.starting.delete(slot);
    if (this.stopped) {
      // Started while the node was stopping: it would serve this call and then outlive the pool.
      await runner
        .stop()
        .catch((err: unknown) => this.settings.log?.warn({ err }, 'a runner started during shutdown did not stop cleanly'));
      throw stopping();
    }
    this.stats.coldStarts++;
    pool.busy.add(slot);
    slot.callBegan = performance.now();
    return { slot, cold: true, startMs: performance.now() - t };
  }

  /**
   * A call is done with its runner: hand it to a waiting call, or keep it idle. A runner that is
   * not alive (killed for its output, timed out, out of memory, exited: dying counts, not only
   * dead) is never handed out again: it is discarded and a waiter starts a fresh one.
   */
  private release(slot: RunnerSlot): void {
    const { runner, pool } = slot;
    if (this.stopped || this.pools.get(pool.key) !== pool) return void runner.stop();
    if (!runner.alive) return this.discard(slot);
    runner.lastUsed = this.now();
    if (slot.behind > 0) {
      slot.behind--;
      slot.callBegan = performance.now();
      // Still busy with a call written behind the one that ended: waiting calls may take the
      // place freed behind it.
      this.pipelining.fillBehind(pool, slot);
      return;
    }
    pool.busy.delete(slot);
    const waiter = pool.waiters.shift();
    if (waiter) {
      pool.busy.add(slot);
      slot.callBegan = performance.now();
      waiter(slot);
      // The calls waiting after it go behind it as they would have, had it been busy when they came.
      this.pipelining.fillBehind(pool, slot);
    } else pool.idle.push(slot);
  }

  private discard(slot: RunnerSlot): void {
    const pool = slot.pool;
    if (this.pools.get(pool.key) !== pool) return void slot.runner.stop();
    // A runner that held several calls is discarded by the first one that learns it is dying.
    if (!pool.busy.has(slot)) return;
    pool.busy.delete(slot);
    slot.behind = 0;
    slot.runner.kill();
    void this.retirement.stop(slot);
    this.wakeWaiter(pool);
  }

  /** A slot freed up: let one waiter try again (it will start a runner). */
  private wakeWaiter(pool: Pool): void {
    const waiter = pool.waiters.shift();
    waiter?.(undefined);
  }

  /** Stops runners idle longer than the idle time (and forgets dead ones). The `runners.idle-sweep` job runs it. */
  sweep(now = this.now()): void {
    this.retirement.sweep(this.pools, now, this.settings.idleMs);
  }
}

const round = (ms: number) => Math.round(ms * 1000) / 1000;

const stopping = () => new RuntimeFailure('SystemExit', 'the service is stopping; call again');
