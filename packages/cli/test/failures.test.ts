/**
 * How `algo` fails: bad flags and arguments (usage errors), a wrong key, an unreachable server,
 * and a server that lacks an endpoint. Every failure is a non-zero exit and one line on stderr.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createUser, type TestUser } from '../../server/test/support/fixtures.js';
import { client } from '../../server/test/support/http.js';
import { makeTempDir, startTestServer, type TestServer } from '../../server/test/support/server.js';
import { algo, assertOk, assertOneLineFailure, closedPort, makeHome } from './support/run-cli.js';

describe('algo failures', () => {
  let srv: TestServer;
  let alice: TestUser;
  let home: string;
  const run = (args: string[]) => algo(args, { home });

  before(async () => {
    srv = await startTestServer();
    alice = await createUser(client(srv.url), srv.adminKey, 'alice');
    home = await makeHome();
    assertOk(await run(['auth', '--server', srv.url, '--key', alice.key, '--username', 'alice']), 'auth');
  });
  after(async () => {
    await srv.stop();
    await fs.promises.rm(home, { recursive: true, force: true });
  });

  test('bad flags, missing arguments and unknown commands: exit 2 and one line', async () => {
    const cases: [string[], RegExp][] = [
      [['languages', '--bogus'], /unknown option '--bogus'/],
      [['languages', '--jsn'], /unknown option '--jsn' \(Did you mean --json\?\)/],
      [['environment'], /missing required argument 'language'/],
      [['template', 'only-one'], /missing required argument 'dir'/],
      [['frobnicate'], /unknown command 'frobnicate'/],
      [['builds', 'alice', 'Hello', '--limit', 'many'], /option '--limit <n>' argument 'many' is invalid/],
      [['run', 'alice/Hello', '--timeout', '-3', '-d', '1'], /--timeout/],
      [['languages', 'extra'], /too many arguments/],
      [['cp', 'only-one'], /give at least one source and a destination/],
      [['publish', 'alice/Hello', '--type', 'huge'], /expected one of major, minor, revision/],
    ];
    for (const [args, pattern] of cases) {
      const r = await run(args);
      assertOneLineFailure(r, pattern);
      if (!args.includes('cp')) assert.equal(r.code, 2, `usage errors exit 2: algo ${args.join(' ')}`);
    }
  });

  test('a wrong key: non-zero and one line saying the server refused it', async () => {
    fs.writeFileSync(
      path.join(home, '.algorithmia', 'config'),
      fs.readFileSync(path.join(home, '.algorithmia', 'config'), 'utf8') +
        `\n[profiles.wrong]\napi_key = "sim${'x'.repeat(25)}"\napi_server = "${srv.url}"\nca_cert = ""\nbearer_token = ""\nusername = "alice"\n`,
    );
    for (const args of [['languages'], ['builds', 'alice', 'Hello'], ['create', 'alice/X', '--language', 'python3'], ['keys']]) {
      assertOneLineFailure(
        await run([...args, '--profile', 'wrong']),
        /the server refused the credentials of profile "wrong": .* \(run "algo auth --profile wrong"\)/,
      );
    }
    assertOneLineFailure(await run(['clone', 'alice/X', '--profile', 'wrong']), /git clone failed/);
  });

  test('an unreachable server (connection refused): non-zero and one line', async () => {
    const port = await closedPort();
    assertOk(
      await run(['auth', '--profile', 'down', '--server', `http://127.0.0.1:${port}`, '--key', alice.key, '--no-check']),
      'auth --no-check',
    );
    for (const args of [
      ['languages'],
      ['environment', 'python3'],
      ['builds', 'alice', 'Hello', '--follow'],
      ['run', 'alice/Hello', '-d', '1'],
      ['ls'],
    ]) {
      assertOneLineFailure(
        await run([...args, '--profile', 'down']),
        new RegExp(`cannot reach http://127\\.0\\.0\\.1:${port}: connection refused`),
      );
    }
    assertOneLineFailure(
      await run(['auth', '--profile', 'down2', '--server', `http://127.0.0.1:${port}`, '--key', alice.key]),
      /connection refused \(nothing was saved/,
    );
  });
});

/**
 * A stand-in for an older algohost without the call, version and data endpoints: it answers
 * every request the way algohost answers a route it does not have (404, code 2015, "no such
 * endpoint"). Against the real server these commands work once the endpoints land, so this is
 * the one place their "not supported yet" message can be checked without depending on that.
 */
describe('algo against a server without an endpoint', () => {
  let stub: http.Server;
  let url: string;
  let home: string;
  let work: string;

  before(async () => {
    stub = http.createServer((req, res) => {
      const message = `no such endpoint: ${req.method} ${(req.url ?? '').split('?')[0]}`;
      res.writeHead(404, { 'content-type': 'application/json; charset=utf-8', 'x-error-message': message });
      res.end(req.method === 'HEAD' ? undefined : JSON.stringify({ error: { code: 2015, message } }));
    });
    await new Promise<void>((resolve) => stub.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(stub.address() as { port: number }).port}`;
    home = await makeHome();
    work = await makeTempDir('algo-cli-stub-');
    fs.writeFileSync(path.join(work, 'local.txt'), 'hello');
    assertOk(await algo(['auth', '--server', url, '--key', `sim${'A'.repeat(25)}`, '--username', 'alice', '--no-check'], { home }), 'auth');
  });
  after(async () => {
    await new Promise((resolve) => stub.close(resolve));
    await fs.promises.rm(home, { recursive: true, force: true });
    await fs.promises.rm(work, { recursive: true, force: true });
  });

  test('calls, versions and hosted data say that the server does not support them yet', async () => {
    const cases: [string[], string, string][] = [
      [['run', 'alice/Hello', '-d', '"x"'], 'calling algorithms', 'POST /v1/algo/alice/Hello'],
      [['publish', 'alice/Hello', '--type', 'major'], 'publishing versions', 'POST /v1/algorithms/alice/Hello/versions'],
      [['versions', 'alice/Hello'], 'versions', 'GET /v1/algorithms/alice/Hello/versions'],
      [['ls'], 'hosted data', 'GET /v1/data/.my'],
      [['ls', 'data://alice/photos'], 'hosted data', 'GET /v1/data/alice/photos'],
      [['mkdir', 'data://.my/photos'], 'hosted data', 'POST /v1/data/.my'],
      [['rmdir', 'data://.my/photos'], 'hosted data', 'HEAD /v1/data/.my/photos'],
      [['rm', 'data://.my/photos/a.jpg'], 'hosted data', 'HEAD /v1/data/.my/photos/a.jpg'],
      [['cat', 'data://.my/photos/a.txt'], 'hosted data', 'GET /v1/data/.my/photos/a.txt'],
      [['cp', path.join(work, 'local.txt'), 'data://.my/photos/'], 'hosted data', 'PUT /v1/data/.my/photos/local.txt'],
      [['cp', 'data://.my/photos/a.txt', work], 'hosted data', 'HEAD /v1/data/.my/photos/a.txt'],
    ];
    for (const [args, feature, request] of cases) {
      const line = assertOneLineFailure(await algo(args, { home }));
      assert.equal(line, `algo: this server does not support ${feature} yet: ${request} answered 404 "no such endpoint"`, args.join(' '));
    }
  });
});
