/**
 * Placement and limits: whether one more runner may start on this node, counted by the memory
 * limit each runner gets (see the limits in runner-pool.ts). Over a limit, an idle runner stops
 * to make room (the account's own for its limits, any account's for the node's) and the caller
 * asks again once it is gone; with nothing idle, the caller waits for one of its pool's busy
 * runners, or is refused.
 */
import { Errors } from '../../domain/errors.js';
import type { AccountUsage, Pool, PoolSettings, PoolStats, RunnerSlot } from './pool-records.js';
import type { RunnerRetirement } from './runner-retirement.js';

/** What admission decided: start now, wait for something and ask again, or refuse (thrown). */
export type Admission = { kind: 'start' } | { kind: 'after'; done: Promise<unknown> } | { kind: 'wait' };

const MiB = 1024 * 1024;
const mib = (bytes: number) => Math.round(bytes / MiB);

export class RunnerLimits {
  constructor(
    private readonly settings: PoolSettings,
    private readonly pools: Map<string, Pool>,
    private readonly retirement: RunnerRetirement,
    private readonly stats: PoolStats,
  ) {}

  /** Runners and their memory per account (owner id), counting starting and stopping ones. */
  usage(): Map<string, AccountUsage> {
    const out = new Map<string, AccountUsage>();
    for (const pool of this.pools.values()) {
      const n = pool.idle.length + pool.busy.size + pool.starting;
      if (!n) continue;
      let u = out.get(pool.account);
      if (!u) out.set(pool.account, (u = { name: pool.accountName, runners: 0, busy: 0, memoryBytes: 0 }));
      u.runners += n;
      u.busy += pool.busy.size + pool.starting;
      u.memoryBytes += n * pool.memory;
    }
    this.retirement.countInto(out);
    return out;
  }

  /** May one more runner of this pool start now? */
  admit(pool: Pool): Admission {
    const usage = this.usage();
    const mine = usage.get(pool.account) ?? { name: pool.accountName, runners: 0, busy: 0, memoryBytes: 0 };
    let total = 0;
    let memory = 0;
    for (const u of usage.values()) {
      total += u.runners;
      memory += u.memoryBytes;
    }
    this.stats.runners = total;
    return this.withinAccount(pool, mine) ?? this.withinNode(pool, total, memory) ?? { kind: 'start' };
  }

  private withinAccount(pool: Pool, mine: AccountUsage): Admission | undefined {
    const s = this.settings;
    const overCount = !!s.maxPerAccount && mine.runners + 1 > s.maxPerAccount;
    const overMemory = !!s.memoryPerAccount && mine.memoryBytes + pool.memory > s.memoryPerAccount;
    if (!overCount && !overMemory) return undefined;
    if (s.memoryPerAccount && pool.memory > s.memoryPerAccount) {
      throw Errors.unavailable(
        `a runner of this algorithm needs ${mib(pool.memory)} MiB, more than the ${mib(s.memoryPerAccount)} MiB one account's runners may hold on this node`,
      );
    }
    const victim = this.leastRecentlyUsedIdle(pool.account);
    if (victim) return { kind: 'after', done: this.retirement.retire(victim) };
    const retiring = this.retirement.firstGone(pool.account);
    if (retiring) return { kind: 'after', done: retiring };
    if (pool.busy.size + pool.starting > 0) return { kind: 'wait' };
    const what = overCount
      ? `already have ${mine.runners} runners on this node, the most one account may have (${s.maxPerAccount})`
      : `already hold ${mib(mine.memoryBytes)} MiB of runner memory on this node; another ${mib(pool.memory)} MiB runner would pass the account's limit of ${mib(s.memoryPerAccount!)} MiB`;
    throw Errors.busy(`${pool.accountName}'s algorithms ${what}, and all of them are busy; call again when one of its calls finishes`, {
      retryAfterSeconds: 1,
    });
  }

  private withinNode(pool: Pool, total: number, memory: number): Admission | undefined {
    const s = this.settings;
    const overTotal = total + 1 > s.maxTotal;
    const overBudget = !!s.memoryBudget && memory + pool.memory > s.memoryBudget;
    if (!overTotal && !overBudget) return undefined;
    if (s.memoryBudget && pool.memory > s.memoryBudget) {
      throw Errors.unavailable(
        `a runner of this algorithm needs ${mib(pool.memory)} MiB, more than this node's runner memory budget of ${mib(s.memoryBudget)} MiB`,
      );
    }
    const victim = this.leastRecentlyUsedIdle(undefined);
    if (victim) return { kind: 'after', done: this.retirement.retire(victim) };
    const retiring = this.retirement.firstGone();
    if (retiring) return { kind: 'after', done: retiring };
    if (pool.busy.size + pool.starting > 0) return { kind: 'wait' };
    const what = overTotal
      ? `this node already has ${total} runners, its limit, and all are busy`
      : `runners already hold ${mib(memory)} MiB of this node's runner memory budget of ${mib(s.memoryBudget!)} MiB and all are busy; another ${mib(pool.memory)} MiB runner does not fit`;
    throw Errors.unavailable(`no room for another runner: ${what}. Call again shortly`, {
      retryAfterSeconds: 5,
    });
  }

  /** The idle runner (of `account`'s pools, when given) used least recently. */
  private leastRecentlyUsedIdle(account: string | undefined): RunnerSlot | undefined {
    let oldest: RunnerSlot | undefined;
    for (const pool of this.pools.values()) {
      if (account !== undefined && pool.account !== account) continue;
      for (const slot of pool.idle) if (!oldest || slot.runner.lastUsed < oldest.runner.lastUsed) oldest = slot;
    }
    return oldest;
  }
}
