/**
 * A set of things in flight (calls waiting for their answer) that each call enters and leaves,
 * kept in an array of slots with a list of free ones instead of a Map or Set.
 *
 * A long-lived Map or Set that takes and forgets an entry per call makes V8 replace its hash
 * table every few calls, and each obsolete table, already in the old generation, keeps its
 * successor and everything its entries held alive through the young-generation collections
 * (lib/tally.ts says more). Slots are overwritten in place: what a finished call held is garbage
 * at once.
 */
export class Slots<T> {
  private readonly slots: (T | undefined)[] = [];
  private readonly free: number[] = [];
  private used = 0;

  /** Puts `value` in a free slot and returns its number. */
  put(value: T): number {
    const i = this.free.pop() ?? this.slots.length;
    this.slots[i] = value;
    this.used++;
    return i;
  }

  get(i: number): T | undefined {
    return this.slots[i];
  }

  /** Empties slot `i` and returns what it held (undefined when it was empty). */
  take(i: number): T | undefined {
    const value = this.slots[i];
    if (value === undefined) return undefined;
    this.slots[i] = undefined;
    this.free.push(i);
    this.used--;
    return value;
  }

  get size(): number {
    return this.used;
  }

  /** Each slot in use, with its number. */
  *entries(): Generator<[number, T]> {
    for (let i = 0; i < this.slots.length; i++) {
      const value = this.slots[i];
      if (value !== undefined) yield [i, value];
    }
  }
}
