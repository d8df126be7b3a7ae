import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CallOutcome } from '../../src/runtime/runner/runner-outcome.js';
import { answersWith, CALL_MS, checkBackToBack, checkResponseFifoKept } from '../support/runner-suite.js';
import { scriptRunnerSuite } from '../support/script-runner-suite.js';

/** The JavaScript runner harness against real sandboxed runners (docs/compatibility.md §4, templates/README.md). */
describe('javascript runner harness', () => {
  const { hello, startAdHoc } = scriptRunnerSuite({
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

  test('output marks: a print still queued on the socket, an algorithm that silenced process.stdout and one that closed fds 1 and 2, back to back', async () => {
    const code = [
      "const fs = require('node:fs');",
      'exports.apply = (input, cb) => {',
      // 200 kB: more than the socket takes at once, so process.stdout queues it and writes it later.
      "  if (input.startsWith('big ')) {",
      "    process.stdout.write('x'.repeat(200000) + input.slice(4));",
      "    process.stderr.write('!');",
      "    return cb(null, 'big');",
      '  }',
      "  if (input === 'env') return cb(null, process.env.ALGOHOST_OUTPUT_MARK === undefined ? 'no mark' : 'mark');",
      "  if (input === 'mute') {",
      '    process.stdout.write = () => true;',
      '    process.stderr.write = () => true;',
      "    return cb(null, 'muted');",
      '  }',
      "  if (input === 'close') {",
      '    fs.closeSync(1);',
      '    fs.closeSync(2);',
      "    return cb(null, 'closed');",
      '  }',
      '  console.log(input);',
      '  console.error(input);',
      '  cb(null, input);',
      '};',
      '',
    ].join('\n');
    const runner = await startAdHoc('js_marks', 'Marks', {
      'package.json': '{"name":"marks","main":"src/Marks.js"}',
      'src/Marks.js': code,
    });
    assert.equal(runner.pipelines, true);
    const big = (word: string) => ({
      request: { content_type: 'text' as const, data: `big ${word}` },
      check: ({ response, stdout }: CallOutcome) => {
        assert.equal(response.result, 'big');
        // Two streams: the order between them is not kept, the bytes are.
        assert.equal(stdout.replace('!', ''), 'x'.repeat(200000) + word);
        assert.equal(stdout.length, 200001 + word.length);
      },
    });
    await checkBackToBack(runner, ['a', 'bb', 'ccc', 'dddd'].map(big));
    // The mark is out of the environment before user code runs: printing it would cut the output short.
    assert.equal((await runner.call({ content_type: 'text', data: 'env' }, CALL_MS)).response.result, 'no mark');
    const says = (word: string, stdout: string) => answersWith(word, word, stdout);
    // process.stdout.write replaced by one that never calls back: the harness still flushes and marks.
    await checkBackToBack(runner, [says('hi', 'hi\nhi\n'), answersWith('mute', 'muted', ''), says('quiet', ''), says('still', '')]);
    // After fds 1 and 2 are closed the marks still come (the harness's own copies, fds 8 and 9).
    await checkBackToBack(runner, [answersWith('close', 'closed', ''), says('e', ''), says('f', ''), says('g', '')]);
  });

  test('the response FIFO stays open between calls, and an algorithm closing it still gets every answer', async () => {
    const code = [
      "const fs = require('node:fs');",
      'const fifoFds = () => {',
      "  const fifo = fs.readlinkSync('/proc/self/fd/3');",
      "  return fs.readdirSync('/proc/self/fd').map(Number).filter((fd) => {",
      '    try {',
      '      return fd !== 3 && fs.readlinkSync(`/proc/self/fd/${fd}`) === fifo;',
      '    } catch {',
      '      return false;',
      '    }',
      '  });',
      '};',
      'exports.apply = (input, cb) => {',
      "  if (input !== 'close') return cb(null, fifoFds());",
      '  for (const fd of fifoFds()) fs.closeSync(fd);',
      "  cb(null, 'closed');",
      '};',
      '',
    ].join('\n');
    const runner = await startAdHoc('js_fifo', 'KeepsFifo', {
      'package.json': '{"name":"keepsfifo","main":"src/KeepsFifo.js"}',
      'src/KeepsFifo.js': code,
    });
    await checkResponseFifoKept(runner);
  });
});
