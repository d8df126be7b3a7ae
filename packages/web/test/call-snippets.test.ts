/**
 * Issue 36, item 14: the Overview's "How to call it" examples with a hostile publisher's sample
 * input. mallory publishes a sample that tries to break out of each language's quoting; each
 * example is run as a visitor would run it, by the real bash, python3 and node, with recording
 * stand-ins for the `curl` and `algo` commands and the Algorithmia client packages (they are not
 * installed here, and only what they are handed matters). Every run must hand over exactly the
 * sample (its text, or the value of its JSON) and run nothing of mallory's.
 */
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import vm from 'node:vm';
import { callSnippets, javascriptString, pythonString, shellQuote } from '../src/call-snippets.js';

const exec = promisify(execFile);
const SERVER = 'https://algo.example.com';
const ALGORITHM = 'mallory/Greeter/1.0.0';

/** Each would run `touch PWNED` (or write it) in some language if pasted into code unquoted. */
const HOSTILE = [
  '{"a": 1, "b": [true, null, "x"]}',
  `1); __import__("os").system("touch PWNED") #`,
  `{"k": 1}); __import__("os").system("touch PWNED"); print({"k": 1}`,
  `"x").then(() => require("fs").writeFileSync("PWNED", "")); ("`,
  `{"s": "a\\"b\\\\c'd\\n"}`,
  `"""); __import__("os").system("touch PWNED"); ("""`,
  `'''`,
  `'; touch PWNED; echo '`,
  `$(touch PWNED)`,
  '`touch PWNED`',
  '${IFS}touch${IFS}PWNED',
  '!!',
  '["line one\u2028", "para\u2029"]',
  'text with\nnewlines\r\nand\ttabs\\',
  '"ends with a backslash \\\\"',
  '@PWNED-SOURCE',
  '-5',
  '"😀 \u00e9 \u007f \u0085"',
  '{"nested": "\\u2028 and </script>"}',
];

let dir: string;

before(async () => {
  dir = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'algohost-snippets-'));
  // Recording stand-ins: each writes what it was handed to RECORD as JSON.
  const bin = path.join(dir, 'bin');
  fs.mkdirSync(bin);
  const argvRecorder = `#!/usr/bin/env node\nrequire('fs').writeFileSync(process.env.RECORD, JSON.stringify(process.argv.slice(2)), { flag: 'a' });\nrequire('fs').appendFileSync(process.env.RECORD, '\\n');\n`;
  for (const name of ['curl', 'algo']) fs.writeFileSync(path.join(bin, name), argvRecorder, { mode: 0o755 });
  const py = path.join(dir, 'py');
  fs.mkdirSync(py);
  fs.writeFileSync(
    path.join(py, 'Algorithmia.py'),
    `import json, os
class _Response:
    result = None
class _Algo:
    def __init__(self, name): self.name = name
    def pipe(self, value):
        with open(os.environ["RECORD"], "w") as f:
            json.dump({"algorithm": self.name, "value": value}, f)
        return _Response()
class _Client:
    def __init__(self, key, server): self.server = server
    def algo(self, name): return _Algo(name)
def client(key, server): return _Client(key, server)
`,
  );
  const js = path.join(dir, 'js', 'node_modules', 'algorithmia');
  fs.mkdirSync(js, { recursive: true });
  fs.writeFileSync(
    path.join(js, 'index.js'),
    `module.exports = { client: () => ({ algo: (name) => ({ pipe: (value) => {
  require('fs').writeFileSync(process.env.RECORD, JSON.stringify({ algorithm: name, value }));
  return Promise.resolve({ get: () => null });
} }) }) };
`,
  );
});
after(() => fs.promises.rm(dir, { recursive: true, force: true }));

/** Runs `program` (a file holding the example) in a fresh working directory and returns what was recorded. */
async function runExample(cmd: string, args: (file: string) => string[], example: string, env: Record<string, string> = {}) {
  const cwd = fs.mkdtempSync(path.join(dir, 'run-'));
  const file = path.join(cwd, 'example');
  fs.writeFileSync(file, example);
  const record = path.join(cwd, 'record');
  await exec(cmd, args(file), { cwd, env: { PATH: `${path.join(dir, 'bin')}:${process.env.PATH}`, RECORD: record, ...env } });
  assert.deepEqual(fs.readdirSync(cwd).sort(), ['example', 'record'], `nothing else was created (no PWNED) running:\n${example}`);
  return fs.readFileSync(record, 'utf8');
}

/** What the call must carry: the JSON value when the sample is JSON, else its text. */
function expected(sample: string): { value: unknown; text: boolean } {
  try {
    return { value: JSON.parse(sample), text: false };
  } catch {
    return { value: sample, text: true };
  }
}

describe('the "How to call it" examples with a hostile sample input', () => {
  for (const sample of HOSTILE) {
    const label = JSON.stringify(sample);
    const snippets = callSnippets(SERVER, ALGORITHM, sample);
    const want = expected(sample.trim());

    test(`each literal reads back exactly: ${label}`, async () => {
      const shell = await exec('bash', ['-c', `printf %s ${shellQuote(sample)}`]);
      assert.equal(shell.stdout, sample);
      const py = execFileSync(
        'python3',
        ['-c', 'import ast, sys; sys.stdout.buffer.write(ast.literal_eval(sys.stdin.read()).encode("utf-8"))'],
        {
          input: pythonString(sample),
          encoding: 'utf8',
        },
      );
      assert.equal(py, sample);
      assert.equal(new vm.Script(javascriptString(sample)).runInNewContext({}), sample);
    });

    test(`curl (bash): ${label}`, async () => {
      const argv = JSON.parse(await runExample('bash', (f) => [f], snippets.curl)) as string[];
      assert.equal(argv[argv.indexOf('--data-raw') + 1], sample.trim());
      assert.ok(!argv.includes('-d'), 'never -d, which reads a file for @name');
      assert.equal(argv[2], `${SERVER}/v1/algo/${ALGORITHM}`);
      assert.ok(argv.includes(`Content-Type: ${want.text ? 'text/plain' : 'application/json'}`));
    });

    test(`CLI (bash): ${label}`, async () => {
      const lines = (await runExample('bash', (f) => [f], snippets.CLI)).trim().split('\n');
      const run = JSON.parse(lines[1]!) as string[];
      assert.deepEqual(run, ['run', ALGORITHM, want.text ? '-t' : '-j', sample.trim()]);
    });

    test(`Python (python3): ${label}`, async () => {
      const got = JSON.parse(await runExample('python3', (f) => [f], snippets.Python, { PYTHONPATH: path.join(dir, 'py') }));
      assert.deepEqual(got, { algorithm: ALGORITHM, value: want.value });
      assert.equal(snippets.Python.includes('.pipe(json.loads('), !want.text, 'JSON through the JSON parser, text as a str');
    });

    test(`JavaScript (node): ${label}`, async () => {
      const got = JSON.parse(
        await runExample('node', (f) => [f], snippets.JavaScript, { NODE_PATH: path.join(dir, 'js', 'node_modules') }),
      );
      assert.deepEqual(got, { algorithm: ALGORITHM, value: want.value });
      assert.equal(snippets.JavaScript.includes('.pipe(JSON.parse('), !want.text, 'JSON through the JSON parser, text as a string');
    });
  }

  test('without a sample input the examples send "world" as JSON', () => {
    const s = callSnippets(SERVER, ALGORITHM, undefined);
    assert.ok(s.Python.includes(`.pipe(json.loads('"world"'))`), s.Python);
    assert.match(s.curl, /--data-raw '"world"'$/);
  });
});
