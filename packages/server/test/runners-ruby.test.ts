import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CALL_MS } from './support/runner-suite.js';
import { scriptRunnerSuite } from './support/script-runner-suite.js';

/** The Ruby runner harness against real sandboxed runners (docs/compatibility.md §4, templates/README.md). */
describe('ruby runner harness', () => {
  const { hello } = scriptRunnerSuite({
    language: 'ruby',
    owner: 'rb',
    /** src/<name>.rb = code (no Gemfile). */
    sourceFiles: (name, code) => ({
      'algorithmia.conf': JSON.stringify({ username: 'user', algoname: name, language: 'ruby' }),
      [`src/${name}.rb`]: code,
    }),
    nullKind: 'NilClass',
    bytesAs: 'an ASCII-8BIT String',
    load: { what: 'the top-level code (load)', marker: 'load ran', loads: { loads: 1 } },
    raise: {
      what: 'an exception raised by apply',
      trace: [/ArgumentError: boom/, /src\/Hello\.rb:\d+:in `probe'/],
      harnessFrames: /runner\.rb/,
    },
    unwritable: { probe: 'nan', what: 'NaN' },
    badInputs: [{ content_type: 'binary', data: 'not base64!' }],
    stdin: true,
    failingLoad: {
      what: 'top-level code that raises',
      code: ['puts "about to fail"', 'raise IOError, "model file missing"', '', 'def apply(input)', '  input', 'end', ''].join('\n'),
      loadOutput: /about to fail/,
      message: 'model file missing',
      trace: /LoadFails\.rb:2/,
    },
    template: true,
  });

  test('a JSON array arrives as an Array', async () => {
    const list = await hello().call({ content_type: 'json', data: [1, 2.5, 'x', true, null] }, CALL_MS);
    assert.deepEqual(list.response.result, { echo: [1, 2.5, 'x', true, null], kind: 'Array', json: '[1,2.5,"x",true,null]' });
  });
});
