/**
 * How many bytes of call inputs this node holds at once: from the first byte received until the
 * call no longer needs its input (a sync call's answer, an async call's end). Past the budget a
 * call is refused with 503 and Retry-After instead of buffering more; one account may hold at
 * most a quarter of it (at least one input of the largest size), so it cannot starve the others.
 */
import { Errors } from '../domain/errors.js';
import { Tally } from '../lib/tally.js';

export class InputBudget {
  private used = 0;
  private readonly byAccount = new Tally<string>();
  readonly perAccountBytes: number;

  /** totalBytes 0: no budget. */
  constructor(
    readonly totalBytes: number,
    largestInput: number,
  ) {
    this.perAccountBytes = Math.max(largestInput, Math.floor(totalBytes / 4));
  }

  lease(account: { id: string; name: string }): InputLease {
    return new InputLease(this, account);
  }

  /** Throws the refusal when `n` more bytes would not fit. */
  take(account: { id: string; name: string }, n: number): void {
    if (this.totalBytes <= 0) return;
    const mine = this.byAccount.get(account.id);
    if (mine + n > this.perAccountBytes) {
      throw Errors.busy(
        `too much call input in flight for ${account.name}: at most ${this.perAccountBytes} bytes at once; retry when earlier calls have finished`,
        { retryAfterSeconds: 5 },
      );
    }
    if (this.used + n > this.totalBytes) {
      throw Errors.unavailable(`the server holds as much call input as it may (${this.totalBytes} bytes); retry shortly`, {
        retryAfterSeconds: 5,
      });
    }
    this.used += n;
    this.byAccount.add(account.id, n);
  }

  give(account: { id: string }, n: number): void {
    if (this.totalBytes <= 0 || n === 0) return;
    this.used -= n;
    this.byAccount.add(account.id, -n);
  }

  /** Bytes held now (for tests and metrics). */
  get inUse(): number {
    return this.used;
  }
}

/** One request's share of the budget; `release` is idempotent. */
export class InputLease {
  private bytes = 0;
  private released = false;
  /** Who gives the bytes back: the request's end, the route handler, or an async call's end. */
  holder: 'request' | 'handler' | 'async' = 'request';

  constructor(
    private readonly budget: InputBudget,
    private readonly account: { id: string; name: string },
  ) {}

  get size(): number {
    return this.bytes;
  }

  /** Grows the lease to `total` bytes; throws the budget's refusal when they do not fit. */
  growTo(total: number): void {
    if (this.released || total <= this.bytes) return;
    this.budget.take(this.account, total - this.bytes);
    this.bytes = total;
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    this.budget.give(this.account, this.bytes);
    this.bytes = 0;
  }
}
