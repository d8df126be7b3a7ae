/**
 * lib/json-scan.ts checks a call's JSON input before anything parses it. Its per-level record
 * (object or array) is one buffer shared by every scan, so these tests interleave scans whose
 * levels differ and make sure no scan reads what an earlier one left behind.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { scanJson } from '../../src/lib/json-scan.js';

const scan = (text: string, maxDepth = 128) => scanJson(Buffer.from(text), maxDepth);

describe('scanJson', () => {
  test('accepts valid JSON and names the byte of a fault', () => {
    for (const ok of ['1', '"x"', 'null', '[]', '{}', '{"a":[1,{"b":null}],"c":"d"}', ' [ 1 , 2 ] ']) {
      assert.deepEqual(scan(ok), { ok: true }, ok);
    }
    const bad = scan('{"a":1,}');
    assert.equal(bad.ok, false);
    assert.ok(!bad.ok && bad.reason === 'syntax' && bad.at === 7, JSON.stringify(bad));
  });

  test('a scan never reads the levels an earlier scan wrote', () => {
    // Objects at every level, then arrays at the same levels: a close bracket must match this
    // scan's opener, and a comma must expect what this scan's level holds.
    const objects = '{"a":'.repeat(40) + '1' + '}'.repeat(40);
    const arrays = '['.repeat(40) + '1' + ']'.repeat(40);
    const mixedArrays = '['.repeat(40) + '1,2' + ']'.repeat(40);
    for (let round = 0; round < 3; round++) {
      assert.deepEqual(scan(objects), { ok: true });
      assert.deepEqual(scan(arrays), { ok: true });
      assert.deepEqual(scan(mixedArrays), { ok: true });
      // An array closed by a brace after objects filled the levels: still a fault.
      const wrongClose = scan('['.repeat(40) + '1' + '}' + ']'.repeat(39));
      assert.equal(wrongClose.ok, false, 'a brace does not close an array');
      // An object key expected after a comma in an object, never a bare value.
      assert.deepEqual(scan(objects), { ok: true });
      const valueAsKey = scan('{"a":1,2}');
      assert.equal(valueAsKey.ok, false, 'a value is not a key');
    }
  });

  test('depth: the limit holds, and a deeper limit than any before still records every level', () => {
    const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
    assert.deepEqual(scan(nested(128)), { ok: true });
    const tooDeep = scan(nested(129));
    assert.ok(!tooDeep.ok && tooDeep.reason === 'depth', JSON.stringify(tooDeep));
    // A limit above the shared buffer's size: the levels past it are recorded too.
    const deepObjects = '{"k":'.repeat(500) + '[1,2]' + '}'.repeat(500);
    assert.deepEqual(scan(deepObjects, 1000), { ok: true });
    assert.deepEqual(scan('['.repeat(600) + '{"a":1}' + ']'.repeat(600), 1000), { ok: true });
    const deepWrong = scan('['.repeat(600) + '1}' + ']'.repeat(599), 1000);
    assert.equal(deepWrong.ok, false);
  });
});
