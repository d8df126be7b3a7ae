/**
 * What the Java and Scala runner tests share: the JVM harness (runtime/languages/java/runner)
 * serving a fixture algorithm (`class algorithmia.Hello.Hello` with load() and
 * apply(String): String) in a real sandboxed runner, plus ad hoc algorithms built on the fly.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CALL_MS, checkBackToBack, contentTypeOf, runnerSuite, type RunnerSuite } from './runner-suite.js';

/**
 * The fixture tests every JVM language passes. Register inside a describe(); `extra` adds
 * language-specific tests with the same server.
 */
export function jvmFixtureSuite(language: string, extra: (ctx: RunnerSuite) => void = () => {}): void {
  const ctx = runnerSuite(language);
  const { fx, expected, hello } = ctx;

  test('every expected output of the fixture comes back with its content type', async () => {
    for (const e of expected) {
      const { response } = await hello().call({ content_type: e.content_type, data: e.input }, CALL_MS);
      assert.deepEqual(response, { result: e.result, metadata: { content_type: contentTypeOf(e.result) } });
    }
  });

  test('load() ran once, before the first call, and its output is load-time output only', async () => {
    assert.equal(hello().loadOutput.split('Hello: load() ran').length - 1, 1, hello().loadOutput);
    for (let i = 0; i < 3; i++) {
      const { response, stdout } = await hello().call({ content_type: 'text', data: `Ada${i}` }, CALL_MS);
      // "hello", not "unloaded": load() set the prefix before apply ran.
      assert.deepEqual(JSON.parse(response.result as string), { greeting: `hello Ada${i}`, chars: 4 });
      assert.doesNotMatch(stdout, /load\(\) ran/);
    }
  });

  test('a print in apply comes back as the stdout of that call only', async () => {
    for (const name of ['Grace', 'Zoë', 'Linus']) {
      const { response, stdout } = await hello().call({ content_type: 'text', data: name }, CALL_MS);
      assert.equal(response.metadata?.content_type, 'text');
      assert.equal(stdout, `Hello: greeting ${name}\n`);
    }
  });

  test('calls written back to back (output marks) each keep their own result and prints', async () => {
    const names = ['Ada', 'Grace', 'Zoë', 'Linus', 'Barbara', 'Edsger'];
    await checkBackToBack(
      hello(),
      names.map((name) => ({
        request: { content_type: 'text', data: name },
        check: ({ response, stdout }) => {
          assert.equal(response.metadata?.content_type, 'text');
          assert.match(response.result as string, new RegExp(`hello ${name}`));
          assert.equal(stdout, `Hello: greeting ${name}\n`);
        },
      })),
    );
  });

  test('an exception is an AlgorithmError with its message and stack trace; the runner keeps serving', async () => {
    const { response, stdout } = await hello().call({ content_type: 'text', data: '' }, CALL_MS);
    assert.equal(response.error?.error_type, 'AlgorithmError');
    assert.equal(response.error?.message, 'name must not be empty');
    assert.match(response.error?.stacktrace ?? '', /IllegalArgumentException: name must not be empty/);
    assert.match(response.error?.stacktrace ?? '', /algorithmia\.Hello\.Hello\.apply/);
    assert.equal(response.error?.stack_trace, response.error?.stacktrace);
    assert.doesNotMatch(response.error?.stacktrace ?? '', /algohost\.runner|jdk\.internal\.reflect/);
    assert.equal(stdout, '');
    const next = await hello().call({ content_type: 'text', data: 'again' }, CALL_MS);
    assert.equal(next.response.metadata?.content_type, 'text');
  });

  test('input apply(String) cannot take is an InputError naming the mismatch', async () => {
    const object = await hello().call({ content_type: 'json', data: { a: 1 } }, CALL_MS);
    assert.equal(object.response.error?.error_type, 'InputError');
    assert.match(object.response.error?.message ?? '', /JSON object.*java\.lang\.String/);
    const binary = await hello().call({ content_type: 'binary', data: Buffer.from('hi').toString('base64') }, CALL_MS);
    assert.equal(binary.response.error?.error_type, 'InputError');
    assert.match(binary.response.error?.message ?? '', /not binary input/);
  });

  test('a second runner of the same build loads on its own (cold start measured)', async () => {
    const started = Date.now();
    const second = await ctx.start(fx, ctx.helloBuild());
    const coldMs = Date.now() - started;
    console.log(`# ${language}: cold start of a runner (sandbox + JVM + load) ${coldMs} ms`);
    assert.equal(second.loadOutput.split('Hello: load() ran').length - 1, 1);
    const first = await second.call({ content_type: 'text', data: 'warm' }, CALL_MS);
    assert.deepEqual(JSON.parse(first.response.result as string), { greeting: 'hello warm', chars: 4 });
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < 20; i++) await second.call({ content_type: 'text', data: 'warm' }, CALL_MS);
    console.log(`# ${language}: warm call ${Number(process.hrtime.bigint() - t0) / 20 / 1e6} ms on average`);
    await second.stop();
  });

  extra(ctx);
}
