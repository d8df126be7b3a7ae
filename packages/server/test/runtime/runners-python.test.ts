import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { CallNotStarted, type CallOutcome, RunnerFailure } from '../../src/runtime/runner/runner-outcome.js';
import type { RunnerProcess } from '../../src/runtime/runner/runner-process.js';
import { CALL_MS, checkBackToBack, checkResponseFifoKept, type RunnerExtras } from '../support/runner-suite.js';
import { buildFixture } from '../support/runners.js';
import { scriptRunnerSuite } from '../support/script-runner-suite.js';

const exec = promisify(execFile);
const HARNESS_LIB = fileURLToPath(new URL('../../src/runtime/languages/python/runner/lib/', import.meta.url));

/** The Python runner harness against real sandboxed runners (docs/compatibility.md §4, templates/README.md). */
describe('python runner harness', () => {
  /** src/<name>.py = code, with requirements.txt and src/__init__.py. */
  const sourceFiles = (name: string, code: string) => ({
    'algorithmia.conf': JSON.stringify({ username: 'user', algoname: name, language: 'python3' }),
    'requirements.txt': '# no dependencies\n',
    'src/__init__.py': '',
    [`src/${name}.py`]: code,
  });
  const { hello, srv, adHoc, start, tempDir } = scriptRunnerSuite({
    language: 'python',
    owner: 'py',
    sourceFiles,
    nullKind: 'NoneType',
    bytesAs: 'bytes',
    load: { what: 'load()', marker: 'load() ran', loads: { loads: 1, state: { prefix: 'hello' } } },
    raise: { what: 'an exception', trace: [/Hello\.py", line \d+, in probe/, /ValueError: boom/], harnessFrames: /runner|_pipe\.py/ },
    inputErrorTrace: /InputError: give me a name/,
    unwritable: { probe: 'nan', what: 'NaN' },
    badInputs: [],
    stdin: true,
    failingLoad: {
      what: 'load() raising',
      code: [
        'def load():',
        '    raise RuntimeError("model file missing")',
        '',
        '',
        'def apply(input):',
        '    return "unreachable"',
        '',
      ].join('\n'),
      message: /load\(\) raised RuntimeError: model file missing/,
      trace: /LoadFails\.py", line 2, in load/,
    },
    template: false,
  });
  const servers: http.Server[] = [];

  /** Builds an ad hoc algorithm (plus an empty .adk if asked) and starts runners for it, optionally with extra env and mounts. */
  async function startAdHoc(owner: string, name: string, code: string, opts: { adk?: boolean; runners?: RunnerExtras[] } = {}) {
    const f = await adHoc(name, { ...sourceFiles(name, code), ...(opts.adk ? { '.adk': '' } : {}) });
    const { build } = await buildFixture(srv(), f, owner);
    const started: RunnerProcess[] = [];
    for (const extras of opts.runners ?? [{}]) started.push(await start(f, build, extras));
    return started;
  }

  after(async () => {
    for (const s of servers) await new Promise((resolve) => s.close(resolve));
  });

  test('a large print (300 kB) is the stdout of that call, whole', async () => {
    const big = 'x'.repeat(300_000);
    const printed = await hello().call({ content_type: 'json', data: { probe: 'print', arg: big } }, CALL_MS);
    assert.equal(printed.stdout.length, big.length);
  });

  // The harness ends each call's output with its output mark on both streams, through its own
  // copies of fds 1 and 2: output written straight to the fds, on both streams, or after the
  // algorithm pointed its own fd 1 elsewhere must still land in its own call, also when the next
  // call was written before this one was answered.
  test('output written to fds 1 and 2 just before the response is that call only, even after fd 1 is redirected', async () => {
    const code = [
      'import os',
      '',
      '',
      'def apply(input):',
      '    if input == "fds":',
      '        os.write(1, b"out ")',
      '        os.write(2, b"err")',
      '        return "wrote"',
      '    if input == "mute":',
      '        null = os.open(os.devnull, os.O_WRONLY)',
      '        os.dup2(null, 1)',
      '        os.close(null)',
      '        print("lost", flush=True)',
      '        os.write(2, b"still here")',
      '        return "muted"',
      '    return "quiet"',
      '',
    ].join('\n');
    const [runner] = await startAdHoc('py_fds', 'Fds', code);
    const sorted = (s: string) => [...s].sort().join('');
    for (let i = 0; i < 25; i++) {
      const wrote = await runner!.call({ content_type: 'text', data: 'fds' }, CALL_MS);
      assert.deepEqual(wrote.response, { result: 'wrote', metadata: { content_type: 'text' } });
      // Two pipes: the order between them is not kept, the bytes are.
      assert.equal(sorted(wrote.stdout), sorted('out err'));
      assert.equal((await runner!.call({ content_type: 'text', data: 'quiet' }, CALL_MS)).stdout, '');
    }
    const fds = {
      request: { content_type: 'text' as const, data: 'fds' },
      check: (o: CallOutcome) => assert.equal(sorted(o.stdout), sorted('out err')),
    };
    const quiet = { request: { content_type: 'text' as const, data: 'quiet' }, check: (o: CallOutcome) => assert.equal(o.stdout, '') };
    await checkBackToBack(
      runner!,
      Array.from({ length: 50 }, (_, i) => (i % 2 ? quiet : fds)),
    );
    await checkBackToBack(
      runner!,
      Array.from({ length: 50 }, () => fds),
    );
    const muted = await runner!.call({ content_type: 'text', data: 'mute' }, CALL_MS);
    assert.deepEqual([muted.response.result, muted.stdout], ['muted', 'still here']);
    for (let i = 0; i < 5; i++) {
      assert.equal((await runner!.call({ content_type: 'text', data: 'fds' }, CALL_MS)).stdout, 'err');
      assert.equal((await runner!.call({ content_type: 'text', data: 'quiet' }, CALL_MS)).stdout, '');
    }
  });

  test('packages from requirements.txt import: the runner uses the venv of the dependency layer', async () => {
    const { response } = await hello().call({ content_type: 'json', data: { probe: 'six' } }, CALL_MS);
    assert.deepEqual(response, { result: '1.17.0', metadata: { content_type: 'text' } });
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
    const dir = await tempDir('algohost-py-adk-local-');
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

  test('the response FIFO stays open between calls, and an algorithm closing it still gets every answer', async () => {
    const code = [
      'import os',
      '',
      '',
      'def fifo_fds():',
      '    fifo = os.readlink("/proc/self/fd/3")',
      '    found = []',
      '    for name in os.listdir("/proc/self/fd"):',
      '        try:',
      '            if int(name) != 3 and os.readlink("/proc/self/fd/" + name) == fifo:',
      '                found.append(int(name))',
      '        except OSError:',
      '            pass',
      '    return found',
      '',
      '',
      'def apply(input):',
      '    if input == "close":',
      '        for fd in fifo_fds():',
      '            os.close(fd)',
      '        return "closed"',
      '    return fifo_fds()',
      '',
    ].join('\n');
    const [runner] = await startAdHoc('py_fifo', 'KeepsFifo', code);
    await checkResponseFifoKept(runner!);
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

  test('a call written behind another: its timeout starts when it begins; if the runner dies first it never began', async () => {
    const code = [
      'import sys',
      'import time',
      '',
      '',
      'def apply(input):',
      '    if input == "slow":',
      '        time.sleep(1.5)',
      '        return "slept"',
      '    if input == "hang":',
      '        time.sleep(60)',
      '    if input == "exit":',
      '        sys.exit(3)',
      '    if input == "huge":',
      '        return "x" * 3000',
      '    if input == "giant":',
      '        return "x" * 10000',
      '    if input == "garbage":',
      '        with open("/tmp/algoout", "w") as fifo:',
      '            fifo.write("not a response\\n")',
      '        return "written"',
      '    print("ran " + input, end="")',
      '    return "ran " + input',
      '',
    ].join('\n');
    const [runner] = await startAdHoc('py_behind', 'Behind', code);
    assert.equal(runner!.pipelines, true);
    const notStarted = (err: unknown) => err instanceof CallNotStarted;

    // Behind a 1.5 s call, calls with a 1 s timeout still run: their time counts from when each began.
    const [slow, next, third] = await Promise.all([
      runner!.call({ content_type: 'text', data: 'slow' }, CALL_MS),
      runner!.call({ content_type: 'text', data: 'a' }, 1000),
      runner!.call({ content_type: 'text', data: 'a2' }, 1000),
    ]);
    assert.deepEqual([slow.response.result, slow.stdout, slow.waitedMs], ['slept', '', 0]);
    assert.deepEqual([next.response.result, next.stdout], ['ran a', 'ran a']);
    assert.deepEqual([third.response.result, third.stdout], ['ran a2', 'ran a2']);
    assert.ok(next.waitedMs! > 0, `waited ${next.waitedMs} ms`);
    assert.ok(third.waitedMs! >= next.waitedMs!, `waited ${third.waitedMs} ms, after ${next.waitedMs} ms`);

    // A response refused for its size fails that call only; the one behind it runs.
    const refusing = await startAdHoc('py_behind2', 'Behind', code).then(([r]) => r!);
    (refusing.spec as { outputLimitBytes: number }).outputLimitBytes = 2000;
    const [huge, after] = await Promise.allSettled([
      refusing.call({ content_type: 'text', data: 'huge' }, CALL_MS),
      refusing.call({ content_type: 'text', data: 'b' }, CALL_MS),
    ]);
    assert.ok(huge.status === 'rejected' && huge.reason instanceof RunnerFailure && huge.reason.errorType === 'TooLargeError');
    assert.ok(after.status === 'fulfilled');
    assert.deepEqual([after.value.response.result, after.value.stdout], ['ran b', 'ran b']);

    // The running call times out, exits or passes 1.4 × the output cap: the runner dies, and the
    // calls behind it never began.
    for (const [input, timeoutMs, errorType] of [
      ['hang', 500, 'TimeoutError'],
      ['exit', CALL_MS, 'SystemExit'],
      ['giant', CALL_MS, 'TooLargeError'],
    ] as const) {
      const fresh = await startAdHoc(`py_behind_${input}`, 'Behind', code).then(([r]) => r!);
      (fresh.spec as { outputLimitBytes: number }).outputLimitBytes = 2000;
      const first = fresh.call({ content_type: 'text', data: input }, timeoutMs);
      const behind = fresh.call({ content_type: 'text', data: 'c' }, CALL_MS);
      const further = fresh.call({ content_type: 'text', data: 'e' }, CALL_MS);
      await assert.rejects(first, (err: unknown) => err instanceof RunnerFailure && err.errorType === errorType);
      await assert.rejects(behind, notStarted);
      await assert.rejects(further, notStarted);
      assert.equal(fresh.alive, false);
    }

    // User code writes a line that is not a response to the response channel: that call fails,
    // and so do those behind it (which line answers which call can no longer be told), never
    // taking another call's answer.
    const writing = await startAdHoc('py_behind_garbage', 'Behind', code).then(([r]) => r!);
    const [garbage, ...behindGarbage] = await Promise.allSettled([
      writing.call({ content_type: 'text', data: 'garbage' }, CALL_MS),
      writing.call({ content_type: 'text', data: 'd' }, CALL_MS),
      writing.call({ content_type: 'text', data: 'f' }, CALL_MS),
    ]);
    assert.ok(garbage.status === 'rejected' && /not JSON/.test(String(garbage.reason)), String(garbage.status));
    for (const b of behindGarbage)
      assert.ok(b.status === 'rejected' && /could no longer be matched/.test(String(b.reason)), String(b.status));
    assert.equal(writing.alive, false);
  });

  test('Algorithmia.client() calls other algorithms over $ALGOHOST_API_SOCKET; without a key it asks for pipeline_enabled', async () => {
    const key = 'simTestKeyForThePythonClnt1';
    const sockDir = await tempDir('algohost-py-api-');
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
