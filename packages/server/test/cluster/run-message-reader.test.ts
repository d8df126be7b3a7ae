/**
 * cluster/dispatch.ts RunMessageReader: how a worker reads the sync calls an API node sends. A
 * warm call's JSON part that holds nothing of one call's own is parsed once and shared by the
 * calls with the same text; one that holds a call's secret, event or text input never is.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type RunMessage, RunMessageReader } from '../../src/cluster/dispatch.js';
import { encodeFrame } from '../../src/cluster/frames.js';

// Which build of which algorithm: all a call names of what runs (the worker reads the rest from the database).
const target = { algorithmId: 'a1', artifact: 'a1/python311/abc' };

function message(overrides: Partial<RunMessage> = {}): RunMessage {
  return { target, timeoutMs: 300_000, request: { content_type: 'json' }, hasJson: true, ...overrides } as RunMessage;
}

describe('RunMessageReader', () => {
  test('reads the JSON part and hands the input bytes back intact', () => {
    const reader = new RunMessageReader();
    const input = Buffer.from('{"x":[1,2,3]}');
    const { meta, bytes } = reader.read(encodeFrame(message(), input));
    assert.deepEqual(meta, message());
    assert.equal(bytes.toString(), '{"x":[1,2,3]}');
    // The next call's bytes are its own, though its JSON part is the same text.
    const second = reader.read(encodeFrame(message(), Buffer.from('"other"')));
    assert.equal(second.bytes.toString(), '"other"');
    assert.deepEqual(second.meta, message());
  });

  test('a JSON part with nothing of one call in it is parsed once and shared by the calls with the same text', () => {
    const reader = new RunMessageReader();
    const first = reader.read(encodeFrame(message(), Buffer.from('1'))).meta;
    const second = reader.read(encodeFrame(message(), Buffer.from('2'))).meta;
    assert.equal(second, first, 'the same parsed object');
    // Another target or timeout is another text: read as itself, not as the kept one.
    const other = reader.read(encodeFrame(message({ timeoutMs: 5000 }), Buffer.from('3'))).meta;
    assert.equal(other.timeoutMs, 5000);
    assert.notEqual(other, first);
  });

  test('a JSON part with a call key, a token, an event or a text input is never kept', () => {
    const personal: RunMessage[] = [
      message({ request: { content_type: 'json', api_key: 'simSECRET' } as unknown as RunMessage['request'] }),
      message({ request: { content_type: 'json', insights_token: 'tok' } as unknown as RunMessage['request'] }),
      message({ request: { content_type: 'json', event: { source: 'kafka', offset: '7' } } as unknown as RunMessage['request'] }),
      message({ request: { content_type: 'text', data: 'hello' } as unknown as RunMessage['request'], hasJson: false }),
      message({ callKey: { accountId: 'o1', capabilities: ['call_algorithms'] } }),
    ];
    for (const m of personal) {
      const reader = new RunMessageReader();
      const a = reader.read(encodeFrame(m)).meta;
      const b = reader.read(encodeFrame(m)).meta;
      assert.deepEqual(b, m);
      assert.notEqual(b, a, `parsed again, not shared: ${JSON.stringify(m.request)}`);
    }
  });

  test('a message cut short is refused, not read past its end', () => {
    const reader = new RunMessageReader();
    const whole = encodeFrame(message(), Buffer.from('1'));
    assert.throws(() => reader.read(whole.subarray(0, 10)), /runs past its end/);
    assert.throws(() => reader.read(whole.subarray(0, 2)), /shorter than its header/);
  });
});
