/**
 * What the runner tests of the scripting languages (JavaScript, Ruby, R, Python) share: their
 * fixture algorithms answer the same probes ({probe: 'print' | 'loads' | 'raise' | 'input_error'
 * | 'stdin' | …, arg}), so one table-driven suite checks each harness; a language's row says
 * what really differs. Language-specific tests stay in that language's file, registered after
 * these with the returned context (the same server and fixture runner).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { PipeRequest } from '../../src/domain/calls/ports.js';
import { environmentId } from './algorithms.js';
import { createUser } from './fixtures.js';
import { client } from './http.js';
import { CALL_MS, checkBackToBack, runnerSuite, type RunnerSuite } from './runner-suite.js';

export interface ScriptLanguage {
  /** The fixture's folder under test/fixtures/algorithms/. */
  language: string;
  /** Prefix of the users the suite makes (`<owner>_loadfail`, `<owner>_template`). */
  owner: string;
  /** The files of a one-file algorithm `name` whose source is `code`. */
  sourceFiles(name: string, code: string): Record<string, string>;
  /** What the fixture's echo reports as the `kind` of JSON null; unset: not checked. */
  nullKind?: string;
  /** What the algorithm gets for binary input, for the test's title. */
  bytesAs: string;
  load: {
    /** The test's title: "<what> runs once per runner". */
    what: string;
    /** Printed by the fixture's load step ("Hello: <marker>"). */
    marker: string;
    /** The answer to {probe: 'loads'} after one load. */
    loads: unknown;
  };
  /** {probe: 'raise', arg: 'boom'}: what the stack trace shows, and the harness frames it leaves out. */
  raise: { what: string; trace: RegExp[]; harnessFrames: RegExp };
  /** What the stack trace of {probe: 'input_error'} shows, if checked. */
  inputErrorTrace?: RegExp;
  /** A probe whose result cannot be written as JSON (and what that result is, for the title). */
  unwritable?: { probe: string; what: string };
  /** Requests the harness cannot convert: each an InputError. */
  badInputs: PipeRequest[];
  /** Whether the fixture has {probe: 'stdin'} (reads its stdin to the end). */
  stdin: boolean;
  /** An algorithm whose load step fails, as `LoadFails`. */
  failingLoad: { what: string; code: string; loadOutput?: RegExp; message: string | RegExp; trace?: RegExp };
  /** Whether the new-algorithm template is built and called. */
  template: boolean;
}

/** Registers the shared tests of a scripting-language harness; call inside a describe(). */
export function scriptRunnerSuite(lang: ScriptLanguage): RunnerSuite {
  const ctx = runnerSuite(lang.language);
  const { fx, expected, hello } = ctx;
  const probe = (name: string, arg?: unknown) => hello().call({ content_type: 'json', data: { probe: name, arg } }, CALL_MS);
  const greets = async (name: string) =>
    assert.equal((await hello().call({ content_type: 'text', data: name }, CALL_MS)).response.result, `hello ${name}`);

  test('every expected output of the fixture comes back with its content type', async () => {
    assert.ok(expected.length > 0);
    for (const e of expected) {
      const { response } = await hello().call({ content_type: typeof e.input === 'string' ? 'text' : 'json', data: e.input }, CALL_MS);
      assert.deepEqual(response, { result: e.result, metadata: { content_type: e.content_type } });
    }
    if (lang.nullKind !== undefined) {
      const nullIn = await hello().call({ content_type: 'json', data: null }, CALL_MS);
      assert.deepEqual(nullIn.response, { result: { echo: null, kind: lang.nullKind, json: 'null' }, metadata: { content_type: 'json' } });
    }
    const textJson = await hello().call({ content_type: 'json', data: 'Zoë' }, CALL_MS);
    assert.deepEqual(textJson.response, { result: 'hello Zoë', metadata: { content_type: 'text' } });
  });

  test(`binary in, binary out (${lang.bytesAs}, base64 on the wire)`, async () => {
    const bytes = Buffer.from([0, 1, 2, 128, 250, 255]);
    const { response } = await hello().call({ content_type: 'binary', data: bytes.toString('base64') }, CALL_MS);
    assert.equal(response.metadata?.content_type, 'binary');
    assert.deepEqual(Buffer.from(response.result as string, 'base64'), Buffer.from(bytes).reverse());
    const empty = await hello().call({ content_type: 'binary', data: '' }, CALL_MS);
    assert.deepEqual(empty.response, { result: '', metadata: { content_type: 'binary' } });
  });

  test('a print in apply is the stdout of that call only, even without a newline', async () => {
    for (let i = 0; i < 10; i++) {
      const printed = await probe('print', `call ${i} says hi`);
      assert.deepEqual(printed.response, { result: 'printed', metadata: { content_type: 'text' } });
      assert.equal(printed.stdout, `call ${i} says hi`);
      const quiet = await hello().call({ content_type: 'text', data: 'quiet' }, CALL_MS);
      assert.equal(quiet.response.result, 'hello quiet');
      assert.equal(quiet.stdout, '');
    }
  });

  test('calls written back to back (output marks) each keep their own result and prints', async () => {
    const calls = [];
    for (let i = 0; i < 10; i++) {
      calls.push({
        request: { content_type: 'json' as const, data: { probe: 'print', arg: `call ${i} says hi` } },
        check: (o: { response: unknown; stdout: string }) => {
          assert.deepEqual(o.response, { result: 'printed', metadata: { content_type: 'text' } });
          assert.equal(o.stdout, `call ${i} says hi`);
        },
      });
      calls.push({
        request: { content_type: 'text' as const, data: `quiet ${i}` },
        check: (o: { response: { result?: unknown }; stdout: string }) => {
          assert.equal(o.response.result, `hello quiet ${i}`);
          assert.equal(o.stdout, '');
        },
      });
    }
    // Pairs shifted by one too: a quiet call first, then one that prints.
    await checkBackToBack(hello(), calls);
    await checkBackToBack(hello(), calls.slice(1, -1));
  });

  test(`${lang.load.what} runs once per runner, not per call`, async () => {
    assert.equal(hello().loadOutput.split(`Hello: ${lang.load.marker}`).length - 1, 1, hello().loadOutput);
    for (let i = 0; i < 3; i++) {
      const { stdout } = await hello().call({ content_type: 'text', data: `n${i}` }, CALL_MS);
      assert.ok(!stdout.includes(lang.load.marker), stdout);
    }
    const { response, stdout } = await probe('loads');
    assert.deepEqual(response, { result: lang.load.loads, metadata: { content_type: 'json' } });
    assert.ok(!stdout.includes(lang.load.marker), stdout);
  });

  test(`${lang.raise.what} is an AlgorithmError with its message and stack trace; the runner keeps serving`, async () => {
    const { response } = await probe('raise', 'boom');
    assert.equal(response.result, undefined);
    assert.equal(response.error?.error_type, 'AlgorithmError');
    assert.equal(response.error?.message, 'boom');
    for (const line of lang.raise.trace) assert.match(response.error?.stacktrace ?? '', line);
    assert.doesNotMatch(response.error?.stacktrace ?? '', lang.raise.harnessFrames, 'the harness frames are left out');
    assert.equal(response.error?.stack_trace, response.error?.stacktrace);
    await greets('again');
  });

  test("an error carrying error_type 'InputError' keeps it", async () => {
    const { response } = await probe('input_error', 'give me a name');
    assert.equal(response.error?.error_type, 'InputError');
    assert.equal(response.error?.message, 'give me a name');
    if (lang.inputErrorTrace) assert.match(response.error?.stacktrace ?? '', lang.inputErrorTrace);
  });

  const unwritable = lang.unwritable;
  if (unwritable) {
    test(`a result that is not JSON (${unwritable.what}) is an AlgorithmError, not a broken response`, async () => {
      const { response } = await probe(unwritable.probe);
      assert.equal(response.error?.error_type, 'AlgorithmError');
      assert.match(response.error?.message ?? '', /JSON/);
    });
  }

  if (lang.badInputs.length > 0) {
    test('input the harness cannot convert is an InputError; the runner keeps serving', async () => {
      for (const request of lang.badInputs) {
        const bad = await hello().call(request, CALL_MS);
        assert.equal(bad.response.error?.error_type, 'InputError', JSON.stringify(bad.response));
      }
      await greets('after');
    });
  }

  if (lang.stdin) {
    test('the algorithm reading stdin gets nothing, and the next request still arrives', async () => {
      const { response } = await probe('stdin');
      assert.deepEqual(response, { result: '', metadata: { content_type: 'text' } });
      await greets('after');
    });
  }

  test(`${lang.failingLoad.what}: the runner starts and every call answers LoadingError`, async () => {
    const { code, loadOutput, message, trace } = lang.failingLoad;
    const runner = await ctx.startAdHoc(`${lang.owner}_loadfail`, 'LoadFails', lang.sourceFiles('LoadFails', code));
    if (loadOutput) assert.match(runner.loadOutput, loadOutput);
    for (const data of ['a', 'b']) {
      const { response } = await runner.call({ content_type: 'text', data }, CALL_MS);
      assert.equal(response.error?.error_type, 'LoadingError');
      if (typeof message === 'string') assert.equal(response.error?.message, message);
      else assert.match(response.error?.message ?? '', message);
      if (trace) assert.match(response.error?.stacktrace ?? '', trace);
    }
  });

  if (lang.template) {
    test('the template of a new algorithm builds and answers calls as its comments say', async () => {
      const srv = ctx.srv();
      const api = client(srv.url);
      const user = await createUser(api, srv.adminKey, `${lang.owner}_template`);
      const settings = { algorithm_environment: await environmentId(api, user.key, fx.environment) };
      const created = await api.post(`/v1/algorithms/${user.name}`, { key: user.key, body: { name: 'Greeter', settings } });
      assert.equal(created.status, 200, created.text);
      const compiled = await api.post(`/v1/algorithms/${user.name}/Greeter/compile`, { key: user.key, body: {} });
      assert.equal(compiled.body.compilation?.successful, true, compiled.text);
      const runner = await ctx.start(
        { ...fx, name: 'Greeter' },
        { environment: fx.environment, commit_sha: compiled.body.build.commit_sha as string },
      );
      const text = await runner.call({ content_type: 'text', data: 'world' }, CALL_MS);
      assert.deepEqual(text.response, { result: 'hello world', metadata: { content_type: 'text' } });
      const json = await runner.call({ content_type: 'json', data: { name: 'you' } }, CALL_MS);
      assert.deepEqual(json.response, { result: { greeting: 'hello you' }, metadata: { content_type: 'json' } });
      const wrong = await runner.call({ content_type: 'json', data: 5 }, CALL_MS);
      assert.equal(wrong.response.error?.error_type, 'AlgorithmError');
      assert.match(wrong.response.error?.message ?? '', /Expected a string or a JSON object/);
    });
  }

  return ctx;
}
