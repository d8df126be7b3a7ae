/**
 * What an algorithm prints is its members' to see (metadata.stdout needs a member and
 * `stdout=true`): it must not reach another caller through an error message either. The attack:
 * bob calls alice's public algorithm with an input that makes its process exit, hoping the
 * SystemExit message carries the end of what the runner printed before, which alice's own calls
 * (her inputs, logged to stderr) wrote. And a runner that exits while loading must not show a
 * non-member what it printed (paths, tracebacks of closed source). One node on SQLite: this is
 * the runner and the call service, not the database.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { createAndBuild, writePythonAlgorithm } from '../support/algorithms.js';
import { createUser, type TestUser } from '../support/fixtures.js';
import { client, request, type Client } from '../support/http.js';
import { makeTempDir, startTestServer, type TestServer } from '../support/server.js';

const SECRET = 'alice-secret-4711';

const LOGGER = String.raw`
import os, sys

def apply(input):
    if input == "exit":
        print("bye from the exit call", file=sys.stderr, flush=True)
        sys.exit(3)
    print("logged: " + input, file=sys.stderr, flush=True)
    print("seen " + input, flush=True)
    return "ok"
`;

/** Exits while it is imported, after printing what a closed-source algorithm would not show. */
const BROKEN = String.raw`
import os, sys
print("loading weights from /app/src/private_model.bin", file=sys.stderr, flush=True)
os._exit(5)

def apply(input):
    return "unreachable"
`;

describe("a call's output reaches no other caller, not even through an error message", () => {
  let srv: TestServer;
  let api: Client;
  let alice: TestUser;
  let bob: TestUser;
  const call = async (who: TestUser, algorithm: string, input: string) => {
    const res = await request(srv.url, 'POST', `/v1/algo/alice/${algorithm}/1.0.0`, { key: who.key, body: input });
    assert.equal(res.status, 200, res.text);
    return res.body as { result?: string; error?: { message: string; error_type: string } };
  };

  before(async () => {
    // One runner per algorithm: every call below goes to the same process while it lives.
    srv = await startTestServer({ env: { ALGOHOST_RUNNERS_PER_ALGORITHM: '1' } });
    api = client(srv.url);
    alice = await createUser(api, srv.adminKey, 'alice');
    bob = await createUser(api, srv.adminKey, 'bob');
    for (const [name, source] of [
      ['Logger', LOGGER],
      ['Broken', BROKEN],
    ] as const) {
      const tree = await makeTempDir('algohost-output-');
      writePythonAlgorithm(tree, 'alice', name, source);
      await createAndBuild(srv.url, api, alice, 'alice', name, tree, { environment: 'python311' });
      await fs.promises.rm(tree, { recursive: true, force: true });
      const published = await api.post(`/v1/algorithms/alice/${name}/versions`, {
        key: alice.key,
        body: { version_info: { version_type: 'major' }, settings: { algorithm_callability: 'public' } },
      });
      assert.equal(published.status, 200, published.text);
    }
  });
  after(() => srv?.stop());

  test("bob's call that ends the runner gets SystemExit without a byte of what alice's calls printed", async () => {
    assert.equal((await call(alice, 'Logger', SECRET)).result, 'ok');
    const bobs = await call(bob, 'Logger', 'exit');
    assert.equal(bobs.error?.error_type, 'SystemExit', JSON.stringify(bobs));
    assert.match(bobs.error.message, /exited during the call \(exit code 3\)/);
    assert.doesNotMatch(bobs.error.message, /alice-secret|logged|seen/, 'no output of an earlier call');
    assert.doesNotMatch(bobs.error.message, /bye from/, "not even the call's own output: bob is no member");
    // The runner is replaced; the algorithm still answers bob.
    assert.equal((await call(bob, 'Logger', 'hi')).result, 'ok');
  });

  test("the owner sees what her failing call printed, and only that call's output", async () => {
    assert.equal((await call(alice, 'Logger', SECRET)).result, 'ok');
    const own = await call(alice, 'Logger', 'exit');
    assert.equal(own.error?.error_type, 'SystemExit', JSON.stringify(own));
    assert.match(own.error.message, /exited during the call \(exit code 3\): bye from the exit call/);
    assert.doesNotMatch(own.error.message, /alice-secret|logged|seen/, "the runner's earlier output is other calls'");
  });

  test('a runner that exits while loading shows what it printed to the owner only', async () => {
    const bobs = await call(bob, 'Broken', 'x');
    assert.equal(bobs.error?.error_type, 'LoadingError', JSON.stringify(bobs));
    assert.match(bobs.error.message, /exited while loading \(exit code 5\)/);
    assert.doesNotMatch(bobs.error.message, /private_model/);
    const own = await call(alice, 'Broken', 'x');
    assert.equal(own.error?.error_type, 'LoadingError', JSON.stringify(own));
    assert.match(own.error.message, /exited while loading \(exit code 5\): loading weights from \/app\/src\/private_model\.bin/);
  });
});
