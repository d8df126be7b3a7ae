/**
 * lib/tally.ts: counts per key on the call path that keep a key at zero instead of deleting it
 * (deleting churns the Map's hash tables; the file says why), sweeping zeros once many pile up.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Tally } from '../../src/lib/tally.js';

describe('Tally', () => {
  test('adds and takes away per key, never below zero', () => {
    const t = new Tally<string>();
    assert.equal(t.add('a', 3), 3);
    assert.equal(t.add('b', 1), 1);
    assert.equal(t.add('a', -1), 2);
    assert.equal(t.get('a'), 2);
    assert.equal(t.add('b', -5), 0);
    assert.equal(t.get('b'), 0);
    assert.equal(t.get('never'), 0);
    assert.equal(t.add('never', -1), 0);
    assert.equal(t.size, 1);
  });

  test('a key that returns to zero and back counts from zero again', () => {
    const t = new Tally<string>();
    for (let i = 0; i < 100; i++) {
      assert.equal(t.add('acct', 1), 1);
      assert.equal(t.add('acct', 1), 2);
      assert.equal(t.add('acct', -2), 0);
    }
    assert.equal(t.size, 0);
    assert.equal(t.kept, 1, 'the key stays, at zero, rather than being deleted and added a hundred times');
  });

  test('keys at zero are swept once more than sweepAt pile up, and live counts survive the sweep', () => {
    const t = new Tally<number>(10);
    t.add(-1, 7);
    for (let k = 0; k < 25; k++) {
      t.add(k, 1);
      t.add(k, -1);
    }
    assert.equal(t.size, 1);
    // The 11th zero swept the first eleven keys and the 22nd the next eleven: three remain.
    assert.equal(t.kept, 1 + 3);
    assert.equal(t.get(-1), 7);
    // Swept keys start again from zero.
    assert.equal(t.add(3, 2), 2);
    assert.equal(t.size, 2);
  });
});
