import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { RunnerProcess } from '../src/runtime/runner/runner-process.js';
import { environmentId } from './support/algorithms.js';
import { createUser } from './support/fixtures.js';
import { algorithmFixtures, type AlgorithmFixture, expectedOutputs } from './support/fixtures-algorithms.js';
import { client } from './support/http.js';
import { startFixtureRunner } from './support/runners.js';
import { makeTempDir, startTestServer, type TestServer } from './support/server.js';

const CALL_MS = 60_000;
const fx = algorithmFixtures().find((f) => f.language === 'r')!;
const expected = expectedOutputs(fx);

/** The R runner harness against real sandboxed runners (compat §4, templates/README.md). */
describe('r runner harness', () => {
  let srv: TestServer;
  let hello: RunnerProcess;
  const runners: RunnerProcess[] = [];
  const tempDirs: string[] = [];

  /** A small algorithm written on the fly: src/<name>.r = code (no packages.txt). */
  async function adHoc(name: string, code: string): Promise<AlgorithmFixture> {
    const dir = await makeTempDir('algohost-r-algo-');
    tempDirs.push(dir);
    fs.mkdirSync(path.join(dir, 'src'));
    fs.writeFileSync(path.join(dir, 'algorithmia.conf'), JSON.stringify({ username: 'user', algoname: name, language: 'r' }));
    fs.writeFileSync(path.join(dir, 'src', `${name}.r`), code);
    return { ...fx, name, hello: dir };
  }

  before(async () => {
    srv = await startTestServer();
    hello = await startFixtureRunner(srv, fx);
    runners.push(hello);
  });

  after(async () => {
    for (const r of runners) await r.stop();
    await srv?.stop();
    for (const d of tempDirs) fs.rmSync(d, { recursive: true, force: true });
  });

  test('every expected output of the fixture comes back with its content type', async () => {
    assert.ok(expected.length > 0);
    for (const e of expected) {
      const { response } = await hello.call({ content_type: typeof e.input === 'string' ? 'text' : 'json', data: e.input }, CALL_MS);
      assert.deepEqual(response, { result: e.result, metadata: { content_type: e.content_type } });
    }
    const textJson = await hello.call({ content_type: 'json', data: 'Zoë' }, CALL_MS);
    assert.deepEqual(textJson.response, { result: 'hello Zoë', metadata: { content_type: 'text' } });
    // Arrays arrive as lists (simplifyVector = FALSE), objects as named lists, null as NULL; the
    // harness writes NULL back as null (the fixture's own toJSON, with jsonlite's defaults, as {}).
    const nested = await hello.call({ content_type: 'json', data: { a: [1, 2.5, 'x', true, null], b: {} } }, CALL_MS);
    assert.deepEqual(nested.response, {
      result: { echo: { a: [1, 2.5, 'x', true, null], b: {} }, json: '{"a":[1,2.5,"x",true,{}],"b":{}}' },
      metadata: { content_type: 'json' },
    });
  });

  test('binary in, binary out (a raw vector, base64 on the wire)', async () => {
    const bytes = Buffer.from([0, 1, 2, 128, 250, 255]);
    const { response } = await hello.call({ content_type: 'binary', data: bytes.toString('base64') }, CALL_MS);
    assert.equal(response.metadata?.content_type, 'binary');
    assert.deepEqual(Buffer.from(response.result as string, 'base64'), Buffer.from(bytes).reverse());
    // Long enough that jsonlite would break its base64 into lines.
    const big = Buffer.alloc(100_000, 7);
    big[0] = 1;
    const long = await hello.call({ content_type: 'binary', data: big.toString('base64') }, CALL_MS);
    assert.equal(long.response.metadata?.content_type, 'binary');
    assert.deepEqual(Buffer.from(long.response.result as string, 'base64'), Buffer.from(big).reverse());
    const empty = await hello.call({ content_type: 'binary', data: '' }, CALL_MS);
    assert.deepEqual(empty.response, { result: '', metadata: { content_type: 'binary' } });
  });

  test('a print in apply is the stdout of that call only, even without a newline', async () => {
    for (let i = 0; i < 5; i++) {
      const printed = await hello.call({ content_type: 'json', data: { probe: 'print', arg: `call ${i} says hi` } }, CALL_MS);
      assert.deepEqual(printed.response, { result: 'printed', metadata: { content_type: 'text' } });
      assert.equal(printed.stdout, `call ${i} says hi`);
      const quiet = await hello.call({ content_type: 'text', data: 'quiet' }, CALL_MS);
      assert.equal(quiet.response.result, 'hello quiet');
      assert.equal(quiet.stdout, '');
    }
  });

  test('the top-level code (load) runs once per runner, not per call', async () => {
    assert.equal(hello.loadOutput.split('Hello: load ran').length - 1, 1, hello.loadOutput);
    for (let i = 0; i < 3; i++) {
      const { stdout } = await hello.call({ content_type: 'text', data: `n${i}` }, CALL_MS);
      assert.ok(!stdout.includes('load ran'), stdout);
    }
    const { response } = await hello.call({ content_type: 'json', data: { probe: 'loads' } }, CALL_MS);
    assert.deepEqual(response, { result: { loads: 1 }, metadata: { content_type: 'json' } });
  });

  test('stop() in apply is an AlgorithmError with its message and the calls; the runner keeps serving', async () => {
    const { response } = await hello.call({ content_type: 'json', data: { probe: 'raise', arg: 'boom' } }, CALL_MS);
    assert.equal(response.result, undefined);
    assert.equal(response.error?.error_type, 'AlgorithmError');
    assert.equal(response.error?.message, 'boom');
    assert.match(response.error?.stacktrace ?? '', /^Error in probe\(.*\): boom/);
    assert.match(response.error?.stacktrace ?? '', /stop\(arg\) at src\/Hello\.r#\d+/);
    assert.match(response.error?.stacktrace ?? '', /\n1: apply\(input\)$/);
    assert.doesNotMatch(response.error?.stacktrace ?? '', /withCallingHandlers|tryCatch/, 'the harness frames are left out');
    assert.equal(response.error?.stack_trace, response.error?.stacktrace);
    assert.equal((await hello.call({ content_type: 'text', data: 'again' }, CALL_MS)).response.result, 'hello again');
  });

  test("a condition carrying error_type 'InputError' keeps it; a result jsonlite cannot write is an AlgorithmError", async () => {
    const typed = await hello.call({ content_type: 'json', data: { probe: 'input_error', arg: 'give me a name' } }, CALL_MS);
    assert.equal(typed.response.error?.error_type, 'InputError');
    assert.equal(typed.response.error?.message, 'give me a name');
    const env = await hello.call({ content_type: 'json', data: { probe: 'function' } }, CALL_MS);
    assert.equal(env.response.error?.error_type, 'AlgorithmError');
    assert.match(env.response.error?.message ?? '', /JSON/);
  });

  test('input the harness cannot convert is an InputError', async () => {
    for (const request of [
      { content_type: 'binary' as const, data: 'not base64!' },
      { content_type: 'text' as const, data: 5 },
    ]) {
      const bad = await hello.call(request, CALL_MS);
      assert.equal(bad.response.error?.error_type, 'InputError', JSON.stringify(bad.response));
    }
    assert.equal((await hello.call({ content_type: 'text', data: 'after' }, CALL_MS)).response.result, 'hello after');
  });

  test('top-level code that fails: the runner starts and every call answers LoadingError', async () => {
    const code = ['cat("about to fail\\n")', 'stop("model file missing")', '', 'apply <- function(input) input', ''].join('\n');
    const runner = await startFixtureRunner(srv, await adHoc('LoadFails', code), 'r_loadfail');
    runners.push(runner);
    assert.match(runner.loadOutput, /about to fail/);
    for (const data of ['a', 'b']) {
      const { response } = await runner.call({ content_type: 'text', data }, CALL_MS);
      assert.equal(response.error?.error_type, 'LoadingError');
      assert.equal(response.error?.message, 'model file missing');
    }
  });

  test('the template of a new algorithm builds and answers calls as its comments say', async () => {
    const api = client(srv.url);
    const user = await createUser(api, srv.adminKey, 'r_template');
    const settings = { algorithm_environment: await environmentId(api, user.key, fx.environment) };
    const created = await api.post(`/v1/algorithms/${user.name}`, { key: user.key, body: { name: 'Greeter', settings } });
    assert.equal(created.status, 200, created.text);
    const compiled = await api.post(`/v1/algorithms/${user.name}/Greeter/compile`, { key: user.key, body: {} });
    assert.equal(compiled.body.compilation?.successful, true, compiled.text);
    const services = srv.server.services;
    const runner = services.runners.create({
      artifact: `${fx.environment}/${compiled.body.build.commit_sha}`,
      algorithmName: 'Greeter',
      environment: services.catalog.environmentByName(fx.environment)!,
      network: 'none',
    })!;
    runners.push(runner);
    await runner.start();
    const text = await runner.call({ content_type: 'text', data: 'world' }, CALL_MS);
    assert.deepEqual(text.response, { result: 'hello world', metadata: { content_type: 'text' } });
    const json = await runner.call({ content_type: 'json', data: { name: 'you' } }, CALL_MS);
    assert.deepEqual(json.response, { result: { greeting: 'hello you' }, metadata: { content_type: 'json' } });
    const wrong = await runner.call({ content_type: 'json', data: 5 }, CALL_MS);
    assert.equal(wrong.response.error?.error_type, 'AlgorithmError');
    assert.match(wrong.response.error?.message ?? '', /Expected a string or a JSON object/);
  });
});
