/**
 * runtime/runner/pipe-request.ts: the line a runner reads for one call. A JSON input travels as its
 * checked text, spliced in unparsed; the line must read as the same request either way.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { pipeRequestChunks } from '../../src/runtime/runner/pipe-request.js';
import type { PipeRequest } from '../../src/domain/calls/ports.js';

const line = (r: PipeRequest) => Buffer.concat(pipeRequestChunks(r).map((c) => (typeof c === 'string' ? Buffer.from(c) : c))).toString();

describe('pipeRequestChunks', () => {
  test('a JSON input is spliced in as its text, with every other field of the request', () => {
    const r: PipeRequest = {
      content_type: 'json',
      data: undefined,
      json: Buffer.from('{"a":[1,2,{"b":"ü"}]}'),
      api_key: 'simKEY',
      event: { source: 'kafka', topic: 't', offset: '3' },
      insights_token: 'tok',
    };
    const text = line(r);
    assert.ok(text.endsWith('}\n'), 'one line');
    assert.deepEqual(JSON.parse(text), {
      content_type: 'json',
      api_key: 'simKEY',
      event: { source: 'kafka', topic: 't', offset: '3' },
      insights_token: 'tok',
      data: { a: [1, 2, { b: 'ü' }] },
    });
  });

  test('fields a call does not have are left out, and a large input is not copied into a string', () => {
    const small = line({ content_type: 'json', data: undefined, json: Buffer.from('1') });
    assert.equal(small, '{"content_type":"json","data":1}\n');
    const big = Buffer.from(JSON.stringify('x'.repeat(70 * 1024)));
    const chunks = pipeRequestChunks({ content_type: 'json', data: undefined, json: big });
    assert.equal(chunks[1], big, 'the input bytes themselves');
    assert.equal(JSON.parse(line({ content_type: 'json', data: undefined, json: big })).data.length, 70 * 1024);
  });

  test('a text or binary input travels in data, as before', () => {
    assert.deepEqual(JSON.parse(line({ content_type: 'text', data: 'hi\n"there"' })), { content_type: 'text', data: 'hi\n"there"' });
  });
});
