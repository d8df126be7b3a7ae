import assert from 'node:assert/strict';
import diagnostics from 'node:diagnostics_channel';
import { test } from 'node:test';
import { LRUCache } from 'lru-cache';
import { lruGet } from '../../src/lib/lru-get.js';

test('lruGet answers as get() does and counts as a use: the least recently got entry is evicted first', () => {
  const cache = new LRUCache<string, { n: number }>({ max: 2 });
  cache.set('a', { n: 1 });
  cache.set('b', { n: 2 });
  assert.deepEqual(lruGet(cache, 'a'), { n: 1 });
  assert.equal(lruGet(cache, 'missing'), undefined);
  cache.set('c', { n: 3 });
  assert.deepEqual([...cache.keys()].sort(), ['a', 'c'], "'b' was the least recently used");
});

test('lruGet with a diagnostics subscriber: each get publishes its own status, and none is left in the shared options', async () => {
  const cache = new LRUCache<string, string>({ max: 10 });
  cache.set('k1', 'v1');
  cache.set('k2', 'v2');
  const seen: { key: unknown; value: unknown; get: unknown }[] = [];
  const published = new Set<unknown>();
  const onMessage = (m: unknown) => {
    const s = m as { op?: string; key?: unknown; value?: unknown; get?: unknown };
    if (s.op === 'get') seen.push({ key: s.key, value: s.value, get: s.get });
    published.add(m);
  };
  // lru-cache opens its channel once node:diagnostics_channel has loaded (an import it starts itself).
  await new Promise((resolve) => setImmediate(resolve));
  diagnostics.subscribe('lru-cache:metrics', onMessage);
  try {
    assert.equal(lruGet(cache, 'k1'), 'v1');
    assert.equal(lruGet(cache, 'k2'), 'v2');
    assert.equal(lruGet(cache, 'nope'), undefined);
  } finally {
    diagnostics.unsubscribe('lru-cache:metrics', onMessage);
  }
  assert.deepEqual(
    seen.map((s) => [s.key, s.value]),
    [
      ['k1', 'v1'],
      ['k2', 'v2'],
      ['nope', undefined],
    ],
  );
  assert.equal(published.size, 3, 'each get published a status object of its own, not the last one again');
  // Without the subscriber again: nothing of those calls comes back.
  assert.equal(lruGet(cache, 'k1'), 'v1');
  assert.equal(seen.length, 3);
});
