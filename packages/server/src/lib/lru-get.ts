/**
 * lru-cache's get() on paths that run on every call (the call lane's key lookup, the rate
 * limits, the resolution cache), with one shared options object instead of none.
 *
 * Given no options, get() makes a new object for them (a default parameter) and writes its
 * diagnostics `status` into it: several per warm call. In about one run in three, V8 kept those
 * objects past every scavenge for the life of the process, promoting some 290 B per call instead
 * of 55 and doubling each scavenge's pause, so p99 doubled (BENCHMARKS.md, session 18). Passed
 * the shared object, get() allocates nothing. Its `status` reads undefined and ignores writes: with a
 * diagnostics subscriber, lru-cache keeps its own status object for the call (it publishes that
 * one), and nothing of one call is left here for the next.
 */
import type { LRUCache } from 'lru-cache';

const SHARED_OPTIONS = Object.freeze({
  get status() {
    return undefined;
  },
  set status(_ignored: unknown) {},
});

/** `cache.get(key)`, with no options object made for it (see above). */
export function lruGet<K extends NonNullable<unknown>, V extends NonNullable<unknown>, FC>(
  cache: LRUCache<K, V, FC>,
  key: K,
): V | undefined {
  return cache.get(key, SHARED_OPTIONS as LRUCache.GetOptions<K, V, FC>);
}
