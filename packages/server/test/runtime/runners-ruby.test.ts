import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { answersWith, CALL_MS, checkBackToBack, checkResponseFifoKept, printsWord } from '../support/runner-suite.js';
import { scriptRunnerSuite } from '../support/script-runner-suite.js';

/** The Ruby runner harness against real sandboxed runners (docs/compatibility.md §4, templates/README.md). */
describe('ruby runner harness', () => {
  const { hello, startAdHoc } = scriptRunnerSuite({
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

  test("output marks: prints left in Ruby's buffers, a $stdout of the algorithm's own and fds 1 and 2 reopened elsewhere, back to back", async () => {
    const code = [
      'def apply(input)',
      '  case input',
      '  when /\\Aprint (.*)/',
      '    # No newline, and STDOUT is buffered on a socket: it waits in Ruby until the harness flushes it.',
      '    print $1',
      '    $stderr.print "!"',
      '    $1',
      '  when "env" then ENV.key?("ALGOHOST_OUTPUT_MARK") ? "mark" : "no mark"',
      '  when "capture"',
      '    require "stringio"',
      '    $stdout = StringIO.new',
      '    "captured"',
      '  when "reopen"',
      '    STDOUT.reopen(File::NULL, "w")',
      '    STDERR.reopen(File::NULL, "w")',
      '    "reopened"',
      '  else',
      '    puts input',
      '    input',
      '  end',
      'end',
      '',
    ].join('\n');
    const runner = await startAdHoc('rb_marks', 'Marks', { 'src/Marks.rb': code });
    assert.equal(runner.pipelines, true);
    await checkBackToBack(runner, ['a', 'bb', 'ccc', 'dddd'].map(printsWord));
    // The mark is out of the environment before user code runs: printing it would cut the output short.
    assert.equal((await runner.call({ content_type: 'text', data: 'env' }, CALL_MS)).response.result, 'no mark');
    // $stdout replaced by a StringIO: puts and print go there; $stderr still comes, each call its own.
    await checkBackToBack(runner, [
      answersWith('hi', 'hi', 'hi\n'),
      answersWith('capture', 'captured', ''),
      answersWith('x', 'x', ''),
      answersWith('print e', 'e', '!'),
    ]);
    // After fds 1 and 2 are reopened on /dev/null the marks still come (the harness's own copies).
    await checkBackToBack(runner, [
      answersWith('reopen', 'reopened', ''),
      answersWith('y', 'y', ''),
      answersWith('print f', 'f', ''),
      answersWith('z', 'z', ''),
    ]);
  });

  test('the response FIFO stays open between calls, and an algorithm closing it still gets every answer', async () => {
    const code = [
      'def fifo_fds',
      '  fifo = File.readlink("/proc/self/fd/3")',
      '  Dir.children("/proc/self/fd").map(&:to_i).select do |fd|',
      '    fd != 3 && (File.readlink("/proc/self/fd/#{fd}") rescue nil) == fifo',
      '  end',
      'end',
      '',
      'def apply(input)',
      '  return fifo_fds unless input == "close"',
      '  fifo_fds.each { |fd| IO.for_fd(fd, autoclose: false).close }',
      '  "closed"',
      'end',
      '',
    ].join('\n');
    const runner = await startAdHoc('rb_fifo', 'KeepsFifo', { 'src/KeepsFifo.rb': code });
    await checkResponseFifoKept(runner);
  });
});
