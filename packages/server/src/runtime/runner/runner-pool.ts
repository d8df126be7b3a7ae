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
import type { Logger } from '../../domain/logger.js';
import { type AlgorithmRuntime, type Execution, type PipeRequest, type RunTarget, RuntimeFailure } from '../../domain/calls/ports.js';
import type { RunnerRequest } from './runner-factory.js';
import { CallNotStarted, type CallOutcome, RunnerFailure } from './runner-process.js';
import { SandboxUnavailableError } from '../sandbox/supervisor.js';

export interface PoolSettings {
  maxPerArtifact: number;
  /** Runners on this node (idle, busy or starting). */
  maxTotal: number;
  idleMs: number;
  /** Runners one account's algorithms may have on this node; 0 or unset = no limit. */
  maxPerAccount?: number;
  /** Sum of the memory limits of one account's runners, in bytes; 0 or unset = no limit. */
  memoryPerAccount?: number;
  /** Sum of the memory limits of all runners on this node, in bytes; 0 or unset = no limit. */
  memoryBudget?: number;
  /** The memory limit a runner of this environment gets (what the budgets count); unset = 0. */
  memoryOf?: (environmentName: string) => number;
  /** Where a runner that failed to stop is reported (unset in the pool's unit tests). */
  log?: Logger;
  /** A call queues in a busy runner only when it can expect to begin this soon (default PIPELINE_MAX_RUN_MS; see Pipelining). */
  pipelineMaxRunMs?: number;
  /** At most this many calls wait in one runner (default PIPELINE_DEPTH; see Pipelining). */
  pipelineDepth?: number;
  /** Milliseconds since the epoch, for idle times (default Date.now; tests pass their own). */
  now?: () => number;
}

/** What the pool needs of a runner (RunnerProcess; tests use fakes). */
export interface PoolRunner {
  /** Fit to serve a call: false as soon as it was told to die, before its process is gone. */
  readonly alive: boolean;
  /** Takes more calls while it runs one (see Pipelining above). */
  readonly pipelines?: boolean;
  lastUsed: number;
  start(): Promise<void>;
  call(request: PipeRequest, timeoutMs: number): Promise<CallOutcome>;
  stop(): Promise<void>;
  kill(): void;
}

/** What the pool needs of the runner factory: undefined when the language has no runner harness. */
export interface PoolRunnerFactory {
  create(req: RunnerRequest): PoolRunner | undefined;
}

interface Pool {
  key: string;
  account: string;
  accountName: string;
  /** Memory limit of each runner of this pool. */
  memory: number;
  idle: PoolRunner[];
  busy: Set<PoolRunner>;
  /** Busy runners that also hold calls written behind the one they run: how many. */
  queued: Map<PoolRunner, number>;
  /** When each busy runner began the call it runs (performance.now()). */
  callBegan: Map<PoolRunner, number>;
  /** Whether calls may queue in a busy runner (not for algorithms that call the API). */
  pipelining: boolean;
  /** Recent calls' run time, a moving average (undefined before the first call ends). */
  runMs: number | undefined;
  starting: number;
  waiters: ((r: PoolRunner | undefined) => void)[];
}

/** A runner told to stop: it holds its memory until its process is gone. */
interface Retiring {
  account: string;
  accountName: string;
  memory: number;
  done: Promise<void>;
}

export interface PoolStats {
  calls: number;
  warmCalls: number;
  queueSeconds: number;
  startSeconds: number;
  runSeconds: number;
  coldStarts: number;
  failures: Record<string, number>;
  runners: number;
}

export interface AccountUsage {
  name: string;
  runners: number;
  busy: number;
  memoryBytes: number;
}

/** What admission decided: start now, wait for something and ask again, or refuse (thrown). */
type Admission = { kind: 'start' } | { kind: 'after'; done: Promise<unknown> } | { kind: 'wait' };

const MiB = 1024 * 1024;
/** A call queues in a busy runner only when it can expect to begin within this many milliseconds. */
const PIPELINE_MAX_RUN_MS = 10;
/** How many calls may wait in one runner behind the one it runs. */
const PIPELINE_DEPTH = 8;

export class RunnerPool implements AlgorithmRuntime {
  private readonly pools = new Map<string, Pool>();
  /** Runners still starting: not in any pool yet, but stopAll must reach them too. */
  private readonly starting = new Set<PoolRunner>();
  private readonly retiring = new Map<PoolRunner, Retiring>();
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
  private readonly pipelineMaxRunMs: number;
  private readonly pipelineDepth: number;

  constructor(
    private readonly factory: PoolRunnerFactory,
    private readonly settings: PoolSettings,
  ) {
    this.now = settings.now ?? Date.now;
    this.pipelineMaxRunMs = settings.pipelineMaxRunMs ?? PIPELINE_MAX_RUN_MS;
    this.pipelineDepth = settings.pipelineDepth ?? PIPELINE_DEPTH;
  }

  async execute(target: RunTarget, request: PipeRequest, timeoutMs: number): Promise<Execution> {
    const t0 = performance.now();
    const key = poolKeyOf(target);
    let startMs = 0;
    for (;;) {
      const acquired = await this.acquire(target, key);
      const { runner, cold } = acquired;
      startMs += acquired.startMs;
      const t1 = performance.now();
      let outcome: CallOutcome;
      try {
        outcome = await runner.call(request, timeoutMs);
      } catch (err) {
        // Written behind a call on a runner that died before reaching it: it ran nowhere, so
        // it goes to another runner as it is.
        if (err instanceof CallNotStarted) {
          this.discard(key, runner);
          continue;
        }
        this.countStart(cold, t1 - t0 - startMs, startMs);
        // A response refused for its size leaves a healthy runner; one the runner had to kill
        // for it (or any other failure) leaves a dying one, which release() would discard too.
        if (err instanceof RunnerFailure && err.errorType === 'TooLargeError') this.release(key, runner);
        else this.discard(key, runner);
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
      this.noteRunTime(key, runMs);
      this.release(key, runner);
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

  private noteRunTime(key: string, runMs: number): void {
    const pool = this.pools.get(key);
    if (pool) pool.runMs = pool.runMs === undefined ? runMs : pool.runMs * 0.8 + runMs * 0.2;
  }

  async stopAll(): Promise<void> {
    this.stopped = true;
    const all: PoolRunner[] = [...this.starting];
    for (const pool of this.pools.values()) {
      all.push(...pool.idle, ...pool.busy);
      for (const w of pool.waiters) w(undefined);
    }
    this.pools.clear();
    await Promise.all([...all.map((r) => r.stop()), ...[...this.retiring.values()].map((r) => r.done)]);
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
    const out = new Map<string, AccountUsage>();
    const entry = (account: string, name: string) => {
      let u = out.get(account);
      if (!u) out.set(account, (u = { name, runners: 0, busy: 0, memoryBytes: 0 }));
      return u;
    };
    for (const pool of this.pools.values()) {
      const n = pool.idle.length + pool.busy.size + pool.starting;
      if (!n) continue;
      const u = entry(pool.account, pool.accountName);
      u.runners += n;
      u.busy += pool.busy.size + pool.starting;
      u.memoryBytes += n * pool.memory;
    }
    for (const r of this.retiring.values()) {
      const u = entry(r.account, r.accountName);
      u.runners++;
      u.memoryBytes += r.memory;
    }
    return out;
  }

  private pool(target: RunTarget, key: string): Pool {
    let p = this.pools.get(key);
    if (!p) {
      p = {
        key,
        account: target.owner.id,
        accountName: target.owner.name,
        memory: this.settings.memoryOf?.(target.environment.name) ?? 0,
        idle: [],
        busy: new Set(),
        queued: new Map(),
        callBegan: new Map(),
        pipelining: !target.pipeline,
        runMs: undefined,
        starting: 0,
        waiters: [],
      };
      this.pools.set(key, p);
    }
    return p;
  }

  private async acquire(target: RunTarget, key: string): Promise<{ runner: PoolRunner; cold: boolean; startMs: number }> {
    if (this.stopped) throw stopping();
    const pool = this.pool(target, key);
    for (;;) {
      if (this.stopped) throw stopping();
      const idle = pool.idle.pop();
      if (idle) {
        if (!idle.alive) {
          // Died while idle: gone, or going (its memory counts until it is).
          void this.stopCounted(pool, idle, () => idle.stop());
          continue;
        }
        pool.busy.add(idle);
        pool.callBegan.set(idle, performance.now());
        return { runner: idle, cold: false, startMs: 0 };
      }
      if (pool.busy.size + pool.starting < this.settings.maxPerArtifact) {
        // Decided and acted on in the same turn: nothing else can take the room in between.
        const admission = this.admit(pool);
        if (admission.kind === 'start') return this.startRunner(target, pool);
        if (admission.kind === 'after') {
          await admission.done;
          continue;
        }
      }
      const behind = this.queueBehind(pool);
      if (behind) return { runner: behind, cold: false, startMs: 0 };
      const handed = await new Promise<PoolRunner | undefined>((resolve) => pool.waiters.push(resolve));
      if (handed) return { runner: handed, cold: false, startMs: 0 };
    }
  }

  /**
   * The busy runner this call can be written behind now with the fewest calls already there (see
   * Pipelining above), marked as holding one more.
   */
  private queueBehind(pool: Pool): PoolRunner | undefined {
    // Calls already waiting here go first.
    if (pool.waiters.length) return undefined;
    let best: PoolRunner | undefined;
    for (const runner of pool.busy) {
      if (this.canQueueBehind(pool, runner) && (!best || this.behind(pool, runner) < this.behind(pool, best))) best = runner;
    }
    if (best) pool.queued.set(best, this.behind(pool, best) + 1);
    return best;
  }

  private behind(pool: Pool, runner: PoolRunner): number {
    return pool.queued.get(runner) ?? 0;
  }

  private canQueueBehind(pool: Pool, runner: PoolRunner): boolean {
    if (!pool.pipelining || pool.runMs === undefined || !runner.pipelines || !runner.alive) return false;
    const behind = this.behind(pool, runner);
    if (behind >= this.pipelineDepth) return false;
    // The wait a call written now can expect: what the running call has taken so far (one that
    // runs long among short ones is not waited behind) and an average call for each one queued.
    const running = performance.now() - (pool.callBegan.get(runner) ?? 0);
    return running + behind * pool.runMs <= this.pipelineMaxRunMs && pool.runMs <= this.pipelineMaxRunMs;
  }

  /**
   * May one more runner of this pool start now? Over a limit, an idle runner is stopped to make
   * room (the account's own for its limits, any account's for the node's) and the caller asks
   * again once it is gone; with nothing idle, the caller waits for one of the pool's own busy
   * runners, or is refused.
   */
  private admit(pool: Pool): Admission {
    const s = this.settings;
    const usage = this.usage();
    const mine = usage.get(pool.account) ?? { name: pool.accountName, runners: 0, busy: 0, memoryBytes: 0 };
    let total = 0;
    let memory = 0;
    for (const u of usage.values()) {
      total += u.runners;
      memory += u.memoryBytes;
    }
    this.stats.runners = total;
    const ownRetiring = () => [...this.retiring.values()].filter((r) => r.account === pool.account);
    const hasOwnBusy = pool.busy.size + pool.starting > 0;

    const overCount = !!s.maxPerAccount && mine.runners + 1 > s.maxPerAccount;
    const overMemory = !!s.memoryPerAccount && mine.memoryBytes + pool.memory > s.memoryPerAccount;
    if (overCount || overMemory) {
      if (s.memoryPerAccount && pool.memory > s.memoryPerAccount) {
        throw Errors.unavailable(
          `a runner of this algorithm needs ${mib(pool.memory)} MiB, more than the ${mib(s.memoryPerAccount)} MiB one account's runners may hold on this node`,
        );
      }
      const victim = this.leastRecentlyUsedIdle((p) => p.account === pool.account);
      if (victim) return { kind: 'after', done: this.retire(victim.pool, victim.runner) };
      const retiring = ownRetiring();
      if (retiring.length) return { kind: 'after', done: Promise.race(retiring.map((r) => r.done)) };
      if (hasOwnBusy) return { kind: 'wait' };
      const what = overCount
        ? `already have ${mine.runners} runners on this node, the most one account may have (${s.maxPerAccount})`
        : `already hold ${mib(mine.memoryBytes)} MiB of runner memory on this node; another ${mib(pool.memory)} MiB runner would pass the account's limit of ${mib(s.memoryPerAccount!)} MiB`;
      throw Errors.busy(`${pool.accountName}'s algorithms ${what}, and all of them are busy; call again when one of its calls finishes`, {
        retryAfterSeconds: 1,
      });
    }

    const overTotal = total + 1 > s.maxTotal;
    const overBudget = !!s.memoryBudget && memory + pool.memory > s.memoryBudget;
    if (overTotal || overBudget) {
      if (s.memoryBudget && pool.memory > s.memoryBudget) {
        throw Errors.unavailable(
          `a runner of this algorithm needs ${mib(pool.memory)} MiB, more than this node's runner memory budget of ${mib(s.memoryBudget)} MiB`,
        );
      }
      const victim = this.leastRecentlyUsedIdle(() => true);
      if (victim) return { kind: 'after', done: this.retire(victim.pool, victim.runner) };
      if (this.retiring.size) return { kind: 'after', done: Promise.race([...this.retiring.values()].map((r) => r.done)) };
      if (hasOwnBusy) return { kind: 'wait' };
      const what = overTotal
        ? `this node already has ${total} runners, its limit, and all are busy`
        : `runners already hold ${mib(memory)} MiB of this node's runner memory budget of ${mib(s.memoryBudget!)} MiB and all are busy; another ${mib(pool.memory)} MiB runner does not fit`;
      throw Errors.unavailable(`no room for another runner: ${what}. Call again shortly`, {
        retryAfterSeconds: 5,
      });
    }
    return { kind: 'start' };
  }

  private leastRecentlyUsedIdle(which: (p: Pool) => boolean): { pool: Pool; runner: PoolRunner } | undefined {
    let oldest: { pool: Pool; runner: PoolRunner } | undefined;
    for (const pool of this.pools.values()) {
      if (!which(pool)) continue;
      for (const runner of pool.idle) if (!oldest || runner.lastUsed < oldest.runner.lastUsed) oldest = { pool, runner };
    }
    return oldest;
  }

  /** Takes an idle runner out of its pool and stops it; its memory counts until it is gone. */
  private retire(pool: Pool, runner: PoolRunner): Promise<void> {
    const at = pool.idle.indexOf(runner);
    if (at >= 0) pool.idle.splice(at, 1);
    return this.stopCounted(pool, runner, () => runner.stop());
  }

  private stopCounted(pool: Pool, runner: PoolRunner, stop: () => Promise<void>): Promise<void> {
    const done = stop()
      .catch((err: unknown) => this.settings.log?.warn({ err, account: pool.accountName }, 'a runner did not stop cleanly'))
      .finally(() => this.retiring.delete(runner));
    this.retiring.set(runner, { account: pool.account, accountName: pool.accountName, memory: pool.memory, done });
    return done;
  }

  private async startRunner(target: RunTarget, pool: Pool): Promise<{ runner: PoolRunner; cold: boolean; startMs: number }> {
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
    pool.starting++;
    this.starting.add(runner);
    const t = performance.now();
    try {
      await runner.start();
    } catch (err) {
      pool.starting--;
      this.starting.delete(runner);
      await this.stopCounted(pool, runner, () => runner.stop());
      this.wakeWaiter(pool);
      if (this.stopped) throw stopping();
      if (err instanceof RunnerFailure) throw new RuntimeFailure(err.errorType, err.message, err.output);
      // No sandbox uid free (all held by running or ending sandboxes): the node is full for now.
      if (err instanceof SandboxUnavailableError) throw Errors.unavailable(err.message, { retryAfterSeconds: 5 });
      throw err;
    }
    pool.starting--;
    this.starting.delete(runner);
    if (this.stopped) {
      // Started while the node was stopping: it would serve this call and then outlive the pool.
      await runner
        .stop()
        .catch((err: unknown) => this.settings.log?.warn({ err }, 'a runner started during shutdown did not stop cleanly'));
      throw stopping();
    }
    this.stats.coldStarts++;
    pool.busy.add(runner);
    pool.callBegan.set(runner, performance.now());
    return { runner, cold: true, startMs: performance.now() - t };
  }

  /**
   * A call is done with its runner: hand it to a waiting call, or keep it idle. A runner that is
   * not alive (killed for its output, timed out, out of memory, exited: dying counts, not only
   * dead) is never handed out again: it is discarded and a waiter starts a fresh one.
   */
  private release(key: string, runner: PoolRunner): void {
    if (this.stopped) return void runner.stop();
    const pool = this.pools.get(key);
    if (!pool) return void runner.stop();
    if (!runner.alive) return this.discard(key, runner);
    runner.lastUsed = this.now();
    const behind = this.behind(pool, runner);
    if (behind > 0) {
      if (behind > 1) pool.queued.set(runner, behind - 1);
      else pool.queued.delete(runner);
      pool.callBegan.set(runner, performance.now());
      // Still busy with a call written behind the one that ended: waiting calls may take the
      // place freed behind it.
      this.fillBehind(pool, runner);
      return;
    }
    pool.busy.delete(runner);
    pool.callBegan.delete(runner);
    const waiter = pool.waiters.shift();
    if (waiter) {
      pool.busy.add(runner);
      pool.callBegan.set(runner, performance.now());
      waiter(runner);
      // The calls waiting after it go behind it as they would have, had it been busy when they came.
      this.fillBehind(pool, runner);
    } else pool.idle.push(runner);
  }

  /** Hands waiting calls, in order, places behind `runner`'s running call while it has room (see Pipelining). */
  private fillBehind(pool: Pool, runner: PoolRunner): void {
    while (pool.waiters.length && this.canQueueBehind(pool, runner)) {
      pool.queued.set(runner, this.behind(pool, runner) + 1);
      pool.waiters.shift()!(runner);
    }
  }

  private discard(key: string, runner: PoolRunner): void {
    const pool = this.pools.get(key);
    if (!pool) return void runner.stop();
    // A runner that held several calls is discarded by the first one that learns it is dying.
    if (!pool.busy.has(runner)) return;
    pool.busy.delete(runner);
    pool.queued.delete(runner);
    pool.callBegan.delete(runner);
    runner.kill();
    void this.stopCounted(pool, runner, () => runner.stop());
    this.wakeWaiter(pool);
  }

  /** A slot freed up: let one waiter try again (it will start a runner). */
  private wakeWaiter(pool: Pool): void {
    const waiter = pool.waiters.shift();
    waiter?.(undefined);
  }

  /** Stops runners idle longer than the idle time (and forgets dead ones). The `runners.idle-sweep` job runs it. */
  sweep(now = this.now()): void {
    for (const [key, pool] of this.pools) {
      const keep: PoolRunner[] = [];
      for (const r of pool.idle) {
        if (now - r.lastUsed > this.settings.idleMs || !r.alive) void this.stopCounted(pool, r, () => r.stop());
        else keep.push(r);
      }
      pool.idle = keep;
      if (!pool.idle.length && !pool.busy.size && !pool.starting && !pool.waiters.length) this.pools.delete(key);
    }
  }
}

const round = (ms: number) => Math.round(ms * 1000) / 1000;
const mib = (bytes: number) => Math.round(bytes / MiB);

/** Runners differ by owner, artifact and by what the sandbox is given (network, API access). */
const poolKey = (t: RunTarget) => `${t.owner.id}|${t.artifact}|${t.network}|${t.pipeline ? 'api' : '-'}`;

/**
 * Pool keys by target object: the call service hands the same read-only target to every call
 * of one resolution, so a warm call reads its key instead of building the string again.
 */
const poolKeys = new WeakMap<RunTarget, string>();
function poolKeyOf(t: RunTarget): string {
  let key = poolKeys.get(t);
  if (key === undefined) poolKeys.set(t, (key = poolKey(t)));
  return key;
}

const stopping = () => new RuntimeFailure('SystemExit', 'the service is stopping; call again');
