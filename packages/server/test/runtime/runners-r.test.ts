import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { answersWith, CALL_MS, checkBackToBack, printsWord } from '../support/runner-suite.js';
import { scriptRunnerSuite } from '../support/script-runner-suite.js';

/** The R runner harness against real sandboxed runners (docs/compatibility.md §4, templates/README.md). */
describe('r runner harness', () => {
  const { hello, startAdHoc } = scriptRunnerSuite({
    language: 'r',
    owner: 'r',
    /** src/<name>.r = code (no packages.txt). */
    sourceFiles: (name, code) => ({
      'algorithmia.conf': JSON.stringify({ username: 'user', algoname: name, language: 'r' }),
      [`src/${name}.r`]: code,
    }),
    bytesAs: 'a raw vector',
    load: { what: 'the top-level code (load)', marker: 'load ran', loads: { loads: 1 } },
    raise: {
      what: 'stop() in apply',
      trace: [/^Error in probe\(.*\): boom/, /stop\(arg\) at src\/Hello\.r#\d+/, /\n1: apply\(input\)$/],
      harnessFrames: /withCallingHandlers|tryCatch/,
    },
    unwritable: { probe: 'function', what: 'an environment jsonlite cannot write' },
    badInputs: [
      { content_type: 'binary', data: 'not base64!' },
      { content_type: 'text', data: 5 },
    ],
    stdin: false,
    failingLoad: {
      what: 'top-level code that fails',
      code: ['cat("about to fail\\n")', 'stop("model file missing")', '', 'apply <- function(input) input', ''].join('\n'),
      loadOutput: /about to fail/,
      message: 'model file missing',
    },
    template: true,
  });

  test('arrays arrive as lists, objects as named lists, null as NULL (written back as null)', async () => {
    // Arrays arrive as lists (simplifyVector = FALSE), objects as named lists, null as NULL; the
    // harness writes NULL back as null (the fixture's own toJSON, with jsonlite's defaults, as {}).
    const nested = await hello().call({ content_type: 'json', data: { a: [1, 2.5, 'x', true, null], b: {} } }, CALL_MS);
    assert.deepEqual(nested.response, {
      result: { echo: { a: [1, 2.5, 'x', true, null], b: {} }, json: '{"a":[1,2.5,"x",true,{}],"b":{}}' },
      metadata: { content_type: 'json' },
    });
  });

  test('binary long enough that jsonlite would break its base64 into lines comes back whole', async () => {
    const big = Buffer.alloc(100_000, 7);
    big[0] = 1;
    const long = await hello().call({ content_type: 'binary', data: big.toString('base64') }, CALL_MS);
    assert.equal(long.response.metadata?.content_type, 'binary');
    assert.deepEqual(Buffer.from(long.response.result as string, 'base64'), Buffer.from(big).reverse());
  });

  test('output marks: prints left in C stdio, sink() of stdout and messages, and stdin read while the next request waits, back to back', async () => {
    const code = [
      'apply <- function(input) {',
      '  if (startsWith(input, "print ")) {',
      '    # No newline, and fd 1 is a socket: the word waits in C stdio until the harness flushes it.',
      '    word <- substring(input, 7L)',
      '    cat(word)',
      '    message("!", appendLF = FALSE)',
      '    return(word)',
      '  }',
      '  if (input == "env") return(if (nzchar(Sys.getenv("ALGOHOST_OUTPUT_MARK"))) "mark" else "no mark")',
      '  if (input == "stdin") {',
      '    # What R and a subprocess read from stdin: nothing (the requests are not there).',
      '    read <- readLines(file("stdin"), warn = FALSE)',
      '    sub <- system("cat", intern = TRUE)',
      '    return(paste(length(read), length(sub)))',
      '  }',
      '  if (input == "sink") {',
      '    sink(file(tempfile(), "w"))',
      '    sink(file(tempfile(), "w"), type = "message")',
      '    return("sunk")',
      '  }',
      '  cat(input, "\\n", sep = "")',
      '  input',
      '}',
      '',
    ].join('\n');
    const runner = await startAdHoc('r_marks', 'Marks', { 'src/Marks.r': code });
    assert.equal(runner.pipelines, true);
    await checkBackToBack(runner, ['a', 'bb', 'ccc', 'dddd'].map(printsWord));
    // The mark is out of the environment before user code runs: printing it would cut the output short.
    assert.equal((await runner.call({ content_type: 'text', data: 'env' }, CALL_MS)).response.result, 'no mark');
    // The request behind is already written when the algorithm reads stdin: it still reaches the harness.
    await checkBackToBack(runner, [
      answersWith('stdin', '0 0', ''),
      answersWith('x', 'x', 'x\n'),
      answersWith('stdin', '0 0', ''),
      answersWith('y', 'y', 'y\n'),
    ]);
    // After sink() of stdout and of messages the marks still come (connections 1 and 2 themselves).
    await checkBackToBack(runner, [
      answersWith('sink', 'sunk', ''),
      answersWith('z', 'z', ''),
      answersWith('print e', 'e', ''),
      answersWith('w', 'w', ''),
    ]);
  });
});
