/**
 * lib/refreshing-cache.ts: the key and resolution caches of the call path. Calls that miss
 * together share one load; an entry in use is reloaded in the background before it expires; no
 * entry older than its TTL is ever served; a load voided by a delete never stores what it read.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { RefreshingCache } from '../../src/lib/refreshing-cache.js';

/** A load the test settles by hand, and every load asked for, in order. */
interface Pending {
  key: string;
  context: string;
  resolve: (v: string) => void;
  reject: (e: Error) => void;
}

function harness(o: { ttlMs?: number; refreshAfterMs?: number; max?: number } = {}) {
  let now = 0;
  const loads: Pending[] = [];
  const refreshErrors: unknown[] = [];
  const cache = new RefreshingCache<string, string, string>({
    max: o.max ?? 100,
    ttlMs: o.ttlMs ?? 1000,
    // Given as undefined: the cache's default.
    refreshAfterMs: 'refreshAfterMs' in o ? o.refreshAfterMs : 500,
    load: (key, context) => new Promise((resolve, reject) => loads.push({ key, context, resolve, reject })),
    onRefreshError: (err) => refreshErrors.push(err),
    now: () => now,
  });
  /** Loads `key` with `value` through a miss, as a call would. */
  const loaded = async (key: string, value: string, context = 'ctx') => {
    const p = cache.fetch(key, context);
    loads.at(-1)!.resolve(value);
    await p;
  };
  return { cache, loads, refreshErrors, loaded, advance: (ms: number) => (now += ms) };
}

/** Lets the settled loads' callbacks run. */
const settle = () => new Promise((r) => setImmediate(r));

describe('RefreshingCache', () => {
  test('calls that miss together share one load, and all get its value', async () => {
    const { cache, loads } = harness();
    assert.equal(cache.get('k'), undefined);
    const waiting = [cache.fetch('k', 'first'), cache.fetch('k', 'second'), cache.fetch('k', 'third')];
    assert.equal(loads.length, 1, 'one load for three misses');
    assert.equal(loads[0]!.context, 'first');
    loads[0]!.resolve('v1');
    assert.deepEqual(await Promise.all(waiting), ['v1', 'v1', 'v1']);
    assert.equal(cache.get('k'), 'v1');
    // Another key is a load of its own.
    void cache.fetch('other', 'x');
    assert.equal(loads.length, 2);
  });

  test('a hit on an entry past refreshAfterMs answers at once and reloads it once, in the background, with its context', async () => {
    const { cache, loads, loaded, advance } = harness();
    await loaded('k', 'v1');
    advance(499);
    assert.equal(cache.get('k'), 'v1');
    assert.equal(loads.length, 1, 'young: no reload');
    advance(1);
    assert.equal(cache.get('k'), 'v1', 'due: still answered at once');
    assert.equal(cache.get('k'), 'v1');
    assert.equal(loads.length, 2, 'one reload however many hits');
    assert.equal(loads[1]!.context, 'ctx');
    loads[1]!.resolve('v2');
    await settle();
    assert.equal(cache.get('k'), 'v2');
    // The new value counts its age from its own load.
    advance(499);
    assert.equal(cache.get('k'), 'v2');
    assert.equal(loads.length, 2);
  });

  test('without refreshAfterMs, a hit reloads once the entry is four fifths of ttlMs old', async () => {
    const { cache, loads, loaded, advance } = harness({ refreshAfterMs: undefined });
    await loaded('k', 'v1');
    advance(799);
    assert.equal(cache.get('k'), 'v1');
    assert.equal(loads.length, 1, 'before 800 ms: no reload');
    advance(1);
    assert.equal(cache.get('k'), 'v1');
    assert.equal(loads.length, 2, 'at 800 ms: one reload');
  });

  test('nothing older than ttlMs is served, not even while its reload is under way', async () => {
    const { cache, loads, loaded, advance } = harness();
    await loaded('k', 'v1');
    advance(600);
    assert.equal(cache.get('k'), 'v1');
    assert.equal(loads.length, 2, 'reload started');
    advance(400);
    assert.equal(cache.get('k'), undefined, 'expired while its reload is slow');
    // A caller that misses now joins the reload under way.
    const joined = cache.fetch('k', 'ctx');
    assert.equal(loads.length, 2);
    loads[1]!.resolve('v2');
    assert.equal(await joined, 'v2');
    assert.equal(cache.get('k'), 'v2');
  });

  test('a failed load rejects every caller that shared it and keeps nothing; a failed reload drops the entry and is reported', async () => {
    const { cache, loads, refreshErrors, loaded, advance } = harness();
    const a = cache.fetch('k', 'ctx');
    const b = cache.fetch('k', 'ctx');
    loads[0]!.reject(new Error('no such key'));
    await assert.rejects(a, /no such key/);
    await assert.rejects(b, /no such key/);
    assert.equal(cache.get('k'), undefined);
    // The next miss loads again.
    await loaded('k', 'v1');
    assert.equal(loads.length, 2);
    advance(500);
    assert.equal(cache.get('k'), 'v1');
    loads[2]!.reject(new Error('revoked meanwhile'));
    await settle();
    assert.equal(cache.get('k'), undefined, 'dropped: the next call loads it and sees why');
    assert.equal(refreshErrors.length, 1);
    assert.match(String(refreshErrors[0]), /revoked meanwhile/);
  });

  test('a load under way when its entry is deleted, cleared or forgotten never stores what it read', async () => {
    const { cache, loads, loaded, advance } = harness();
    // A reload that read a key before it was revoked on this node (delete), then answers.
    await loaded('k', 'alive');
    advance(500);
    cache.get('k');
    cache.delete('k');
    loads[1]!.resolve('alive (read before the delete)');
    await settle();
    assert.equal(cache.get('k'), undefined);
    // A miss under way when everything is cleared: its caller gets the value, the cache does not keep it.
    const miss = cache.fetch('m', 'ctx');
    cache.clear();
    loads[2]!.resolve('read before the clear');
    assert.equal(await miss, 'read before the clear');
    assert.equal(cache.get('m'), undefined);
    // forget: entries that match go, others stay, and loads under way are voided.
    await loaded('x', 'account-1');
    await loaded('y', 'account-2');
    const pending = cache.fetch('z', 'ctx');
    cache.forget((v) => v === 'account-1');
    loads.at(-1)!.resolve('account-3');
    await pending;
    assert.equal(cache.get('x'), undefined);
    assert.equal(cache.get('y'), 'account-2');
    assert.equal(cache.get('z'), undefined);
  });

  test('holds at most max entries, the least recently used going first', async () => {
    const { cache, loaded } = harness({ max: 2 });
    await loaded('a', 'a');
    await loaded('b', 'b');
    cache.get('a');
    await loaded('c', 'c');
    assert.equal(cache.get('b'), undefined);
    assert.equal(cache.get('a'), 'a');
    assert.equal(cache.get('c'), 'c');
  });

  test('refreshAfterMs must lie in (0, ttlMs]', () => {
    assert.throws(() => harness({ ttlMs: 100, refreshAfterMs: 200 }), RangeError);
    assert.throws(() => harness({ ttlMs: 100, refreshAfterMs: 0 }), RangeError);
  });
});
