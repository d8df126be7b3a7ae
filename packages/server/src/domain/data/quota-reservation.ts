/**
 * The quota of one upload: bytes are reserved in the database (atomically with the check
 * against the account's files and its other uploads in progress) before they are written, so
 * parallel uploads of one account, on any node, never store more than the quota together.
 * Reading the usage once and checking each upload against it alone would let every one of
 * them pass.
 */
import crypto from 'node:crypto';
import type { Clock } from '../clock.js';
import { Errors } from '../errors.js';
import type { DataStore } from './ports.js';

/**
 * Bytes reserved at a time for a body of unknown length: one database round trip per step, and
 * at most this much held ahead of the bytes (which other uploads of the account cannot use).
 */
const RESERVE_STEP = 1024 * 1024;
/** A reservation untouched this long belongs to an upload that died with its node. */
export const RESERVATION_STALE_MS = 10 * 60 * 1000;
/** How often a running upload refreshes its reservation (well within the stale age). */
const TOUCH_MS = 60 * 1000;

export class QuotaReservation {
  readonly id = crypto.randomUUID();
  private reserved = 0;
  private created = false;
  private touchedAt = 0;

  /**
   * @param quota bytes the account may store
   * @param replacing bytes of the file this upload replaces: they are freed when it commits
   */
  constructor(
    private readonly store: DataStore,
    private readonly clock: Clock,
    private readonly accountId: string,
    private readonly quota: number,
    private readonly replacing: number,
  ) {}

  /**
   * Makes sure `total` bytes of this upload are reserved; throws the quota error (413) when
   * they do not fit. `declared` = the body's announced length, named in the error.
   */
  async cover(total: number, declared?: number): Promise<void> {
    const now = this.clock().getTime();
    if (total <= this.reserved) {
      if (this.created && now - this.touchedAt >= TOUCH_MS) {
        this.touchedAt = now;
        await this.store.touchReservation(this.id, new Date(now).toISOString());
      }
      return;
    }
    const min = total - this.reserved;
    const { granted, used } = await this.store.reserve({
      id: this.id,
      accountId: this.accountId,
      min,
      max: declared === undefined ? Math.max(min, RESERVE_STEP) : min,
      limit: this.quota + this.replacing,
      at: new Date(now).toISOString(),
      staleBefore: new Date(now - RESERVATION_STALE_MS).toISOString(),
    });
    if (granted === 0) {
      const left = Math.max(0, this.quota - used + this.replacing);
      throw Errors.dataQuotaExceeded({ quota: this.quota, used, left, size: declared });
    }
    this.created = true;
    this.touchedAt = now;
    this.reserved += granted;
  }

  /** Gives the bytes back (the upload failed); the commit of a file releases it by itself. */
  async release(): Promise<void> {
    if (this.created) await this.store.releaseReservation(this.id);
  }
}
