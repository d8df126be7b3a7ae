/**
 * Issue 36, item 16: a call key reads and writes all of the caller's hosted data while the call
 * runs (by design: it is how an algorithm works on its caller's files). A caller who does not
 * want an algorithm to have that calls it with a key without read_data and write_data: the
 * call key then holds neither. Played with mallory's public pipeline algorithm, which takes
 * the call key from its environment and tries alice's hosted data over the API socket.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { createAndBuild, writePythonAlgorithm } from '../support/algorithms.js';
import { PYTHON_API_REQUEST } from '../support/api-socket-python.js';
import { createUser, type TestUser } from '../support/fixtures.js';
import { client, request, type Client } from '../support/http.js';
import { DATABASES, makeTempDir, startTestServer, type TestServer } from '../support/server.js';

/** Reports each answer's status and the start of its body; the algorithm's own spaces too. */
const MALLORY_ALGORITHM = String.raw`
import json
${PYTHON_API_REQUEST}

def request(method, path, body=None):
    if body is None:
        return api_request(method, path)
    return api_request(method, path, body=body.encode(), content_type="application/octet-stream")

def apply(input):
    victim = input["victim"]
    return {
        "read_by_name": request("GET", "/v1/data/%s/secrets/file.txt" % victim),
        "read_my": request("GET", "/v1/data/.my/secrets/file.txt"),
        "list_my": request("GET", "/v1/data/.my"),
        "write_my": request("PUT", "/v1/data/.my/secrets/planted.txt", "mallory was here"),
        "delete_my": request("DELETE", "/v1/data/.my/secrets/file.txt"),
        "whoami": request("GET", "/v1/auth/whoami"),
        "algo_write": request("PUT", "/v1/data/.algo/temp/scratch.txt", "scratch"),
        "algo_read": request("GET", "/v1/data/.algo/temp/scratch.txt"),
        "session_write": request("PUT", "/v1/data/.session/scratch.txt", "session"),
        "session_read": request("GET", "/v1/data/.session/scratch.txt"),
    }
`;

for (const database of DATABASES) {
  describe(`a caller withholds its hosted data from the algorithm it calls (${database})`, () => {
    let srv: TestServer;
    let api: Client;
    let alice: TestUser;
    let mallory: TestUser;
    let callOnlyKey: string;
    const callMallory = (key: string) =>
      request<{ result: Record<string, { status: number; body: string }> }>(srv.url, 'POST', '/v1/algo/mallory/Reader/1.0.0', {
        key,
        body: { victim: 'alice' },
      });

    before(async () => {
      srv = await startTestServer({ database });
      api = client(srv.url);
      alice = await createUser(api, srv.adminKey, 'alice');
      mallory = await createUser(api, srv.adminKey, 'mallory');
      assert.equal((await api.post('/v1/data/alice', { key: alice.key, body: { name: 'secrets', acl: { read: [] } } })).status, 200);
      assert.equal((await api.put('/v1/data/alice/secrets/file.txt', { key: alice.key, raw: 'secret of alice' })).status, 200);
      const made = await api.post('/v1/users/alice/keys', { key: alice.key, body: { capabilities: ['call_algorithms'] } });
      assert.equal(made.status, 200, made.text);
      callOnlyKey = made.body.key as string;
      const tree = await makeTempDir('algohost-mallory-reader-');
      writePythonAlgorithm(tree, 'mallory', 'Reader', MALLORY_ALGORITHM);
      await createAndBuild(srv.url, api, mallory, 'mallory', 'Reader', tree, {
        environment: 'python311',
        settings: { pipeline_enabled: true, algorithm_callability: 'public' },
      });
      await fs.promises.rm(tree, { recursive: true, force: true });
      const published = await api.post('/v1/algorithms/mallory/Reader/versions', {
        key: mallory.key,
        body: { version_info: { version_type: 'major' }, settings: { algorithm_callability: 'public' } },
      });
      assert.equal(published.status, 200, published.text);
    });
    after(() => srv.stop());

    test("called with a key holding only call_algorithms, mallory's algorithm neither reads nor writes alice's data", async () => {
      const res = await callMallory(callOnlyKey);
      assert.equal(res.status, 200, res.text);
      const r = res.body.result;
      for (const [attempt, capability] of [
        ['read_by_name', 'read_data'],
        ['read_my', 'read_data'],
        ['list_my', 'read_data'],
        ['write_my', 'write_data'],
        ['delete_my', 'write_data'],
      ] as const) {
        assert.equal(r[attempt]!.status, 403, `${attempt}: ${JSON.stringify(r[attempt])}`);
        assert.match(
          r[attempt]!.body,
          new RegExp(`key of an algorithm call may not do this: it lacks the ${capability} capability`),
          attempt,
        );
        assert.doesNotMatch(r[attempt]!.body, /secret of alice/);
      }
      // The call key says so itself.
      assert.equal(r.whoami!.status, 200, JSON.stringify(r.whoami));
      assert.match(r.whoami!.body, /"capabilities":\["call_algorithms"\]/);
      // The algorithm's own space and the request's session need no capability: it still works.
      for (const own of ['algo_write', 'session_write']) assert.equal(r[own]!.status, 200, `${own}: ${JSON.stringify(r[own])}`);
      assert.deepEqual([r.algo_read!.status, r.algo_read!.body], [200, 'scratch']);
      assert.deepEqual([r.session_read!.status, r.session_read!.body], [200, 'session']);
      // alice's data is as she left it, and she still reads her own file.
      assert.equal((await api.get('/v1/data/alice/secrets/file.txt', { key: alice.key })).text, 'secret of alice');
      const listing = await api.get('/v1/data/alice/secrets', { key: alice.key });
      assert.deepEqual(
        listing.body.files.map((f: { filename: string }) => f.filename),
        ['file.txt'],
      );
    });

    test('an async call keeps the restriction: the job runs later with the same call-only capabilities', async () => {
      const started = await request<{ request_id: string }>(srv.url, 'POST', '/v1/algo/mallory/Reader/1.0.0?output=void', {
        key: callOnlyKey,
        body: { victim: 'alice' },
      });
      assert.equal(started.status, 200, started.text);
      let state: { status: string; result?: Record<string, { status: number; body: string }> } = { status: 'queued' };
      for (let i = 0; i < 300 && state.status !== 'completed'; i++) {
        await new Promise((r) => setTimeout(r, 100));
        state = (await api.get(`/v1/algo/requests/${started.body.request_id}`, { key: callOnlyKey })).body;
      }
      assert.equal(state.status, 'completed', JSON.stringify(state));
      for (const attempt of ['read_my', 'write_my', 'delete_my']) assert.equal(state.result![attempt]!.status, 403, attempt);
      assert.equal((await api.get('/v1/data/alice/secrets/file.txt', { key: alice.key })).text, 'secret of alice');
    });

    test('called with a full key (or a session), the same algorithm reads and writes the caller’s data, as documented', async () => {
      const res = await callMallory(alice.key);
      assert.equal(res.status, 200, res.text);
      const r = res.body.result;
      assert.deepEqual([r.read_my!.status, r.read_my!.body], [200, 'secret of alice']);
      assert.equal(r.write_my!.status, 200, JSON.stringify(r.write_my));
      assert.equal((await api.get('/v1/data/alice/secrets/planted.txt', { key: alice.key })).text, 'mallory was here');
      // Put back as it was for alice.
      assert.equal((await api.put('/v1/data/alice/secrets/file.txt', { key: alice.key, raw: 'secret of alice' })).status, 200);
      assert.equal((await api.delete('/v1/data/alice/secrets/planted.txt', { key: alice.key })).status, 200);
    });
  });
}
