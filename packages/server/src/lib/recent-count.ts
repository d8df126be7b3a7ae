/**
 * How many events happened in the last window (calls in the last minute), in constant memory:
 * a ring of one-second buckets. Recording is one array write, so it can sit on the call path.
 */
export class RecentCount {
  private readonly counts: number[];
  /** The second (since the epoch) each bucket counts; a bucket of an older second is stale. */
  private readonly seconds: number[];

  constructor(
    /** The window, in whole seconds. */
    private readonly windowSeconds: number,
    /** Milliseconds since the epoch; injected so tests decide what "now" is. */
    private readonly now: () => number = Date.now,
  ) {
    if (!Number.isInteger(windowSeconds) || windowSeconds < 1)
      throw new RangeError('the window must be a whole number of seconds, at least 1');
    this.counts = new Array<number>(windowSeconds).fill(0);
    this.seconds = new Array<number>(windowSeconds).fill(-1);
  }

  record(n = 1): void {
    const second = Math.floor(this.now() / 1000);
    const i = second % this.windowSeconds;
    if (this.seconds[i] !== second) {
      this.seconds[i] = second;
      this.counts[i] = 0;
    }
    this.counts[i]! += n;
  }

  /** Events recorded in the window that ends now (this second and the ones before it). */
  total(): number {
    const second = Math.floor(this.now() / 1000);
    let sum = 0;
    for (let i = 0; i < this.windowSeconds; i++) {
      const s = this.seconds[i]!;
      if (s > second - this.windowSeconds && s <= second) sum += this.counts[i]!;
    }
    return sum;
  }
}
