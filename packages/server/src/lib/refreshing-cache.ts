/**
 * A bounded cache for answers that every call needs and that may be a few seconds old (which
 * account a key names, which build an address resolves to), with two rules a plain TTL cache
 * lacks:
 *
 * - **One load per key at a time.** Calls that miss together share one load instead of each
 *   running its own: the misses that arrived in one burst after an entry expired used to run
 *   the same database queries side by side, and every one of them waited for all the others.
 * - **Refreshed ahead of expiry while in use.** A hit on an entry older than `refreshAfterMs`
 *   answers at once and starts one load in the background, so an entry that calls keep using
 *   is replaced before it expires and no call pays for the load. A warm call at a steady rate
 *   used to miss every time the entry expired (docs/performance.md, rule 5).
 *
 * What it serves is never older than `ttlMs`: an entry that expired is not returned, whether or
 * not a refresh is under way. `delete`, `clear` and `forget` also void the loads under way, so
 * a load that began before an entry was dropped (a revoked key) never stores what it read.
 */
import { LRUCache } from 'lru-cache';
import { lruGet } from './lru-get.js';

export interface RefreshingCacheOptions<K, V, C> {
  /** Entries kept at most; the least recently used go first. */
  max: number;
  /** Age after which an entry is never served. */
  ttlMs: number;
  /**
   * Age after which a hit also starts a background load of a fresh value (default four fifths
   * of ttlMs: the last fifth is for that load to land before the entry expires).
   */
  refreshAfterMs?: number;
  /**
   * Loads the value for `key`. `context` is what the caller gave on a miss, and for a refresh
   * the context the entry was loaded with.
   */
  load: (key: K, context: C) => Promise<V>;
  /** A background refresh failed: the entry is dropped (the next call loads it and sees why). */
  onRefreshError?: (err: unknown, key: K) => void;
  /** Milliseconds from any fixed origin (default performance.now); tests pass their own. */
  now?: () => number;
}

interface Entry<V, C> {
  value: V;
  context: C;
  loadedAt: number;
}

export class RefreshingCache<K extends string, V, C> {
  private readonly entries: LRUCache<K, Entry<V, C>>;
  /** Loads under way, by key: the one a caller that misses joins. */
  private readonly loading = new Map<K, Promise<V>>();
  private readonly now: () => number;
  private readonly refreshAfterMs: number;

  constructor(private readonly o: RefreshingCacheOptions<K, V, C>) {
    this.refreshAfterMs = o.refreshAfterMs ?? o.ttlMs * 0.8;
    if (!(this.refreshAfterMs > 0 && this.refreshAfterMs <= o.ttlMs)) throw new RangeError('refreshAfterMs must be in (0, ttlMs]');
    this.entries = new LRUCache({ max: o.max });
    this.now = o.now ?? (() => performance.now());
  }

  /** The value, if one younger than ttlMs is kept; an old one also starts a background refresh. */
  get(key: K): V | undefined {
    const entry = lruGet(this.entries, key);
    if (entry === undefined) return undefined;
    const age = this.now() - entry.loadedAt;
    if (age >= this.o.ttlMs) {
      this.entries.delete(key);
      return undefined;
    }
    if (age >= this.refreshAfterMs && !this.loading.has(key)) {
      this.fetch(key, entry.context).catch((err: unknown) => this.o.onRefreshError?.(err, key));
    }
    return entry.value;
  }

  /**
   * A load of `key` (for a caller that missed): the one under way, or a new one with `context`.
   * A load that succeeds is kept; one that fails drops the entry and rejects.
   */
  fetch(key: K, context: C): Promise<V> {
    const running = this.loading.get(key);
    if (running) return running;
    const load = this.o.load(key, context).then(
      (value) => {
        // Only while still the load for this key: a delete or clear since it began voids it.
        if (this.loading.get(key) === load) {
          this.loading.delete(key);
          this.entries.set(key, { value, context, loadedAt: this.now() });
        }
        return value;
      },
      (err: unknown) => {
        if (this.loading.get(key) === load) {
          this.loading.delete(key);
          this.entries.delete(key);
        }
        throw err;
      },
    );
    this.loading.set(key, load);
    return load;
  }

  delete(key: K): void {
    this.loading.delete(key);
    this.entries.delete(key);
  }

  clear(): void {
    this.loading.clear();
    this.entries.clear();
  }

  /** Drops the entries whose value matches, and voids every load under way (its value is not known yet). */
  forget(match: (value: V) => boolean): void {
    this.loading.clear();
    const keys: K[] = [];
    for (const [key, entry] of this.entries.entries()) if (match(entry.value)) keys.push(key);
    for (const key of keys) this.entries.delete(key);
  }
}
