/**
 * Which busy runner a call may be written behind, and when (see Pipelining in runner-pool.ts).
 */
import type { Pool, RunnerSlot } from './pool-records.js';

/** A call queues in a busy runner only when it can expect to begin within this many milliseconds. */
const PIPELINE_MAX_RUN_MS = 10;
/** How many calls may wait in one runner behind the one it runs. */
const PIPELINE_DEPTH = 8;

export class Pipelining {
  private readonly maxRunMs: number;
  private readonly depth: number;

  constructor(settings: { pipelineMaxRunMs?: number; pipelineDepth?: number }) {
    this.maxRunMs = settings.pipelineMaxRunMs ?? PIPELINE_MAX_RUN_MS;
    this.depth = settings.pipelineDepth ?? PIPELINE_DEPTH;
  }

  /** The busy runner this call can be written behind now with the fewest calls already there, marked as holding one more. */
  queueBehind(pool: Pool): RunnerSlot | undefined {
    // Calls already waiting here go first.
    if (pool.waiters.length) return undefined;
    let best: RunnerSlot | undefined;
    for (const slot of pool.busy) {
      if (this.canQueueBehind(pool, slot) && (!best || slot.behind < best.behind)) best = slot;
    }
    if (best) best.behind++;
    return best;
  }

  /** Hands waiting calls, in order, places behind `slot`'s running call while it has room. */
  fillBehind(pool: Pool, slot: RunnerSlot): void {
    while (pool.waiters.length && this.canQueueBehind(pool, slot)) {
      slot.behind++;
      pool.waiters.shift()!(slot);
    }
  }

  private canQueueBehind(pool: Pool, slot: RunnerSlot): boolean {
    const runner = slot.runner;
    if (!pool.pipelining || pool.runMs === undefined || !runner.pipelines || !runner.alive) return false;
    const behind = slot.behind;
    if (behind >= this.depth) return false;
    // The wait a call written now can expect: what the running call has taken so far (one that
    // runs long among short ones is not waited behind) and an average call for each one queued.
    const running = performance.now() - slot.callBegan;
    return running + behind * pool.runMs <= this.maxRunMs && pool.runMs <= this.maxRunMs;
  }
}
