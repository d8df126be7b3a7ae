/** CoalescingBatch (lib/coalescing-batch.ts): one flush in flight, later items together in the next. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CoalescingBatch } from '../../src/lib/coalescing-batch.js';

/** A flush the test finishes by hand, recording what each call carried. */
function manualFlush<T>() {
  const calls: T[][] = [];
  const pending: { resolve: () => void; reject: (err: Error) => void }[] = [];
  let called: () => void = () => {};
  const flush = (items: T[]) =>
    new Promise<void>((resolve, reject) => {
      calls.push(items);
      pending.push({ resolve, reject });
      called();
    });
  const nextCall = () => new Promise<void>((resolve) => (called = resolve));
  return { calls, pending, flush, nextCall };
}

test('items of one turn go in one flush; items added while it is in flight go together in the next', async () => {
  const f = manualFlush<number>();
  const batch = new CoalescingBatch(f.flush);
  let first = f.nextCall();
  const a = batch.add(1);
  const b = batch.add(2);
  await first;
  assert.deepEqual(f.calls, [[1, 2]]);
  // In flight: these wait, then leave as one.
  const c = batch.add(3);
  const d = batch.add(4);
  const e = batch.add(5);
  first = f.nextCall();
  f.pending[0]!.resolve();
  await Promise.all([a, b]);
  await first;
  assert.deepEqual(f.calls, [
    [1, 2],
    [3, 4, 5],
  ]);
  f.pending[1]!.resolve();
  await Promise.all([c, d, e]);
  await batch.settled();
  // Idle again: the next item goes at once, alone.
  first = f.nextCall();
  const g = batch.add(6);
  await first;
  assert.deepEqual(f.calls[2], [6]);
  f.pending[2]!.resolve();
  await g;
});

test("a failed flush rejects its own items with the error and nobody else's", async () => {
  const f = manualFlush<string>();
  const batch = new CoalescingBatch(f.flush);
  let next = f.nextCall();
  const a = batch.add('a');
  await next;
  const b = batch.add('b');
  next = f.nextCall();
  f.pending[0]!.reject(new Error('disk full'));
  await assert.rejects(a, /disk full/);
  await next;
  f.pending[1]!.resolve();
  await b;
  assert.deepEqual(f.calls, [['a'], ['b']]);
});

test('maxItems splits a backlog into flushes of at most that many, in order', async () => {
  const seen: number[][] = [];
  const batch = new CoalescingBatch<number>(
    async (items) => {
      seen.push(items);
    },
    { maxItems: 2 },
  );
  await Promise.all([1, 2, 3, 4, 5].map((n) => batch.add(n)));
  assert.deepEqual(seen, [[1, 2], [3, 4], [5]]);
});

test('settled() waits for every item handed in, including those that arrive during a flush', async () => {
  const f = manualFlush<number>();
  const batch = new CoalescingBatch(f.flush, { gapMs: 1 });
  let next = f.nextCall();
  void batch.add(1);
  await next;
  void batch.add(2);
  let settled = false;
  const waiting = batch.settled().then(() => (settled = true));
  next = f.nextCall();
  f.pending[0]!.resolve();
  await next;
  assert.equal(settled, false, 'the second flush is still in flight');
  f.pending[1]!.resolve();
  await waiting;
  assert.deepEqual(f.calls, [[1], [2]]);
});
