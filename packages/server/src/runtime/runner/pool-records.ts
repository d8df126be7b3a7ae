/**
 * What the runner pool keeps: one record per artifact's pool and one per runner. The warm-call
 * path reads and writes these fields in place, so a call allocates nothing here: a runner's
 * record is made once, when the runner is created, and lives as long as the runner.
 */
import type { Logger } from '../../domain/logger.js';
import type { PipeRequest, RunTarget } from '../../domain/calls/ports.js';
import type { RunnerRequest } from './runner-factory.js';
import type { CallOutcome } from './runner-outcome.js';

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
  /** Takes more calls while it runs one (see Pipelining in runner-pool.ts). */
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

/** One runner and what the pool knows of it, from its creation until its process is gone. */
export interface RunnerSlot {
  readonly runner: PoolRunner;
  readonly pool: Pool;
  /** Calls written behind the one it runs (see Pipelining in runner-pool.ts). */
  behind: number;
  /** When it began the call it runs (performance.now()). */
  callBegan: number;
}

/** The runners of one pool key (owner, artifact, network, API access). */
export interface Pool {
  key: string;
  account: string;
  accountName: string;
  /** Memory limit of each runner of this pool. */
  memory: number;
  idle: RunnerSlot[];
  busy: Set<RunnerSlot>;
  /** Whether calls may queue in a busy runner (not for algorithms that call the API). */
  pipelining: boolean;
  /** Recent calls' run time, a moving average (undefined before the first call ends). */
  runMs: number | undefined;
  starting: number;
  waiters: ((slot: RunnerSlot | undefined) => void)[];
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

export function newPool(target: RunTarget, key: string, memory: number): Pool {
  return {
    key,
    account: target.owner.id,
    accountName: target.owner.name,
    memory,
    idle: [],
    busy: new Set(),
    pipelining: !target.pipeline,
    runMs: undefined,
    starting: 0,
    waiters: [],
  };
}

export function newSlot(runner: PoolRunner, pool: Pool): RunnerSlot {
  return { runner, pool, behind: 0, callBegan: 0 };
}

/** Runners differ by owner, artifact and by what the sandbox is given (network, API access). */
const poolKey = (t: RunTarget) => `${t.owner.id}|${t.artifact}|${t.network}|${t.pipeline ? 'api' : '-'}`;

/**
 * Pool keys by target object: the call service hands the same read-only target to every call
 * of one resolution, so a warm call reads its key instead of building the string again.
 */
const poolKeys = new WeakMap<RunTarget, string>();
export function poolKeyOf(t: RunTarget): string {
  let key = poolKeys.get(t);
  if (key === undefined) poolKeys.set(t, (key = poolKey(t)));
  return key;
}
