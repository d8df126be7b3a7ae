/**
 * main/gc-tuning.ts: young-generation scavenges on the main thread alone on a machine of two CPUs
 * or fewer, where helper threads compete with the runners; an operator's own choice wins.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { gcFlagsFor } from '../../src/main/gc-tuning.js';

describe('gcFlagsFor', () => {
  test('two CPUs or fewer: scavenges without helper threads', () => {
    assert.deepEqual(gcFlagsFor({ cpus: 1, nodeFlags: '' }), ['--no-parallel-scavenge']);
    assert.deepEqual(gcFlagsFor({ cpus: 2, nodeFlags: '--enable-source-maps ' }), ['--no-parallel-scavenge']);
  });

  test('more CPUs: V8 keeps its default', () => {
    assert.deepEqual(gcFlagsFor({ cpus: 3, nodeFlags: '' }), []);
    assert.deepEqual(gcFlagsFor({ cpus: 64, nodeFlags: '' }), []);
  });

  test("an operator's own flag on Node's command line is left as it is, either spelling", () => {
    assert.deepEqual(gcFlagsFor({ cpus: 2, nodeFlags: '--parallel-scavenge' }), []);
    assert.deepEqual(gcFlagsFor({ cpus: 2, nodeFlags: '--enable-source-maps --no-parallel_scavenge' }), []);
    // A flag that only starts with the same words is another flag.
    assert.deepEqual(gcFlagsFor({ cpus: 2, nodeFlags: '--parallel-scavenge-task-trace' }), ['--no-parallel-scavenge']);
  });
});
