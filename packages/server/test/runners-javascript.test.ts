import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CALL_MS } from './support/runner-suite.js';
import { scriptRunnerSuite } from './support/script-runner-suite.js';

/** The JavaScript runner harness against real sandboxed runners (docs/compatibility.md §4, templates/README.md). */
describe('javascript runner harness', () => {
  const { hello } = scriptRunnerSuite({
    language: 'javascript',
    owner: 'js',
    /** package.json with main src/<name>.js = code. */
    sourceFiles: (name, code) => ({
      'algorithmia.conf': JSON.stringify({ username: 'user', algoname: name, language: 'javascript' }),
      'package.json': JSON.stringify({ name: name.toLowerCase(), version: '1.0.0', main: `src/${name}.js` }),
      [`src/${name}.js`]: code,
    }),
    nullKind: 'object',
    bytesAs: 'a Buffer',
    load: { what: 'the top-level code (load)', marker: 'load ran', loads: { loads: 1 } },
    raise: { what: 'an error thrown by apply', trace: [/RangeError: boom/, /Hello\.js:\d+/], harnessFrames: /runner\.cjs|node:internal/ },
    badInputs: [{ content_type: 'text', data: 5 }],
    stdin: true,
    failingLoad: {
      what: 'top-level code that throws',
      code: [
        "console.log('about to fail');",
        "throw new Error('model file missing');",
        'exports.apply = (input, cb) => cb(null, input);',
        '',
      ].join('\n'),
      loadOutput: /about to fail/,
      message: 'model file missing',
      trace: /LoadFails\.js:2/,
    },
    template: true,
  });

  test('cb(err) is an AlgorithmError', async () => {
    const viaCb = await hello().call({ content_type: 'json', data: { probe: 'callback_error', arg: 'bad luck' } }, CALL_MS);
    assert.equal(viaCb.response.error?.error_type, 'AlgorithmError');
    assert.equal(viaCb.response.error?.message, 'bad luck');
  });

  test('a callback called later answers the call; a second call of it is ignored', async () => {
    const later = await hello().call({ content_type: 'json', data: { probe: 'later', arg: [1, 2] } }, CALL_MS);
    assert.deepEqual(later.response, { result: [1, 2], metadata: { content_type: 'json' } });
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal((await hello().call({ content_type: 'text', data: 'next' }, CALL_MS)).response.result, 'hello next');
  });
});
