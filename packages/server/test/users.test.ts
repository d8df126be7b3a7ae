import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { client, type Client } from './support/http.js';
import { createUser } from './support/fixtures.js';
import { DATABASES, startTestServer, type TestServer } from './support/server.js';

for (const database of DATABASES) {
  describe(`users (${database})`, () => {
    let srv: TestServer;
    let api: Client;
    before(async () => {
      srv = await startTestServer({ database });
      api = client(srv.url);
    });
    after(() => srv.stop());

    test('an admin creates a user and looks it up in the shape of spec endpoint 6', async () => {
      const res = await api.post('/v1/users', {
        key: srv.adminKey,
        body: { username: 'ada', email: 'ada@example.test', fullname: 'Ada L', company_name: 'Engines', company_role: 'Engineer' },
      });
      assert.equal(res.status, 200, res.text);
      const got = await api.get('/v1/users/ada', { key: srv.adminKey });
      assert.equal(got.status, 200);
      assert.match(got.body.id, /^[0-9a-f-]{36}$/);
      assert.deepEqual(
        { ...got.body, id: undefined },
        {
          id: undefined,
          username: 'ada',
          email: 'ada@example.test',
          fullname: 'Ada L',
          company_name: 'Engines',
          company_role: 'Engineer',
          self_link: `${srv.url}/v1/users/ada`,
          resource_type: 'user',
        },
      );
    });

    test('a standard key may not look up users (403) and no key is 401', async () => {
      const bob = await createUser(api, srv.adminKey, 'bob');
      const forbidden = await api.get('/v1/users/bob', { key: bob.key });
      assert.equal(forbidden.status, 403);
      assert.equal(forbidden.body.error.code, 2001);
      assert.ok(forbidden.headers.get('x-error-message'));
      const anonymous = await api.get('/v1/users/bob');
      assert.equal(anonymous.status, 401);
      const wrong = await api.get('/v1/users/bob', { key: 'simAAAAAAAAAAAAAAAAAAAAAAAAA' });
      assert.equal(wrong.status, 401);
      assert.equal(wrong.body.error.code, 2002);
    });
  });
}
