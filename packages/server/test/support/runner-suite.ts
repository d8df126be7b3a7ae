/**
 * What every runner-harness test file shares: a test server, the language's fixture algorithm
 * built and served by a real sandboxed runner, and ad hoc algorithms built on the fly, all
 * stopped and removed after the suite. The per-language suites (jvm-runner-suite.ts,
 * script-runner-suite.ts, runners-rust.test.ts) register their tests on top of it.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before } from 'node:test';
import type { PipeRequest } from '../../src/domain/calls/ports.js';
import type { RunnerRequest } from '../../src/runtime/runner/runner-factory.js';
import type { CallOutcome } from '../../src/runtime/runner/runner-outcome.js';
import type { RunnerProcess } from '../../src/runtime/runner/runner-process.js';
import { algorithmFixtures, expectedOutputs, type AlgorithmFixture, type ExpectedOutput } from './fixtures-algorithms.js';
import { artifactOf, buildFixture, startFixtureRunner } from './runners.js';
import { makeTempDir, startTestServer, type TestServer } from './server.js';

export const CALL_MS = 60_000;

export type Expected = ExpectedOutput;

/** A build of the fixture: its artifact key, or what finds it (the build id, else environment and commit). */
export interface Build {
  environment: string;
  commit_sha: string;
  build_id?: string;
  artifact?: string;
}

/** What a runner may get besides its artifact: environment variables and mounts. */
export type RunnerExtras = Pick<RunnerRequest, 'env' | 'extraMounts'>;

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

export interface RunnerSuite {
  fx: AlgorithmFixture;
  expected: Expected[];
  srv: () => TestServer;
  /** The runner of the fixture algorithm, started before the first test. */
  hello: () => RunnerProcess;
  /** The fixture's build (its artifact), for more runners of it. */
  helloBuild: () => Build;
  /** A new temporary directory, removed after the suite. */
  tempDir: (prefix: string) => Promise<string>;
  /** Writes files (relative path → content) into a new directory: algorithm `name` in the fixture's environment. */
  adHoc: (name: string, files: Record<string, string>) => Promise<AlgorithmFixture>;
  /** Starts a runner (stopped after the suite) of algorithm `f` for a build. */
  start: (f: AlgorithmFixture, build: Build, extras?: RunnerExtras) => Promise<RunnerProcess>;
  /** Writes files as algorithm `name`, builds it for a new user `owner` and starts a runner for it. */
  startAdHoc: (owner: string, name: string, files: Record<string, string>) => Promise<RunnerProcess>;
}

/** One call of a back-to-back check: its request and what its outcome must be. */
export interface BackToBackCall {
  request: PipeRequest;
  check: (o: CallOutcome) => void;
}

/**
 * Writes the calls to the runner in pairs, the second before the first is answered (as the pool
 * does, every harness writing output marks), and checks each outcome: every call gets its own
 * result and its own prints.
 */
export async function checkBackToBack(runner: RunnerProcess, calls: BackToBackCall[]): Promise<void> {
  assert.equal(runner.pipelines, true, 'the harness writes output marks (its adapter says outputMarks: true)');
  assert.ok(calls.length >= 2);
  for (let i = 0; i + 1 < calls.length; i += 2) {
    const [first, second] = await Promise.all([runner.call(calls[i]!.request, CALL_MS), runner.call(calls[i + 1]!.request, CALL_MS)]);
    calls[i]!.check(first);
    calls[i + 1]!.check(second);
  }
}

/**
 * A back-to-back call `print <word>` (text) of the languages' output-marks test algorithms, which
 * answer the word, print it on stdout and "!" on stderr: two streams, so the order between them
 * is not kept, the bytes are.
 */
export function printsWord(word: string): BackToBackCall {
  return {
    request: { content_type: 'text', data: `print ${word}` },
    check: ({ response, stdout }) => {
      assert.equal(response.result, word);
      assert.ok(stdout === `${word}!` || stdout === `!${word}`, stdout);
    },
  };
}

/**
 * The harness opens the response FIFO for its first response and keeps it; an algorithm that
 * closes that descriptor still gets every answer. The algorithm answers `close` by closing every
 * descriptor of the FIFO but the sandbox's fd 3 (the same FIFO, by /proc/self/fd links) and
 * anything else with the list of those descriptors.
 */
export async function checkResponseFifoKept(runner: RunnerProcess): Promise<void> {
  const fds = async () => (await runner.call({ content_type: 'text', data: 'fds' }, CALL_MS)).response.result as number[];
  assert.deepEqual(await fds(), [], 'nothing opened before the first response');
  const kept = await fds();
  assert.equal(kept.length, 1, 'one descriptor kept after the first response');
  assert.deepEqual(await fds(), kept, 'the same one, not one per call');
  assert.equal((await runner.call({ content_type: 'text', data: 'close' }, CALL_MS)).response.result, 'closed');
  assert.equal((await fds()).length, 1, 'the answer to "close" came through the FIFO opened again');
  assert.equal(runner.alive, true);
}

/** A back-to-back call with text input `data` that must answer `result` and print exactly `stdout`. */
export function answersWith(data: string, result: unknown, stdout: string): BackToBackCall {
  return {
    request: { content_type: 'text', data },
    check: (o) => assert.deepEqual([o.response.result, o.stdout], [result, stdout]),
  };
}

/** Registers the server and fixture runner (before) and their cleanup (after). Call inside a describe(). */
export function runnerSuite(language: string): RunnerSuite {
  const { fx, expected } = fixtureOf(language);
  let srv: TestServer;
  let hello: RunnerProcess;
  const runners: RunnerProcess[] = [];
  const tempDirs: string[] = [];

  const suite: RunnerSuite = {
    fx,
    expected,
    srv: () => srv,
    hello: () => hello,
    helloBuild: () => {
      const [, environment, commit] = hello.spec.artifact.split('/');
      return { environment: environment!, commit_sha: commit!, artifact: hello.spec.artifact };
    },
    tempDir: async (prefix) => {
      const dir = await makeTempDir(prefix);
      tempDirs.push(dir);
      return dir;
    },
    adHoc: async (name, files) => {
      const dir = await suite.tempDir(`algohost-${language}-algo-`);
      for (const [file, content] of Object.entries(files)) {
        fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
        fs.writeFileSync(path.join(dir, file), content);
      }
      return { ...fx, name, hello: dir };
    },
    start: async (f, build, extras = {}) => {
      const services = srv.server.services;
      const runner = services.runners.create({
        artifact: build.artifact ?? (await artifactOf(srv, build)),
        algorithmName: f.name,
        environment: services.catalog.environmentByName(build.environment)!,
        network: 'none',
        ...extras,
      });
      assert.ok(runner);
      runners.push(runner);
      await runner.start();
      return runner;
    },
    startAdHoc: async (owner, name, files) => {
      const f = await suite.adHoc(name, files);
      const { build } = await buildFixture(srv, f, owner);
      return suite.start(f, build);
    },
  };

  before(async () => {
    srv = await startTestServer();
    const started = Date.now();
    hello = await startFixtureRunner(srv, fx);
    runners.push(hello);
    console.log(`# ${language}: fixture built and its runner started in ${Date.now() - started} ms`);
  });

  after(async () => {
    for (const r of runners) await r.stop();
    await srv?.stop();
    for (const d of tempDirs) fs.rmSync(d, { recursive: true, force: true });
  });

  return suite;
}
