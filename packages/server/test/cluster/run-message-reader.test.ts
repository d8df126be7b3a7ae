/**
 * cluster/dispatch.ts RunMessageReader and pipeRequestOf: how a worker reads the sync calls an
 * API node sends (the CallRequest), and those an API node of the version before sends during a
 * rolling upgrade (the runner's request itself). A warm call's JSON part that holds nothing of
 * one call's own is parsed once and shared by the calls with the same text; one that holds a
 * call's secret, token or event never is.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type PipeRunMessage, pipeRequestOf, type RunMessage, RunMessageReader } from '../../src/cluster/dispatch.js';
import { DomainError } from '../../src/domain/errors.js';
import { encodeFrame } from '../../src/cluster/frames.js';

// Which build of which algorithm: all a call names of what runs (the worker reads the rest from the database).
const target = { algorithmId: 'a1', artifact: 'a1/python311/abc' };

function message(overrides: Partial<RunMessage> = {}): RunMessage {
  return { target, timeoutMs: 300_000, call: { contentType: 'application/json', checkedJson: true }, ...overrides };
}

/** A sync call as an API node of the version before sends it. */
function pipeMessage(overrides: Partial<PipeRunMessage> = {}): PipeRunMessage {
  return {
    target,
    timeoutMs: 300_000,
    request: { content_type: 'json' } as unknown as PipeRunMessage['request'],
    hasJson: true,
    ...overrides,
  };
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

  test('a JSON part with a call key, a token or an event is never kept; a text input, now in the bytes, is', () => {
    const personal: (RunMessage | PipeRunMessage)[] = [
      message({ apiKey: 'simSECRET', callKey: { accountId: 'o1', capabilities: ['call_algorithms'] } }),
      message({ insightsToken: 'tok' }),
      message({ call: { contentType: 'application/json', event: { source: 'kafka', offset: '7' } } }),
      // The version before's format: the same rule, and its text input was in the JSON part.
      pipeMessage({ request: { content_type: 'json', api_key: 'simSECRET' } as unknown as PipeRunMessage['request'] }),
      pipeMessage({ request: { content_type: 'json', insights_token: 'tok' } as unknown as PipeRunMessage['request'] }),
      pipeMessage({ request: { content_type: 'json', event: { source: 'kafka', offset: '7' } } as unknown as PipeRunMessage['request'] }),
      pipeMessage({ request: { content_type: 'text', data: 'hello' } as unknown as PipeRunMessage['request'], hasJson: false }),
      pipeMessage({ callKey: { accountId: 'o1', capabilities: ['call_algorithms'] } }),
    ];
    for (const m of personal) {
      const reader = new RunMessageReader();
      const a = reader.read(encodeFrame(m)).meta;
      const b = reader.read(encodeFrame(m)).meta;
      assert.deepEqual(b, m);
      assert.notEqual(b, a, `parsed again, not shared: ${JSON.stringify(m)}`);
    }
    const reader = new RunMessageReader();
    const text = message({ call: { contentType: 'text/plain' } });
    assert.equal(reader.read(encodeFrame(text, Buffer.from('hello'))).meta, reader.read(encodeFrame(text, Buffer.from('bye'))).meta);
  });

  test('a message cut short is refused, not read past its end', () => {
    const reader = new RunMessageReader();
    const whole = encodeFrame(message(), Buffer.from('1'));
    assert.throws(() => reader.read(whole.subarray(0, 10)), /runs past its end/);
    assert.throws(() => reader.read(whole.subarray(0, 2)), /shorter than its header/);
  });
});

describe('pipeRequestOf: the runner’s request a worker makes of a sync call', () => {
  const read = (m: RunMessage | PipeRunMessage, bytes: Buffer) => {
    const { meta, bytes: input } = new RunMessageReader().read(encodeFrame(m, bytes));
    return pipeRequestOf(meta, input);
  };

  test('from the CallRequest: the input by its content type, with what the API node made for the call', () => {
    const json = read(
      message({
        apiKey: 'simK',
        insightsToken: 'tok',
        call: { contentType: 'application/json', checkedJson: true, event: { source: 'sqs' } },
      }),
      Buffer.from('{"a":\n1}'),
    );
    assert.deepEqual(
      { ...json, json: json.json?.toString() },
      { content_type: 'json', data: undefined, json: '{"a": 1}', api_key: 'simK', event: { source: 'sqs' }, insights_token: 'tok' },
    );
    assert.deepEqual(read(message({ call: { contentType: 'text/plain; charset=utf-8' } }), Buffer.from('héllo')), {
      content_type: 'text',
      data: 'héllo',
    });
    assert.deepEqual(read(message({ call: { contentType: 'application/octet-stream' } }), Buffer.from([0, 255])), {
      content_type: 'binary',
      data: 'AP8=',
    });
    // No content type is JSON, and an empty input is JSON null, as on the API node.
    assert.equal(read(message({ call: { contentType: undefined } }), Buffer.alloc(0)).json?.toString(), 'null');
  });

  test('an input the API node would refuse is refused with the same error, not run', () => {
    assert.throws(
      () => read(message({ call: { contentType: 'image/png' } }), Buffer.from('x')),
      (err: unknown) => err instanceof DomainError && err.kind === 'unsupported_media_type',
    );
    assert.throws(
      () => read(message({ call: { contentType: 'application/json' } }), Buffer.from('{nope')),
      (err: unknown) => err instanceof DomainError && err.kind === 'invalid',
    );
  });

  test('a call in flight from an API node of the version before runs with the request it sent', () => {
    const old = pipeMessage({
      request: {
        content_type: 'json',
        api_key: 'simK',
        event: { source: 'kafka' },
        insights_token: 'tok',
      } as unknown as PipeRunMessage['request'],
    });
    const json = read(old, Buffer.from('[1,2]'));
    assert.deepEqual(
      { ...json, json: json.json?.toString() },
      { content_type: 'json', data: undefined, json: '[1,2]', api_key: 'simK', event: { source: 'kafka' }, insights_token: 'tok' },
    );
    const text = pipeMessage({ request: { content_type: 'text', data: 'hello' } as unknown as PipeRunMessage['request'], hasJson: false });
    assert.deepEqual(read(text, Buffer.alloc(0)), { content_type: 'text', data: 'hello' });
  });
});
