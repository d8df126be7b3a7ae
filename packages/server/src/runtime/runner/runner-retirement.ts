/**
 * Runners told to stop: an idle one made room for another, one idle too long, or one that
 * failed. Each holds its memory in the pool's limits until its process is gone, so room is
 * never promised twice.
 */
import type { Logger } from '../../domain/logger.js';
import type { AccountUsage, Pool, RunnerSlot } from './pool-records.js';

export class RunnerRetirement {
  private readonly retiring = new Map<RunnerSlot, Promise<void>>();

  constructor(private readonly log: Logger | undefined) {}

  /** Stops a runner no pool holds any more; its memory counts until it is gone. */
  stop(slot: RunnerSlot): Promise<void> {
    const done = slot.runner
      .stop()
      .catch((err: unknown) => this.log?.warn({ err, account: slot.pool.accountName }, 'a runner did not stop cleanly'))
      .finally(() => this.retiring.delete(slot));
    this.retiring.set(slot, done);
    return done;
  }

  /** Takes an idle runner out of its pool and stops it. */
  retire(slot: RunnerSlot): Promise<void> {
    const idle = slot.pool.idle;
    const at = idle.indexOf(slot);
    if (at >= 0) idle.splice(at, 1);
    return this.stop(slot);
  }

  /** Stops runners idle longer than `idleMs` (and forgets dead ones); forgets pools left empty. */
  sweep(pools: Map<string, Pool>, now: number, idleMs: number): void {
    for (const [key, pool] of pools) {
      const keep: RunnerSlot[] = [];
      for (const slot of pool.idle) {
        if (now - slot.runner.lastUsed > idleMs || !slot.runner.alive) void this.stop(slot);
        else keep.push(slot);
      }
      pool.idle = keep;
      if (!pool.idle.length && !pool.busy.size && !pool.starting && !pool.waiters.length) pools.delete(key);
    }
  }

  /** Settles when the first runner still stopping (of `account`, when given) is gone; undefined when none is. */
  firstGone(account?: string): Promise<void> | undefined {
    const stopping: Promise<void>[] = [];
    for (const [slot, done] of this.retiring) if (account === undefined || slot.pool.account === account) stopping.push(done);
    return stopping.length ? Promise.race(stopping) : undefined;
  }

  /** Adds the runners still stopping to `usage`, per account. */
  countInto(usage: Map<string, AccountUsage>): void {
    for (const slot of this.retiring.keys()) {
      const { account, accountName, memory } = slot.pool;
      let u = usage.get(account);
      if (!u) usage.set(account, (u = { name: accountName, runners: 0, busy: 0, memoryBytes: 0 }));
      u.runners++;
      u.memoryBytes += memory;
    }
  }

  /** Settles when every runner told to stop so far is gone. */
  async allGone(): Promise<void> {
    await Promise.all(this.retiring.values());
  }
}
