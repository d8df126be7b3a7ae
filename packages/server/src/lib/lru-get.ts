/**
 * lru-cache's get() on paths that run on every call (the call lane's key lookup, the rate
 * limits, the resolution cache), with one shared options object instead of none.
 *
 * Given no options, get() makes a new object for them (a default parameter) and writes its
 * diagnostics `status` into it: several per warm call. In about one run in three, V8 kept those
 * objects past every scavenge for the life of the process, promoting some 290 B per call instead
 * of 55 and doubling each scavenge's pause, so p99 doubled (docs/performance.md, rule 4). Passed
 * the shared object, get() allocates nothing. It writes `status` into it (undefined, unless
 * something subscribes to lru-cache's diagnostics channel: then a fresh object it publishes), and
 * lruGet sets it back to undefined after each get, so nothing of one call is left for the next.
 * A plain property, not an accessor that ignores writes: V8 calls an accessor set from
 * lru-cache's store through its runtime, about a microsecond a get (docs/performance.md, rule 7).
 */
import type { LRUCache } from 'lru-cache';

const SHARED_OPTIONS: { status?: unknown } = { status: undefined };

/** `cache.get(key)`, with no options object made for it (see above). */
export function lruGet<K extends NonNullable<unknown>, V extends NonNullable<unknown>, FC>(
  cache: LRUCache<K, V, FC>,
  key: K,
): V | undefined {
  try {
    return cache.get(key, SHARED_OPTIONS as LRUCache.GetOptions<K, V, FC>);
  } finally {
    SHARED_OPTIONS.status = undefined;
  }
}
