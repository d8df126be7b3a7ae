/**
 * lib/slots.ts: the calls in flight of a cluster node, in reused slots rather than a Map or Set
 * that takes and forgets an entry per call (the file says why).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Slots } from '../../src/lib/slots.js';

describe('Slots', () => {
  test('put returns a slot that get and take find; take empties it once', () => {
    const s = new Slots<string>();
    const a = s.put('a');
    const b = s.put('b');
    assert.notEqual(a, b);
    assert.equal(s.get(a), 'a');
    assert.equal(s.size, 2);
    assert.equal(s.take(a), 'a');
    assert.equal(s.take(a), undefined, 'a second take of the same slot finds nothing');
    assert.equal(s.get(a), undefined);
    assert.equal(s.size, 1);
    assert.deepEqual([...s.entries()], [[b, 'b']]);
  });

  test('freed slots are reused, so the array does not grow with the number of calls', () => {
    const s = new Slots<number>();
    const seen = new Set<number>();
    for (let call = 0; call < 1000; call++) {
      const first = s.put(call);
      const second = s.put(call);
      seen.add(first).add(second);
      assert.equal(s.take(second), call);
      assert.equal(s.take(first), call);
    }
    assert.deepEqual([...seen].sort(), [0, 1]);
    assert.equal(s.size, 0);
  });

  test('entries can be taken while they are walked (the silence sweep does)', () => {
    const s = new Slots<string>();
    for (const v of ['x', 'y', 'z']) s.put(v);
    const walked: string[] = [];
    for (const [slot, v] of s.entries()) {
      walked.push(v);
      s.take(slot);
    }
    assert.deepEqual(walked, ['x', 'y', 'z']);
    assert.equal(s.size, 0);
  });
});
