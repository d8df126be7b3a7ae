import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { promisify } from 'node:util';
import { CALL_MS, checkBackToBack, contentTypeOf, printsWord, runnerSuite } from '../support/runner-suite.js';
import type { CallOutcome } from '../../src/runtime/runner/runner-outcome.js';
import { buildFixture } from '../support/runners.js';

const execFileAsync = promisify(execFile);

/** A package named differently from its lib, whose apply returns Result<Value, Box<dyn Error>>, with its own release profile. */
const OTHER_NAMES = {
  'Cargo.toml': `[package]
name = "other-names"
version = "0.2.0"
edition = "2021"

[lib]
name = "whatever"
path = "src/lib.rs"

[dependencies]
serde_json = "1"

[profile.release]
opt-level = 2
debug-assertions = true
`,
  'src/lib.rs': `use std::io::Read;

use serde_json::{json, Value};

pub fn apply(input: Value) -> Result<Value, Box<dyn std::error::Error>> {
    if input == json!("stdin") {
        let mut text = String::new();
        std::io::stdin().read_to_string(&mut text)?;
        return Ok(json!({ "stdin": text }));
    }
    if input.is_null() {
        return Err("null is not welcome".into());
    }
    if let Some(word) = input.as_str().and_then(|s| s.strip_prefix("print ")) {
        // No newline: the word waits in stdout's LineWriter until the harness flushes it.
        print!("{word}");
        eprint!("!");
        return Ok(json!(word));
    }
    if input == json!("close") {
        extern "C" {
            fn close(fd: i32) -> i32;
        }
        // The algorithm closes its own stdout and stderr: the harness's marks still get out.
        unsafe {
            close(1);
            close(2);
        }
        return Ok(json!("closed"));
    }
    let n: i64 = serde_json::from_value(input)?;
    // debug-assertions = true in the package's release profile: the harness build keeps it.
    Ok(json!({ "double": n * 2, "debug_assertions": cfg!(debug_assertions) }))
}
`,
  'algorithmia.conf': JSON.stringify({ username: 'user', algoname: 'OtherNames', language: 'rust' }),
};

const NO_SERDE = {
  'Cargo.toml': `[package]
name = "no-serde"
version = "0.1.0"
edition = "2021"

[lib]
name = "algorithm"
path = "src/lib.rs"
`,
  'src/lib.rs': 'pub fn apply(input: String) -> String {\n    input\n}\n',
  'algorithmia.conf': JSON.stringify({ username: 'user', algoname: 'NoSerde', language: 'rust' }),
};

/** The Rust runner harness against real sandboxed runners (docs/compatibility.md §4, templates/README.md "Rust"). */
describe('rust runner harness', () => {
  const { fx, expected, hello, helloBuild, adHoc, start, srv } = runnerSuite('rust');

  test('every expected output of the fixture comes back with its content type', async () => {
    for (const e of expected) {
      const { response } = await hello().call({ content_type: e.content_type, data: e.input }, CALL_MS);
      assert.deepEqual(response, { result: e.result, metadata: { content_type: contentTypeOf(e.result) } });
    }
    const nullIn = await hello().call({ content_type: 'json', data: null }, CALL_MS);
    assert.deepEqual(nullIn.response, { result: { echo: null, kind: 'null', json: 'null' }, metadata: { content_type: 'json' } });
    const jsonString = await hello().call({ content_type: 'json', data: 'Zoë' }, CALL_MS);
    assert.deepEqual(jsonString.response, { result: 'hello Zoë', metadata: { content_type: 'text' } });
  });

  test('state made once (OnceLock) is made once per runner; a print in apply is that call’s stdout (cold start measured)', async () => {
    const t0 = Date.now();
    const fresh = await start(fx, helloBuild());
    console.log(`# rust: cold start of a runner (sandbox + binary) ${Date.now() - t0} ms`);
    assert.equal(fresh.loadOutput, '');
    const first = await fresh.call({ content_type: 'text', data: 'one' }, CALL_MS);
    assert.equal(first.response.result, 'hello one');
    assert.equal(first.stdout, 'hello: loaded once\nhello: call 1\n');
    for (let i = 2; i <= 4; i++) {
      const next = await fresh.call({ content_type: 'json', data: [i] }, CALL_MS);
      assert.equal(next.response.metadata?.content_type, 'json');
      assert.equal(next.stdout, `hello: call ${i}\n`);
    }
    const w0 = process.hrtime.bigint();
    for (let i = 0; i < 20; i++) await fresh.call({ content_type: 'text', data: 'warm' }, CALL_MS);
    console.log(`# rust: warm call ${Number(process.hrtime.bigint() - w0) / 20 / 1e6} ms on average`);
    await fresh.stop();
  });

  test('calls written back to back (output marks) each keep their own result and prints', async () => {
    // The fixture counts its calls: each call's print names its own number, one more than the call before.
    let last: number | undefined;
    const calls = Array.from({ length: 8 }, (_, i) => ({
      request: { content_type: 'text' as const, data: `pair${i}` },
      check: ({ response, stdout }: { response: { result?: unknown }; stdout: string }) => {
        assert.equal(response.result, `hello pair${i}`);
        const n = Number(/^hello: call (\d+)\n$/.exec(stdout)?.[1]);
        assert.ok(Number.isInteger(n), stdout);
        if (last !== undefined) assert.equal(n, last + 1);
        last = n;
      },
    }));
    await checkBackToBack(hello(), calls);
  });

  test('an artifact whose harness predates the output marks (no protocol file) runs one call at a time, as built; a planted link or FIFO counts as none', async () => {
    const { tree } = await srv().server.services.builder.readArtifact(helloBuild().artifact!);
    const protocol = path.join(tree, 'target/release/algorithm.protocol');
    assert.equal(fs.readFileSync(protocol, 'utf8'), 'output-marks\n');
    fs.renameSync(protocol, `${protocol}.away`);
    try {
      const old = await start(fx, helloBuild());
      assert.equal(old.pipelines, false);
      assert.equal((await old.call({ content_type: 'text', data: 'then' }, CALL_MS)).response.result, 'hello then');
      await assert.rejects(
        Promise.all([old.call({ content_type: 'text', data: 'a' }, CALL_MS), old.call({ content_type: 'text', data: 'b' }, CALL_MS)]),
        /runner is busy/,
      );
      await old.stop();
      // The file is read back from a build (untrusted): a link to a file that says output-marks,
      // or a FIFO, is not followed or waited on; the runner starts without marks.
      for (const plant of ['symlink', 'fifo'] as const) {
        if (plant === 'symlink') fs.symlinkSync(`${protocol}.away`, protocol);
        else await execFileAsync('mkfifo', [protocol]);
        try {
          const planted = await start(fx, helloBuild());
          assert.equal(planted.pipelines, false, plant);
          assert.equal((await planted.call({ content_type: 'text', data: plant }, CALL_MS)).response.result, `hello ${plant}`);
          await planted.stop();
        } finally {
          fs.rmSync(protocol);
        }
      }
    } finally {
      fs.renameSync(`${protocol}.away`, protocol);
    }
  });

  test('Err(message) is an AlgorithmError with that message; the runner keeps serving', async () => {
    const { response } = await hello().call({ content_type: 'text', data: '' }, CALL_MS);
    assert.deepEqual(response.error, { message: 'name must not be empty', stacktrace: '', stack_trace: '', error_type: 'AlgorithmError' });
    const next = await hello().call({ content_type: 'text', data: 'again' }, CALL_MS);
    assert.equal(next.response.result, 'hello again');
  });

  test('a panic is an AlgorithmError with its message and location; the runner keeps serving', async () => {
    const { response, stdout } = await hello().call({ content_type: 'json', data: { panic: 'boom at call' } }, CALL_MS);
    assert.equal(response.error?.error_type, 'AlgorithmError');
    assert.equal(response.error?.message, 'boom at call');
    assert.match(response.error?.stacktrace ?? '', /^panicked at src\/lib\.rs:\d+:\d+\n(.*\n)*.*algorithm::apply/);
    // The panic is the call's error, not printed output.
    assert.doesNotMatch(stdout, /panicked/);
    const next = await hello().call({ content_type: 'text', data: 'after' }, CALL_MS);
    assert.equal(next.response.result, 'hello after');
  });

  test('binary input is an InputError (apply takes a serde_json::Value)', async () => {
    const { response } = await hello().call({ content_type: 'binary', data: Buffer.from([1, 2]).toString('base64') }, CALL_MS);
    assert.equal(response.error?.error_type, 'InputError');
    assert.match(response.error?.message ?? '', /binary input/);
  });

  test('any package and lib name, Result<Value, Box<dyn Error>>, the package’s release profile; prints without a newline and closed fds 1 and 2 back to back', async () => {
    const f = await adHoc('OtherNames', OTHER_NAMES);
    const { build } = await buildFixture(srv(), f, 'rs_other');
    const runner = await start(f, build);
    const ok = await runner.call({ content_type: 'json', data: 21 }, CALL_MS);
    assert.deepEqual(ok.response, { result: { double: 42, debug_assertions: true }, metadata: { content_type: 'json' } });
    const err = await runner.call({ content_type: 'json', data: null }, CALL_MS);
    assert.equal(err.response.error?.message, 'null is not welcome');
    // Reading stdin gets nothing (requests are the harness's), and the next request still arrives.
    const stdin = await runner.call({ content_type: 'text', data: 'stdin' }, CALL_MS);
    assert.deepEqual(stdin.response, { result: { stdin: '' }, metadata: { content_type: 'json' } });
    const notNumber = await runner.call({ content_type: 'text', data: 'x' }, CALL_MS);
    assert.equal(notNumber.response.error?.error_type, 'AlgorithmError');
    assert.match(notNumber.response.error?.message ?? '', /invalid type: string/);
    // A print without a newline stays in stdout's LineWriter until the harness flushes it: before
    // its mark, so it is that call's output and not the next one's.
    await checkBackToBack(runner, ['a', 'bb', 'ccc', 'dddd'].map(printsWord));
    // After the algorithm closed its fds 1 and 2 the marks still come (the harness's own copies):
    // calls written back to back are still answered, with no output.
    const silent = (data: string, result: unknown) => ({
      request: { content_type: 'json' as const, data },
      check: ({ response, stdout }: CallOutcome) => {
        assert.equal(response.result, result);
        assert.equal(stdout, '');
      },
    });
    await checkBackToBack(runner, [silent('close', 'closed'), silent('print e', 'e'), silent('print f', 'f'), silent('print g', 'g')]);
  });

  test('a package without serde_json fails its build with a message saying what to add', async () => {
    const f = await adHoc('NoSerde', NO_SERDE);
    await assert.rejects(buildFixture(srv(), f, 'rs_noserde'), /no-serde does not depend on serde_json[^\n]*serde_json = "1"/);
  });
});
