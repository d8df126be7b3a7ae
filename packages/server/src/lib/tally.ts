/**
 * A count per key (calls in flight per account, input bytes per account, connections per
 * client) kept on a path every call takes, without churning its Map.
 *
 * Why not `delete` a key when its count drops to zero: a long-lived Map lives in V8's old
 * generation, and each delete and re-add near its size thresholds makes V8 allocate a new hash
 * table for it. The table it replaces stays in the old generation until the next full
 * collection and still points at its successor, so every new table (and what its entries hold)
 * survives the young-generation collections and is promoted in turn. Under warm calls at a
 * moderate rate that churn filled the old generation by about a megabyte a second, and the full
 * collections it brought every few seconds were the slowest calls (docs/performance.md, rule 3).
 * So an entry at zero stays, and entries at zero are swept only once many have piled up.
 */
export class Tally<K> {
  private readonly counts = new Map<K, number>();
  /** Entries whose count is zero. */
  private zeros = 0;

  constructor(
    /** Zero entries tolerated before they are swept (each is one key kept). */
    private readonly sweepAt = 1024,
  ) {}

  get(key: K): number {
    return this.counts.get(key) ?? 0;
  }

  /** Adds `n` (negative to take away; the count never goes below zero) and returns the new count. */
  add(key: K, n: number): number {
    const before = this.counts.get(key);
    const after = Math.max(0, (before ?? 0) + n);
    if (before === after) return after;
    if (before === undefined && after === 0) return 0;
    this.counts.set(key, after);
    if (after === 0) this.zeros++;
    else if (before === 0) this.zeros--;
    if (this.zeros > this.sweepAt) this.sweep();
    return after;
  }

  /** Keys with a count above zero (for tests and metrics). */
  get size(): number {
    return this.counts.size - this.zeros;
  }

  /** Entries held, those at zero included (for tests). */
  get kept(): number {
    return this.counts.size;
  }

  private sweep(): void {
    for (const [key, count] of this.counts) if (count === 0) this.counts.delete(key);
    this.zeros = 0;
  }
}
