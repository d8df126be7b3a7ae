import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Mount } from '../src/runtime/sandbox/supervisor.js';
import { RunnerFailure, type RunnerProcess } from '../src/runtime/runner/runner-process.js';
import { algorithmFixtures, type AlgorithmFixture, expectedOutputs } from './support/fixtures-algorithms.js';
import { buildFixture, startFixtureRunner } from './support/runners.js';
import { makeTempDir, startTestServer, type TestServer } from './support/server.js';

const exec = promisify(execFile);
const CALL_MS = 60_000;
const fx = algorithmFixtures().find((f) => f.language === 'python')!;
const expected = expectedOutputs(fx);
const HARNESS_LIB = fileURLToPath(new URL('../src/runtime/languages/python/runner/lib/', import.meta.url));

/** The Python runner harness against real sandboxed runners (compat §4, templates/README.md). */
describe('python runner harness', () => {
  let srv: TestServer;
  let hello: RunnerProcess;
  const runners: RunnerProcess[] = [];
  const tempDirs: string[] = [];
  const servers: http.Server[] = [];

  /** A small algorithm written on the fly: src/<name>.py = code (plus an empty .adk if asked). */
  async function adHoc(name: string, code: string, opts: { adk?: boolean } = {}): Promise<AlgorithmFixture> {
    const dir = await makeTempDir('algohost-py-algo-');
    tempDirs.push(dir);
    fs.mkdirSync(path.join(dir, 'src'));
    fs.writeFileSync(path.join(dir, 'algorithmia.conf'), JSON.stringify({ username: 'user', algoname: name, language: 'python3' }));
    fs.writeFileSync(path.join(dir, 'requirements.txt'), '# no dependencies\n');
    fs.writeFileSync(path.join(dir, 'src', '__init__.py'), '');
    fs.writeFileSync(path.join(dir, 'src', `${name}.py`), code);
    if (opts.adk) fs.writeFileSync(path.join(dir, '.adk'), '');
    return { ...fx, name, hello: dir };
  }

  /** Builds an ad hoc algorithm and starts a runner for it, optionally with extra env and mounts. */
  async function startAdHoc(
    owner: string,
    name: string,
    code: string,
    opts: { adk?: boolean; runners?: { env?: Record<string, string>; extraMounts?: Mount[] }[] } = {},
  ) {
    const { build } = await buildFixture(srv, await adHoc(name, code, opts), owner);
    const services = srv.server.services;
    const started: RunnerProcess[] = [];
    for (const extra of opts.runners ?? [{}]) {
      const runner = services.runners.create({
        artifact: `${build.environment}/${build.commit_sha}`,
        algorithmName: name,
        environment: services.catalog.environmentByName(build.environment)!,
        network: 'none',
        ...extra,
      });
      assert.ok(runner);
      runners.push(runner);
      await runner.start();
      started.push(runner);
    }
    return started;
  }

  before(async () => {
    srv = await startTestServer();
    hello = await startFixtureRunner(srv, fx);
    runners.push(hello);
  });

  after(async () => {
    for (const r of runners) await r.stop();
    for (const s of servers) await new Promise((resolve) => s.close(resolve));
    await srv?.stop();
    for (const d of tempDirs) fs.rmSync(d, { recursive: true, force: true });
  });

  test('every expected output of the fixture comes back with its content type', async () => {
    for (const e of expected) {
      const { response } = await hello.call({ content_type: typeof e.input === 'string' ? 'text' : 'json', data: e.input }, CALL_MS);
      assert.deepEqual(response, { result: e.result, metadata: { content_type: e.content_type } });
    }
    const nullIn = await hello.call({ content_type: 'json', data: null }, CALL_MS);
    assert.deepEqual(nullIn.response, { result: { echo: null, kind: 'NoneType', json: 'null' }, metadata: { content_type: 'json' } });
  });

  test('binary in, binary out (base64)', async () => {
    const bytes = Buffer.from([0, 1, 2, 128, 250, 255]);
    const { response } = await hello.call({ content_type: 'binary', data: bytes.toString('base64') }, CALL_MS);
    assert.equal(response.metadata?.content_type, 'binary');
    assert.deepEqual(Buffer.from(response.result as string, 'base64'), Buffer.from(bytes).reverse());
    const empty = await hello.call({ content_type: 'binary', data: '' }, CALL_MS);
    assert.deepEqual(empty.response, { result: '', metadata: { content_type: 'binary' } });
  });

  test('a print in apply is the stdout of that call only, even without a newline', async () => {
    for (let i = 0; i < 10; i++) {
      const printed = await hello.call({ content_type: 'json', data: { probe: 'print', arg: `call ${i} says hi` } }, CALL_MS);
      assert.equal(printed.response.result, 'printed');
      assert.equal(printed.stdout, `call ${i} says hi`);
      const quiet = await hello.call({ content_type: 'text', data: 'quiet' }, CALL_MS);
      assert.equal(quiet.response.result, 'hello quiet');
      assert.equal(quiet.stdout, '');
    }
    const big = 'x'.repeat(300_000);
    const printed = await hello.call({ content_type: 'json', data: { probe: 'print', arg: big } }, CALL_MS);
    assert.equal(printed.stdout.length, big.length);
  });

  test('packages from requirements.txt import: the runner uses the venv of the dependency layer', async () => {
    const { response } = await hello.call({ content_type: 'json', data: { probe: 'six' } }, CALL_MS);
    assert.deepEqual(response, { result: '1.17.0', metadata: { content_type: 'text' } });
  });

  test('load() runs once per runner and apply gets its result', async () => {
    assert.equal(hello.loadOutput.split('Hello: load() ran').length - 1, 1, hello.loadOutput);
    for (let i = 0; i < 3; i++) await hello.call({ content_type: 'text', data: `n${i}` }, CALL_MS);
    const { response, stdout } = await hello.call({ content_type: 'json', data: { probe: 'loads' } }, CALL_MS);
    assert.deepEqual(response.result, { loads: 1, state: { prefix: 'hello' } });
    assert.ok(!stdout.includes('load() ran'));
  });

  test('the algorithm reading stdin gets nothing, and the next request still arrives', async () => {
    const { response } = await hello.call({ content_type: 'json', data: { probe: 'stdin' } }, CALL_MS);
    assert.deepEqual(response, { result: '', metadata: { content_type: 'text' } });
    assert.equal((await hello.call({ content_type: 'text', data: 'after' }, CALL_MS)).response.result, 'hello after');
  });

  test('an exception is an AlgorithmError with its message and stack trace; the runner keeps serving', async () => {
    const { response } = await hello.call({ content_type: 'json', data: { probe: 'raise', arg: 'boom' } }, CALL_MS);
    assert.equal(response.result, undefined);
    assert.equal(response.error?.error_type, 'AlgorithmError');
    assert.equal(response.error?.message, 'boom');
    assert.match(response.error?.stacktrace ?? '', /Hello\.py", line \d+, in probe/);
    assert.match(response.error?.stacktrace ?? '', /ValueError: boom/);
    assert.doesNotMatch(response.error?.stacktrace ?? '', /runner|_pipe\.py/, 'the harness frames are left out');
    assert.equal(response.error?.stack_trace, response.error?.stacktrace);
    assert.equal((await hello.call({ content_type: 'text', data: 'again' }, CALL_MS)).response.result, 'hello again');
  });

  test("an exception carrying error_type 'InputError' keeps it", async () => {
    const { response } = await hello.call({ content_type: 'json', data: { probe: 'input_error', arg: 'give me a name' } }, CALL_MS);
    assert.equal(response.error?.error_type, 'InputError');
    assert.equal(response.error?.message, 'give me a name');
    assert.match(response.error?.stacktrace ?? '', /InputError: give me a name/);
  });

  test('a result that is not JSON (NaN) is an AlgorithmError, not a broken response', async () => {
    const { response } = await hello.call({ content_type: 'json', data: { probe: 'nan' } }, CALL_MS);
    assert.equal(response.error?.error_type, 'AlgorithmError');
    assert.match(response.error?.message ?? '', /JSON/);
  });

  test('load() raising: the runner starts and every call answers LoadingError', async () => {
    const [runner] = await startAdHoc(
      'py_loadfail',
      'LoadFails',
      ['def load():', '    raise RuntimeError("model file missing")', '', '', 'def apply(input):', '    return "unreachable"', ''].join(
        '\n',
      ),
    );
    for (const data of ['a', 'b']) {
      const { response } = await runner!.call({ content_type: 'text', data }, CALL_MS);
      assert.equal(response.error?.error_type, 'LoadingError');
      assert.match(response.error?.message ?? '', /load\(\) raised RuntimeError: model file missing/);
      assert.match(response.error?.stacktrace ?? '', /LoadFails\.py", line 2, in load/);
    }
  });

  test('an import that fails answers LoadingError too', async () => {
    const [runner] = await startAdHoc(
      'py_importfail',
      'ImportFails',
      ['import no_such_module_here', '', '', 'def apply(input):', '    return 1', ''].join('\n'),
    );
    const { response } = await runner!.call({ content_type: 'json', data: 1 }, CALL_MS);
    assert.equal(response.error?.error_type, 'LoadingError');
    assert.match(response.error?.message ?? '', /No module named 'no_such_module_here'/);
  });

  test('ADK style (.adk + from Algorithmia import ADK) serves calls unchanged', async () => {
    const code = [
      'from Algorithmia import ADK',
      '',
      '',
      'def load():',
      '    print("adk loading")',
      '    return {"greeting": "hi"}',
      '',
      '',
      'def apply(input, state):',
      '    print("adk apply")',
      '    if isinstance(input, bytes):',
      '        return input.upper()',
      '    if isinstance(input, dict):',
      '        return {"keys": sorted(input), "name": __name__}',
      '    return "{} {}".format(state["greeting"], input)',
      '',
      '',
      'algorithm = ADK(apply, load)',
      'algorithm.init("local sample")',
      '',
    ].join('\n');
    const [runner] = await startAdHoc('py_adk', 'AdkStyle', code, { adk: true });
    assert.match(runner!.loadOutput, /adk loading/);
    const text = await runner!.call({ content_type: 'text', data: 'you' }, CALL_MS);
    assert.deepEqual(text.response, { result: 'hi you', metadata: { content_type: 'text' } });
    assert.equal(text.stdout, 'adk apply\n');
    const json = await runner!.call({ content_type: 'json', data: { b: 1, a: 2 } }, CALL_MS);
    assert.deepEqual(json.response, { result: { keys: ['a', 'b'], name: '__main__' }, metadata: { content_type: 'json' } });
    const bin = await runner!.call({ content_type: 'binary', data: Buffer.from('abc').toString('base64') }, CALL_MS);
    assert.deepEqual(bin.response, { result: Buffer.from('ABC').toString('base64'), metadata: { content_type: 'binary' } });
  });

  test('ADK local mode: without the response FIFO, init(sample) runs apply once and prints the result', async () => {
    const dir = await makeTempDir('algohost-py-adk-local-');
    tempDirs.push(dir);
    const script = path.join(dir, 'Local.py');
    fs.writeFileSync(
      script,
      [
        'from Algorithmia import ADK',
        '',
        'def apply(input, state):',
        '    return state + " " + input',
        '',
        'ADK(apply, lambda: "hello").init("laptop")',
        '',
      ].join('\n'),
    );
    const { stdout } = await exec('/usr/bin/python3', [script], {
      cwd: dir,
      env: {
        PATH: '/usr/bin:/bin',
        PYTHONPATH: HARNESS_LIB,
        PYTHONDONTWRITEBYTECODE: '1',
        ALGOHOST_RESPONSE_FIFO: path.join(dir, 'no-fifo'),
      },
    });
    const lines = stdout.trim().split('\n');
    assert.equal(lines[0], 'loading complete');
    assert.deepEqual(JSON.parse(lines[1]!), { result: 'hello laptop', metadata: { content_type: 'text' } });
  });

  test('sys.exit mid-call: the call rejects with SystemExit', async () => {
    const code = [
      'import sys',
      '',
      '',
      'def apply(input):',
      '    if input == "exit":',
      '        print("leaving")',
      '        sys.exit(3)',
      '    return "alive"',
      '',
    ].join('\n');
    const [runner] = await startAdHoc('py_exit', 'Exits', code);
    assert.equal((await runner!.call({ content_type: 'text', data: 'x' }, CALL_MS)).response.result, 'alive');
    await assert.rejects(runner!.call({ content_type: 'text', data: 'exit' }, CALL_MS), (err: unknown) => {
      assert.ok(err instanceof RunnerFailure, String(err));
      assert.equal(err.errorType, 'SystemExit');
      assert.match(err.message, /exit code 3/);
      return true;
    });
    assert.equal(runner!.alive, false);
  });

  test('Algorithmia.client() calls other algorithms over $ALGOHOST_API_SOCKET; without a key it asks for pipeline_enabled', async () => {
    const key = 'simTestKeyForThePythonClnt1';
    const sockDir = await makeTempDir('algohost-py-api-');
    tempDirs.push(sockDir);
    fs.chmodSync(sockDir, 0o755);
    const sockPath = path.join(sockDir, 'api.sock');
    const seen: { method: string; url: string; headers: http.IncomingHttpHeaders; body: string }[] = [];
    const api = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
        const send = (status: number, value: unknown) => {
          res.writeHead(status, { 'content-type': 'application/json' });
          res.end(JSON.stringify(value));
        };
        if (req.headers.authorization !== `Simple ${key}`) return send(401, { error: { message: 'authorization required' } });
        if (req.url!.startsWith('/v1/algo/demo/Upper/'))
          return send(200, { result: body.toUpperCase(), metadata: { content_type: 'text', duration: 0.01 } });
        if (req.url!.startsWith('/v1/algo/demo/Fails')) {
          return send(200, {
            error: { message: 'it failed over there', error_type: 'AlgorithmError', stacktrace: 'trace' },
            metadata: { duration: 0.01 },
          });
        }
        send(404, { error: { message: 'algorithm algo://demo/Nope not found' } });
      });
    });
    servers.push(api);
    await new Promise<void>((resolve) => api.listen(sockPath, resolve));
    fs.chmodSync(sockPath, 0o777);

    const code = [
      'import Algorithmia',
      'from Algorithmia.errors import AlgorithmException',
      '',
      '',
      'def apply(input):',
      '    try:',
      '        response = Algorithmia.client().algo(input["algo"]).pipe(input["input"])',
      '    except AlgorithmException as err:',
      '        if input.get("uncaught"):',
      '            raise',
      '        return {"exception": type(err).__name__, "message": str(err)}',
      '    return {"result": response.result, "content_type": response.metadata.content_type, "duration": response.metadata.duration}',
      '',
    ].join('\n');
    const [withKey, withoutKey] = await startAdHoc('py_client', 'Caller', code, {
      runners: [
        {
          env: {
            ALGORITHMIA_API: 'http://algohost.internal:9999',
            ALGORITHMIA_API_KEY: key,
            ALGOHOST_API_SOCKET: '/run/algohost-api/api.sock',
          },
          extraMounts: [{ host: sockDir, inside: '/run/algohost-api', writable: true }],
        },
        {
          extraMounts: [{ host: sockDir, inside: '/run/algohost-api', writable: true }],
          env: { ALGOHOST_API_SOCKET: '/run/algohost-api/api.sock' },
        },
      ],
    });

    const ok = await withKey!.call({ content_type: 'json', data: { algo: 'demo/Upper/1.0.0', input: 'shout' } }, CALL_MS);
    assert.deepEqual(ok.response.result, { result: 'SHOUT', content_type: 'text', duration: 0.01 });
    const req = seen.at(-1)!;
    assert.equal(req.method, 'POST');
    assert.equal(req.url, '/v1/algo/demo/Upper/1.0.0');
    assert.equal(req.headers['content-type'], 'text/plain');
    assert.equal(req.headers.host, 'algohost.internal:9999');
    assert.equal(req.body, 'shout');

    const failed = await withKey!.call({ content_type: 'json', data: { algo: 'algo://demo/Fails', input: { x: 1 } } }, CALL_MS);
    assert.deepEqual(failed.response.result, { exception: 'AlgorithmException', message: 'it failed over there' });
    assert.equal(seen.at(-1)!.headers['content-type'], 'application/json');
    assert.equal(seen.at(-1)!.body, '{"x": 1}');
    const missing = await withKey!.call({ content_type: 'json', data: { algo: 'demo/Nope', input: 1 } }, CALL_MS);
    assert.deepEqual(missing.response.result, { exception: 'AlgorithmException', message: 'algorithm algo://demo/Nope not found' });

    const before = seen.length;
    const noKey = await withoutKey!.call({ content_type: 'json', data: { algo: 'demo/Upper/1.0.0', input: 'x', uncaught: true } }, CALL_MS);
    assert.equal(noKey.response.error?.error_type, 'AlgorithmError');
    assert.match(noKey.response.error?.message ?? '', /pipeline_enabled/);
    assert.equal(seen.length, before, 'nothing is sent without a key');
  });
});
