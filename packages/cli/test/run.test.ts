/**
 * `algo run` on its success paths, against a real algohost node with the Python fixture built
 * as alice/Hello: every input flag, binary in and out, --debug, --timeout, an algorithm error and
 * a call without a version, driven as a user would.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createAndBuild } from '../../server/test/support/algorithms.js';
import { createUser, type TestUser } from '../../server/test/support/fixtures.js';
import { FIXTURES_DIR } from '../../server/test/support/fixtures-algorithms.js';
import { client, type Client } from '../../server/test/support/http.js';
import { makeTempDir, startTestServer, type TestServer } from '../../server/test/support/server.js';
import { algo, assertOk, assertOneLineFailure, makeHome } from './support/run-cli.js';

describe('algo run against a built algorithm', () => {
  let srv: TestServer;
  let api: Client;
  let alice: TestUser;
  let home: string;
  let work: string;
  let sha: string;
  let hello: string;
  const run = (args: string[], input?: string) => algo(args, { home, input });

  before(async () => {
    srv = await startTestServer();
    api = client(srv.url);
    alice = await createUser(api, srv.adminKey, 'alice');
    home = await makeHome();
    work = await makeTempDir('algo-cli-run-');
    sha = await createAndBuild(srv.url, api, alice, 'alice', 'Hello', path.join(FIXTURES_DIR, 'python', 'hello'), {
      environment: 'python311',
    });
    hello = `alice/Hello/${sha}`;
    assertOk(await run(['auth', '--server', srv.url, '--key', alice.key, '--username', 'alice']), 'auth');
  });
  after(async () => {
    await srv.stop();
    await fs.promises.rm(home, { recursive: true, force: true });
    await fs.promises.rm(work, { recursive: true, force: true });
  });

  test('-d text is auto-detected and the text result is printed', async () => {
    const r = await run(['run', hello, '-d', 'world']);
    assertOk(r, 'run -d world');
    assert.equal(r.stdout, 'hello world\n');
    assert.equal(r.stderr, '');
  });

  test('-d JSON is auto-detected; -j prints the JSON result', async () => {
    const expected = { echo: { a: 1 }, kind: 'dict', json: '{"a": 1}' };
    for (const flag of ['-j', '-d']) {
      const r = await run(['run', hello, flag, '{"a": 1}']);
      assertOk(r, `run ${flag}`);
      assert.deepEqual(JSON.parse(r.stdout), expected);
      assert.ok(r.stdout.endsWith('\n'));
    }
    const num = await run(['run', hello, '-d', '42']);
    assertOk(num, 'run -d 42');
    assert.deepEqual(JSON.parse(num.stdout), { echo: 42, kind: 'int', json: '42' });
  });

  test('-t sends text even when it parses as JSON; -J and -T read files and stdin', async () => {
    const r = await run(['run', hello, '-t', '42']);
    assertOk(r, 'run -t');
    assert.equal(r.stdout, 'hello 42\n');
    const file = path.join(work, 'in.json');
    fs.writeFileSync(file, '{"a": 1}');
    const j = await run(['run', hello, '-J', file]);
    assertOk(j, 'run -J');
    assert.equal(JSON.parse(j.stdout).kind, 'dict');
    const t = await run(['run', hello, '-T', '-'], 'stdin');
    assertOk(t, 'run -T -');
    assert.equal(t.stdout, 'hello stdin\n');
  });

  test('-b and -B send binary; -o writes the binary result to a file', async () => {
    const bytes = Buffer.from([0, 1, 2, 0x80, 250, 255]);
    const inFile = path.join(work, 'in.bin');
    const outFile = path.join(work, 'out.bin');
    fs.writeFileSync(inFile, bytes);
    const r = await run(['run', hello, '-B', inFile, '-o', outFile]);
    assertOk(r, 'run -B -o');
    assert.equal(r.stdout, '');
    assert.deepEqual(fs.readFileSync(outFile), Buffer.from(bytes).reverse());

    const b = await run(['run', hello, '-b', 'abc', '-o', outFile]);
    assertOk(b, 'run -b -o');
    assert.deepEqual(fs.readFileSync(outFile), Buffer.from('cba'));

    const raw = await run(['run', hello, '-b', 'xyz']);
    assertOk(raw, 'run -b to stdout');
    assert.equal(raw.stdout, 'zyx', 'binary goes to stdout as raw bytes, no newline');

    // -D with bytes that are not UTF-8 is binary too
    const d = await run(['run', hello, '-D', inFile, '-o', outFile]);
    assertOk(d, 'run -D binary');
    assert.deepEqual(fs.readFileSync(outFile), Buffer.from(bytes).reverse());
  });

  test('-o writes a text result as is', async () => {
    const outFile = path.join(work, 'out.txt');
    assertOk(await run(['run', hello, '-d', 'file', '-o', outFile]), 'run -o text');
    assert.equal(fs.readFileSync(outFile, 'utf8'), 'hello file');
  });

  test('--debug shows what the algorithm printed, before the result', async () => {
    const r = await run(['run', hello, '--debug', '-j', '{"probe": "print", "arg": "debug line"}']);
    assertOk(r, 'run --debug');
    assert.equal(r.stdout, 'debug line\nprinted\n');
    const quiet = await run(['run', hello, '-j', '{"probe": "print", "arg": "debug line"}']);
    assertOk(quiet, 'run without --debug');
    assert.equal(quiet.stdout, 'printed\n');
  });

  test('--timeout 5 is accepted and the call answers', async () => {
    const r = await run(['run', hello, '--timeout', '5', '-d', 'soon']);
    assertOk(r, 'run --timeout 5');
    assert.equal(r.stdout, 'hello soon\n');
  });

  test('-m prints the duration on stderr; -s keeps it quiet', async () => {
    const m = await run(['run', hello, '-m', '-d', 'x']);
    assertOk(m, 'run -m');
    assert.equal(m.stdout, 'hello x\n');
    assert.match(m.stderr, /Completed in \d+\.\d{3} seconds/);
    const s = await run(['run', hello, '-m', '-s', '-d', 'x']);
    assertOk(s, 'run -m -s');
    assert.equal(s.stderr, '');
  });

  test('--response-body prints the envelope', async () => {
    const r = await run(['run', hello, '--response-body', '-d', 'x']);
    assertOk(r, 'run --response-body');
    const body = JSON.parse(r.stdout);
    assert.equal(body.result, 'hello x');
    assert.equal(body.metadata.content_type, 'text');
  });

  test('an algorithm error exits non-zero with one line naming the error', async () => {
    const r = await run(['run', hello, '-j', '{"probe": "raise", "arg": "boom"}']);
    const line = assertOneLineFailure(r, /AlgorithmError/);
    assert.match(line, /boom/);
    assert.equal(r.stdout, '');
    const input = await run(['run', hello, '-j', '{"probe": "input_error", "arg": "bad input"}']);
    assertOneLineFailure(input, /InputError.*bad input/);
  });

  test('an algorithm error with --debug still ends with one line on stderr after the stack trace', async () => {
    const r = await run(['run', hello, '--debug', '-j', '{"probe": "raise", "arg": "boom"}']);
    assert.notEqual(r.code, 0);
    const lines = r.stderr.split('\n').filter((l) => l.trim() !== '');
    assert.match(r.stderr, /ValueError: boom/, 'the stack trace');
    assert.match(lines[lines.length - 1]!, /^algo: AlgorithmError: boom$/);
  });

  test('without a version: no published version, one line', async () => {
    assertOneLineFailure(await run(['run', 'alice/Hello', '-d', 'x']), /no published version/);
  });

  test('--async prints a request id', async () => {
    const r = await run(['run', hello, '--async', '-d', 'later']);
    assertOk(r, 'run --async');
    assert.match(r.stdout, /^req-\S+\n$/);
  });

  test('publish, versions, then run and clone by version', async () => {
    const published = await run(['publish', 'alice/Hello', '--type', 'major', '--release-notes', 'First', '--callability', 'public']);
    assertOk(published, 'publish');
    assert.match(published.stdout, new RegExp(`^Published alice/Hello 1\\.0\\.0 \\(commit ${sha.slice(0, 12)}\\)`));
    const again = await run(['publish', 'alice/Hello']);
    assertOneLineFailure(again, /already published as 1\.0\.0/);
    const list = await run(['versions', 'alice/Hello']);
    assertOk(list, 'versions');
    assert.match(list.stdout, /^VERSION\s+GIT HASH\s+CALLABILITY\s+RELEASE NOTES$/m);
    assert.match(list.stdout, new RegExp(`^1\\.0\\.0\\s+${sha}\\s+public\\s+First$`, 'm'));
    const json = await run(['versions', 'alice/Hello', '--json']);
    assertOk(json, 'versions --json');
    assert.deepEqual(
      (JSON.parse(json.stdout) as { version_info: { semantic_version: string } }[]).map((v) => v.version_info.semantic_version),
      ['1.0.0'],
    );
    for (const address of ['alice/Hello', 'alice/Hello/1.0.0', 'alice/Hello/1.*']) {
      const r = await run(['run', address, '-d', 'there']);
      assertOk(r, `run ${address}`);
      assert.equal(r.stdout, 'hello there\n');
    }
    const cloned = await run(['clone', 'alice/Hello/1.0.0', path.join(work, 'v1')]);
    assertOk(cloned, 'clone a version');
    assert.ok(fs.existsSync(path.join(work, 'v1', 'src', 'Hello.py')));
  });
});
