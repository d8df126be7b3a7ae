/** RecentCount (lib/recent-count.ts), the admin status's calls per minute, with a clock the test moves. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RecentCount } from '../../src/lib/recent-count.js';

test('counts what happened in the last window of seconds and forgets what is older', () => {
  let now = 1_700_000_000_000;
  const count = new RecentCount(60, () => now);
  assert.equal(count.total(), 0);
  count.record();
  count.record(2);
  assert.equal(count.total(), 3);
  now += 30_000;
  count.record();
  assert.equal(count.total(), 4);
  now += 29_999; // 59.999 s after the first three
  assert.equal(count.total(), 4);
  now += 1; // a minute after the first three: they leave the window
  assert.equal(count.total(), 1);
  now += 30_000;
  assert.equal(count.total(), 0);
});

test('a bucket reused after a full turn of the ring starts again from zero', () => {
  let now = 0;
  const count = new RecentCount(3, () => now);
  count.record(5);
  now = 3_000; // the same bucket, three seconds later
  count.record();
  assert.equal(count.total(), 1);
  now = 1_000_000; // long idle
  assert.equal(count.total(), 0);
});

test('the window is a whole number of seconds', () => {
  assert.throws(() => new RecentCount(0), RangeError);
  assert.throws(() => new RecentCount(1.5), RangeError);
});
