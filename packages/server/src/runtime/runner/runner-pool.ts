/**
 * Warm runners per artifact (one pool per built commit and environment): calls reuse an idle
 * runner; when none is idle a new one starts, up to a per-algorithm maximum, else the call
 * waits its turn. Idle runners stop after a while; a node-wide cap evicts the least recently
 * used idle runner. A runner that failed (timeout, OOM, crash) is discarded, so the next call
 * starts a fresh one. A new build never touches runners of the old artifact: calls in flight
 * finish there.
 */
import { type AlgorithmRuntime, type Execution, type PipeRequest, type RunTarget, RuntimeFailure } from '../../domain/calls/ports.js';
import type { RunnerFactory } from './runner-factory.js';
import { RunnerFailure, type RunnerProcess } from './runner-process.js';

export interface PoolSettings {
  maxPerArtifact: number;
  maxTotal: number;
  idleMs: number;
}

interface Pool {
  idle: RunnerProcess[];
  busy: Set<RunnerProcess>;
  starting: number;
  waiters: ((r: RunnerProcess | undefined) => void)[];
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

export class RunnerPool implements AlgorithmRuntime {
  private readonly pools = new Map<string, Pool>();
  /** Runners still starting: not in any pool yet, but stopAll must reach them too. */
  private readonly starting = new Set<RunnerProcess>();
  /** Set by stopAll: no runner starts or goes back to a pool after it. */
  private stopped = false;
  private readonly sweeper: NodeJS.Timeout;
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

  constructor(
    private readonly factory: RunnerFactory,
    private readonly settings: PoolSettings,
  ) {
    this.sweeper = setInterval(() => this.sweep(), Math.min(10_000, settings.idleMs)).unref();
  }

  async execute(target: RunTarget, request: PipeRequest, timeoutMs: number): Promise<Execution> {
    const t0 = performance.now();
    const key = poolKey(target);
    const { runner, cold, startMs } = await this.acquire(target, key);
    const queueMs = performance.now() - t0 - startMs;
    const t1 = performance.now();
    this.stats.calls++;
    if (!cold) this.stats.warmCalls++;
    this.stats.queueSeconds += queueMs / 1000;
    this.stats.startSeconds += startMs / 1000;
    try {
      const { response, stdout } = await runner.call(request, timeoutMs);
      const runMs = performance.now() - t1;
      this.stats.runSeconds += runMs / 1000;
      this.release(key, runner);
      return { response, stdout, cold, queueMs: round(queueMs), startMs: round(startMs), runMs: round(runMs) };
    } catch (err) {
      if (err instanceof RunnerFailure && err.errorType === 'TooLargeError' && runner.alive) this.release(key, runner);
      else this.discard(key, runner);
      if (err instanceof RunnerFailure) {
        this.stats.failures[err.errorType] = (this.stats.failures[err.errorType] ?? 0) + 1;
        throw new RuntimeFailure(err.errorType, err.message);
      }
      throw err;
    }
  }

  async stopAll(): Promise<void> {
    this.stopped = true;
    clearInterval(this.sweeper);
    const all: RunnerProcess[] = [...this.starting];
    for (const pool of this.pools.values()) {
      all.push(...pool.idle, ...pool.busy);
      for (const w of pool.waiters) w(undefined);
    }
    this.pools.clear();
    await Promise.all(all.map((r) => r.stop()));
  }

  private pool(artifact: string): Pool {
    let p = this.pools.get(artifact);
    if (!p) this.pools.set(artifact, (p = { idle: [], busy: new Set(), starting: 0, waiters: [] }));
    return p;
  }

  private async acquire(target: RunTarget, key: string): Promise<{ runner: RunnerProcess; cold: boolean; startMs: number }> {
    if (this.stopped) throw stopping();
    const pool = this.pool(key);
    for (;;) {
      const idle = pool.idle.pop();
      if (idle) {
        if (!idle.alive) continue;
        pool.busy.add(idle);
        return { runner: idle, cold: false, startMs: 0 };
      }
      if (pool.busy.size + pool.starting < this.settings.maxPerArtifact) {
        this.makeRoom();
        return this.startRunner(target, pool);
      }
      const handed = await new Promise<RunnerProcess | undefined>((resolve) => pool.waiters.push(resolve));
      if (handed) return { runner: handed, cold: false, startMs: 0 };
    }
  }

  private async startRunner(target: RunTarget, pool: Pool): Promise<{ runner: RunnerProcess; cold: boolean; startMs: number }> {
    const runner = this.factory.create({
      artifact: target.artifact,
      algorithmName: target.algorithmName,
      environment: target.environment,
      network: target.network,
      pipeline: target.pipeline,
    });
    if (!runner)
      throw new RuntimeFailure(
        'UnsupportedError',
        `algorithms of language ${target.environment.language} cannot be run on this cluster yet`,
      );
    pool.starting++;
    this.starting.add(runner);
    const t = performance.now();
    try {
      await runner.start();
    } catch (err) {
      await runner.stop().catch(() => {});
      this.wakeWaiter(pool);
      if (this.stopped) throw stopping();
      if (err instanceof RunnerFailure) throw new RuntimeFailure(err.errorType, err.message);
      throw err;
    } finally {
      pool.starting--;
      this.starting.delete(runner);
    }
    if (this.stopped) {
      // Started while the node was stopping: it would serve this call and then outlive the pool.
      await runner.stop().catch(() => {});
      throw stopping();
    }
    this.stats.coldStarts++;
    pool.busy.add(runner);
    return { runner, cold: true, startMs: performance.now() - t };
  }

  private release(artifact: string, runner: RunnerProcess): void {
    if (this.stopped) return void runner.stop();
    const pool = this.pool(artifact);
    pool.busy.delete(runner);
    if (!runner.alive) return this.wakeWaiter(pool);
    runner.lastUsed = Date.now();
    const waiter = pool.waiters.shift();
    if (waiter) {
      pool.busy.add(runner);
      waiter(runner);
    } else pool.idle.push(runner);
  }

  private discard(artifact: string, runner: RunnerProcess): void {
    const pool = this.pool(artifact);
    pool.busy.delete(runner);
    runner.kill();
    void runner.stop();
    this.wakeWaiter(pool);
  }

  /** A slot freed up: let one waiter try again (it will start a runner). */
  private wakeWaiter(pool: Pool): void {
    const waiter = pool.waiters.shift();
    waiter?.(undefined);
  }

  /** Keeps the node under its cap by stopping the least recently used idle runner. */
  private makeRoom(): void {
    let total = 0;
    for (const p of this.pools.values()) total += p.idle.length + p.busy.size + p.starting;
    this.stats.runners = total;
    if (total < this.settings.maxTotal) return;
    let oldest: { pool: Pool; runner: RunnerProcess } | undefined;
    for (const pool of this.pools.values()) {
      for (const runner of pool.idle) if (!oldest || runner.lastUsed < oldest.runner.lastUsed) oldest = { pool, runner };
    }
    if (oldest) {
      oldest.pool.idle.splice(oldest.pool.idle.indexOf(oldest.runner), 1);
      void oldest.runner.stop();
    }
  }

  private sweep(): void {
    const now = Date.now();
    for (const [artifact, pool] of this.pools) {
      const keep: RunnerProcess[] = [];
      for (const r of pool.idle) {
        if (now - r.lastUsed > this.settings.idleMs || !r.alive) void r.stop();
        else keep.push(r);
      }
      pool.idle = keep;
      if (!pool.idle.length && !pool.busy.size && !pool.starting && !pool.waiters.length) this.pools.delete(artifact);
    }
  }
}

const round = (ms: number) => Math.round(ms * 1000) / 1000;

/** Runners differ by artifact and by what the sandbox is given (network, API access). */
const poolKey = (t: RunTarget) => `${t.artifact}|${t.network}|${t.pipeline ? 'api' : '-'}`;

const stopping = () => new RuntimeFailure('SystemExit', 'the service is stopping; call again');
