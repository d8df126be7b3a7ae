/**
 * What the Java and Scala runner tests share: the JVM harness (runtime/languages/java/runner)
 * serving a fixture algorithm (`class algorithmia.Hello.Hello` with load() and
 * apply(String): String) in a real sandboxed runner, plus ad hoc algorithms built on the fly.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { RunnerProcess } from '../../src/runtime/runner/runner-process.js';
import { algorithmFixtures, expectedOutputs, type AlgorithmFixture, type ExpectedOutput } from './fixtures-algorithms.js';
import { buildFixture, startFixtureRunner } from './runners.js';
import { makeTempDir, startTestServer, type TestServer } from './server.js';

export const CALL_MS = 60_000;

export type Expected = ExpectedOutput;

export function fixtureOf(language: string): { fx: AlgorithmFixture; expected: Expected[] } {
  const fx = algorithmFixtures().find((f) => f.language === language);
  assert.ok(fx, `no fixture for ${language}`);
  const expected = expectedOutputs(fx);
  return { fx, expected };
}

/** Result classification of the contract: string → text, anything else → json. */
export function contentTypeOf(result: unknown): string {
  return typeof result === 'string' ? 'text' : 'json';
}

export interface SuiteContext {
  srv: () => TestServer;
  hello: () => RunnerProcess;
  /** Builds files (relative path → content) as algorithm `name` of a new owner and starts a runner for it. */
  startAdHoc(owner: string, name: string, files: Record<string, string>): Promise<RunnerProcess>;
  /** Starts one more runner for an already built artifact. */
  startAnother(fx: AlgorithmFixture, build: { environment: string; commit_sha: string }): Promise<RunnerProcess>;
}

/**
 * The fixture tests every JVM language passes. Register inside a describe(); `extra` adds
 * language-specific tests with the same server.
 */
export function jvmFixtureSuite(language: string, extra: (ctx: SuiteContext) => void = () => {}): void {
  const { fx, expected } = fixtureOf(language);
  let srv: TestServer;
  let hello: RunnerProcess;
  let helloBuild: { environment: string; commit_sha: string };
  const runners: RunnerProcess[] = [];
  const tempDirs: string[] = [];

  async function startAnother(f: AlgorithmFixture, build: { environment: string; commit_sha: string }): Promise<RunnerProcess> {
    const services = srv.server.services;
    const runner = services.runners.create({
      artifact: `${build.environment}/${build.commit_sha}`,
      algorithmName: f.name,
      environment: services.catalog.environmentByName(build.environment)!,
      network: 'none',
    });
    assert.ok(runner);
    runners.push(runner);
    await runner.start();
    return runner;
  }

  const ctx: SuiteContext = {
    srv: () => srv,
    hello: () => hello,
    startAnother,
    async startAdHoc(owner, name, files) {
      const dir = await makeTempDir('algohost-jvm-algo-');
      tempDirs.push(dir);
      for (const [file, content] of Object.entries(files)) {
        fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
        fs.writeFileSync(path.join(dir, file), content);
      }
      const adHoc = { ...fx, name, hello: dir };
      const { build } = await buildFixture(srv, adHoc, owner);
      return startAnother(adHoc, build);
    },
  };

  before(async () => {
    srv = await startTestServer();
    const started = Date.now();
    hello = await startFixtureRunner(srv, fx);
    runners.push(hello);
    // The fixture's artifact (<environment>/<commit>), for a second runner.
    helloBuild = { environment: path.basename(path.dirname(hello.spec.artifactDir)), commit_sha: path.basename(hello.spec.artifactDir) };
    console.log(`# ${language}: fixture built and its runner started in ${Date.now() - started} ms`);
  });

  after(async () => {
    for (const r of runners) await r.stop();
    await srv?.stop();
    for (const d of tempDirs) fs.rmSync(d, { recursive: true, force: true });
  });

  test('every expected output of the fixture comes back with its content type', async () => {
    for (const e of expected) {
      const { response } = await hello.call({ content_type: e.content_type, data: e.input }, CALL_MS);
      assert.deepEqual(response, { result: e.result, metadata: { content_type: contentTypeOf(e.result) } });
    }
  });

  test('load() ran once, before the first call, and its output is load-time output only', async () => {
    assert.equal(hello.loadOutput.split('Hello: load() ran').length - 1, 1, hello.loadOutput);
    for (let i = 0; i < 3; i++) {
      const { response, stdout } = await hello.call({ content_type: 'text', data: `Ada${i}` }, CALL_MS);
      // "hello", not "unloaded": load() set the prefix before apply ran.
      assert.deepEqual(JSON.parse(response.result as string), { greeting: `hello Ada${i}`, chars: 4 });
      assert.doesNotMatch(stdout, /load\(\) ran/);
    }
  });

  test('a print in apply comes back as the stdout of that call only', async () => {
    for (const name of ['Grace', 'Zoë', 'Linus']) {
      const { response, stdout } = await hello.call({ content_type: 'text', data: name }, CALL_MS);
      assert.equal(response.metadata?.content_type, 'text');
      assert.equal(stdout, `Hello: greeting ${name}\n`);
    }
  });

  test('an exception is an AlgorithmError with its message and stack trace; the runner keeps serving', async () => {
    const { response, stdout } = await hello.call({ content_type: 'text', data: '' }, CALL_MS);
    assert.equal(response.error?.error_type, 'AlgorithmError');
    assert.equal(response.error?.message, 'name must not be empty');
    assert.match(response.error?.stacktrace ?? '', /IllegalArgumentException: name must not be empty/);
    assert.match(response.error?.stacktrace ?? '', /algorithmia\.Hello\.Hello\.apply/);
    assert.equal(response.error?.stack_trace, response.error?.stacktrace);
    assert.doesNotMatch(response.error?.stacktrace ?? '', /algohost\.runner|jdk\.internal\.reflect/);
    assert.equal(stdout, '');
    const next = await hello.call({ content_type: 'text', data: 'again' }, CALL_MS);
    assert.equal(next.response.metadata?.content_type, 'text');
  });

  test('input apply(String) cannot take is an InputError naming the mismatch', async () => {
    const object = await hello.call({ content_type: 'json', data: { a: 1 } }, CALL_MS);
    assert.equal(object.response.error?.error_type, 'InputError');
    assert.match(object.response.error?.message ?? '', /JSON object.*java\.lang\.String/);
    const binary = await hello.call({ content_type: 'binary', data: Buffer.from('hi').toString('base64') }, CALL_MS);
    assert.equal(binary.response.error?.error_type, 'InputError');
    assert.match(binary.response.error?.message ?? '', /not binary input/);
  });

  test('a second runner of the same build loads on its own (cold start measured)', async () => {
    const started = Date.now();
    const second = await startAnother(fx, helloBuild);
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
