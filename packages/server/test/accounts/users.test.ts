import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Client } from '../support/http.js';
import { assertError, checkedClient } from '../support/assertions.js';
import { createUser } from '../support/fixtures.js';
import { DATABASES, startTestServer, type TestServer } from '../support/server.js';

const BAD_USERNAMES: [string, RegExp][] = [
  ['1abc', /start with a letter/],
  ['_abc', /start with a letter/],
  ['has-dash', /letters, digits and underscores/],
  ['has space', /letters, digits and underscores/],
  ['dot.ted', /letters, digits and underscores/],
  ['ümlaut', /letters, digits and underscores/],
  ['', /username must match pattern/],
  ['a'.repeat(31), /username must NOT have more than 30 characters/],
];

for (const database of DATABASES) {
  describe(`users (${database})`, () => {
    let srv: TestServer;
    let api: Client;
    before(async () => {
      srv = await startTestServer({ database });
      api = checkedClient(srv.url);
    });
    after(() => srv.stop());

    test('an admin creates a user and looks it up in the shape of docs/compatibility.md §9.2 endpoint 6', async () => {
      const res = await api.post('/v1/users', {
        key: srv.adminKey,
        body: { username: 'ada', email: 'ada@example.test', fullname: 'Ada L', company_name: 'Engines', company_role: 'Engineer' },
      });
      assert.equal(res.status, 200, res.text);
      const got = await api.get('/v1/users/ada', { key: srv.adminKey });
      assert.equal(got.status, 200);
      assert.match(got.body.id, /^[0-9a-f-]{36}$/);
      assert.equal(got.body.id, res.body.id);
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
      assertError(forbidden, 403, 2001);
      const anonymous = await api.get('/v1/users/bob');
      assertError(anonymous, 401);
      const wrong = await api.get('/v1/users/bob', { key: 'simAAAAAAAAAAAAAAAAAAAAAAAAA' });
      assertError(wrong, 401, 2002);
    });

    test('looking up an unknown user is 404 with code 3000', async () => {
      assertError(await api.get('/v1/users/nobody_here', { key: srv.adminKey }), 404, 3000);
    });

    test('only an admin may create users: 403 with a standard key, 401 without or with a wrong key', async () => {
      const carol = await createUser(api, srv.adminKey, 'carol');
      const body = { username: 'mallory', email: 'mallory@example.test' };
      assertError(await api.post('/v1/users', { key: carol.key, body }), 403, 2001);
      assertError(await api.post('/v1/users', { body }), 401);
      assertError(await api.post('/v1/users', { key: 'simWRONGWRONGWRONGWRONGWRONG', body }), 401, 2002);
      assertError(await api.post('/v1/users', { auth: 'simWRONGWRONGWRONGWRONGWRONG', body }), 401, 2002);
      // None of the refused attempts created the account.
      assertError(await api.get('/v1/users/mallory', { key: srv.adminKey }), 404, 3000);
    });

    test('usernames must match ^[A-Za-z][A-Za-z0-9_]*$ and be at most 30 characters', async () => {
      for (const [username, problem] of BAD_USERNAMES) {
        const res = await api.post('/v1/users', { key: srv.adminKey, body: { username, email: 'bad@example.test' } });
        assertError(res, 400);
        assert.match(res.body.error.message, problem, `message for ${JSON.stringify(username)}: ${res.body.error.message}`);
        assert.match(res.body.error.message, /username/);
      }
      const missing = await api.post('/v1/users', { key: srv.adminKey, body: { email: 'noname@example.test' } });
      assertError(missing, 400);
      assert.match(missing.body.error.message, /username/);

      const longest = `B${'x'.repeat(28)}9`;
      assert.equal(longest.length, 30);
      const ok = await api.post('/v1/users', { key: srv.adminKey, body: { username: longest, email: 'longest@example.test' } });
      assert.equal(ok.status, 200, ok.text);
      assert.equal(ok.body.username, longest);
      const mixed = await api.post('/v1/users', { key: srv.adminKey, body: { username: 'Z_1', email: 'z1@example.test' } });
      assert.equal(mixed.status, 200, mixed.text);
    });

    test('a taken username is 409 code 3003, regardless of case', async () => {
      await createUser(api, srv.adminKey, 'dupe');
      for (const username of ['dupe', 'DUPE', 'Dupe']) {
        const res = await api.post('/v1/users', { key: srv.adminKey, body: { username, email: `${username}2@example.test` } });
        assertError(res, 409, 3003);
      }
      const got = await api.get('/v1/users/DuPe', { key: srv.adminKey });
      assert.equal(got.status, 200);
      assert.equal(got.body.username, 'dupe');
      assert.equal(got.body.email, 'dupe@example.test');
    });

    test('an e-mail address in use is 409 code 3004', async () => {
      await createUser(api, srv.adminKey, 'mailer');
      const res = await api.post('/v1/users', { key: srv.adminKey, body: { username: 'mailer2', email: 'mailer@example.test' } });
      assertError(res, 409, 3004);
      assertError(await api.get('/v1/users/mailer2', { key: srv.adminKey }), 404, 3000);
    });

    test('an e-mail address is required and must look like one', async () => {
      const missing = await api.post('/v1/users', { key: srv.adminKey, body: { username: 'nomail' } });
      assertError(missing, 400);
      assert.match(missing.body.error.message, /email/);
      const empty = await api.post('/v1/users', { key: srv.adminKey, body: { username: 'nomail', email: '' } });
      assertError(empty, 400);
      const bad = await api.post('/v1/users', { key: srv.adminKey, body: { username: 'nomail', email: 'not an address' } });
      assertError(bad, 400);
      assert.match(bad.body.error.message, /email/);
      assertError(await api.get('/v1/users/nomail', { key: srv.adminKey }), 404, 3000);
    });

    test('the user list is paged with limit, marker and next_link; both are null on the last page', async () => {
      for (const name of ['pg_a', 'pg_b', 'pg_c', 'pg_d', 'pg_e']) await createUser(api, srv.adminKey, name);

      const all = await api.get('/v1/users?limit=1000', { key: srv.adminKey });
      assert.equal(all.status, 200, all.text);
      assert.equal(all.body.marker, null);
      assert.equal(all.body.next_link, null);
      const everyone: string[] = all.body.results.map((u: { username: string }) => u.username);
      for (const name of ['admin', 'pg_a', 'pg_b', 'pg_c', 'pg_d', 'pg_e']) assert.ok(everyone.includes(name), `${name} is listed`);
      assert.deepEqual(
        everyone,
        [...everyone].sort((a, b) => (a.toLowerCase() < b.toLowerCase() ? -1 : 1)),
        'sorted by name',
      );
      for (const u of all.body.results) assert.equal(u.resource_type, 'user');

      // Walk the pages two at a time by following next_link as a client would.
      const seen: string[] = [];
      let path: string | null = '/v1/users?limit=2';
      let pages = 0;
      while (path !== null) {
        const page: Awaited<ReturnType<Client['get']>> = await api.get(path, { key: srv.adminKey });
        assert.equal(page.status, 200, page.text);
        pages++;
        seen.push(...page.body.results.map((u: { username: string }) => u.username));
        if (page.body.next_link === null) {
          assert.equal(page.body.marker, null);
          assert.ok(page.body.results.length <= 2);
          path = null;
        } else {
          assert.equal(page.body.results.length, 2);
          assert.equal(typeof page.body.marker, 'string');
          const next = new URL(page.body.next_link);
          assert.equal(next.origin, srv.url);
          assert.equal(next.pathname, '/v1/users');
          assert.equal(next.searchParams.get('limit'), '2');
          assert.equal(next.searchParams.get('marker'), page.body.marker);
          path = next.pathname + next.search;
        }
        assert.ok(pages <= everyone.length, 'paging terminates');
      }
      assert.deepEqual(seen, everyone, 'pages hold every user once, in order');

      // The marker alone works too.
      const first = await api.get('/v1/users?limit=1', { key: srv.adminKey });
      const second = await api.get(`/v1/users?limit=1&marker=${encodeURIComponent(first.body.marker)}`, { key: srv.adminKey });
      assert.equal(second.status, 200);
      assert.deepEqual(
        second.body.results.map((u: { username: string }) => u.username),
        [everyone[1]],
      );

      // A standard key may not list users.
      assertError(await api.get('/v1/users', { key: (await createUser(api, srv.adminKey, 'pg_lister')).key }), 403, 2001);
    });

    test('an invalid limit is 400 code 5003 and an invalid marker 400 code 5002', async () => {
      for (const limit of ['0', '-1', '1001', 'abc', '2.5']) {
        assertError(await api.get(`/v1/users?limit=${limit}`, { key: srv.adminKey }), 400, 5003);
      }
      // Any base64url string is a position (domain/pagination.ts); other characters are refused.
      for (const marker of ['not a marker', 'e30=', '%%%', 'W1.0']) {
        assertError(await api.get(`/v1/users?marker=${encodeURIComponent(marker)}`, { key: srv.adminKey }), 400, 5002);
      }
    });

    test('an admin updates anyone, a user themself; omitted fields are kept', async () => {
      await api.post('/v1/users', {
        key: srv.adminKey,
        body: { username: 'upd', email: 'upd@example.test', fullname: 'Up Dated', company_name: 'Co', company_role: 'Dev' },
      });
      const upd = await api.post('/v1/users/upd/keys', { key: srv.adminKey, body: {} });
      const other = await createUser(api, srv.adminKey, 'upd_other');

      const byAdmin = await api.put('/v1/users/upd', { key: srv.adminKey, body: { company_role: 'Lead' } });
      assert.equal(byAdmin.status, 200, byAdmin.text);
      assert.equal(byAdmin.body.company_role, 'Lead');
      assert.equal(byAdmin.body.fullname, 'Up Dated');
      assert.equal(byAdmin.body.company_name, 'Co');
      assert.equal(byAdmin.body.email, 'upd@example.test');

      const bySelf = await api.put('/v1/users/upd', { key: upd.body.key, body: { fullname: 'Self Made', email: 'new@example.test' } });
      assert.equal(bySelf.status, 200, bySelf.text);
      const got = await api.get('/v1/users/upd', { key: srv.adminKey });
      assert.deepEqual(
        { fullname: got.body.fullname, email: got.body.email, company_name: got.body.company_name, company_role: got.body.company_role },
        { fullname: 'Self Made', email: 'new@example.test', company_name: 'Co', company_role: 'Lead' },
      );

      // An empty body changes nothing.
      const noop = await api.put('/v1/users/upd', { key: upd.body.key, body: {} });
      assert.equal(noop.status, 200, noop.text);
      assert.equal(noop.body.fullname, 'Self Made');

      // Someone else is 403, and so is a name that does not exist (names do not leak).
      assertError(await api.put('/v1/users/upd', { key: other.key, body: { fullname: 'Hijack' } }), 403, 2001);
      assertError(await api.put('/v1/users/no_such_user', { key: other.key, body: { fullname: 'X' } }), 403, 2001);
      assert.equal((await api.get('/v1/users/upd', { key: srv.adminKey })).body.fullname, 'Self Made');

      // For an admin an unknown user is 404; e-mail conflicts are 409 3004; usernames are fixed.
      assertError(await api.put('/v1/users/no_such_user', { key: srv.adminKey, body: { fullname: 'X' } }), 404, 3000);
      assertError(await api.put('/v1/users/upd', { key: upd.body.key, body: { email: 'upd_other@example.test' } }), 409, 3004);
      assertError(await api.put('/v1/users/upd', { key: upd.body.key, body: { username: 'renamed' } }), 400);
      assertError(await api.put('/v1/users/upd', { key: upd.body.key, body: { email: 'broken' } }), 400);
      assertError(await api.put('/v1/users/upd', { body: { fullname: 'Anon' } }), 401);
    });

    test('only an admin deletes users; the user, its keys and its algorithms are gone', async () => {
      const doomed = await createUser(api, srv.adminKey, 'doomed');
      const bystander = await createUser(api, srv.adminKey, 'bystander');
      const algo = await api.post('/v1/algorithms/doomed', { key: doomed.key, body: { name: 'Doomed_Algo' } });
      assert.equal(algo.status, 200, algo.text);
      // The key works (and is now known to the node) before the delete.
      assert.equal((await api.get('/v1/algorithms/doomed/Doomed_Algo', { key: doomed.key })).status, 200);

      assertError(await api.delete('/v1/users/doomed', { key: bystander.key }), 403, 2001);
      assertError(await api.delete('/v1/users/doomed', { key: doomed.key }), 403, 2001);
      assertError(await api.delete('/v1/users/doomed'), 401);
      assert.equal((await api.get('/v1/users/doomed', { key: srv.adminKey })).status, 200);

      const del = await api.delete('/v1/users/doomed', { key: srv.adminKey });
      assert.equal(del.status, 204, del.text);
      assert.equal(del.text, '');
      assertError(await api.get('/v1/users/doomed', { key: srv.adminKey }), 404, 3000);
      assertError(await api.delete('/v1/users/doomed', { key: srv.adminKey }), 404, 3000);

      // Its key no longer authenticates, at once.
      assertError(await api.get('/v1/algorithms/doomed/Doomed_Algo', { key: doomed.key }), 401, 2002);
      assertError(await api.post('/v1/algorithms/doomed', { key: doomed.key, body: { name: 'Again' } }), 401, 2002);

      // A new user of the same name starts with nothing.
      const reborn = await createUser(api, srv.adminKey, 'doomed');
      assertError(await api.get('/v1/algorithms/doomed/Doomed_Algo', { key: reborn.key }), 404, 1001);
      const list = await api.get('/v1/algorithms/doomed', { key: reborn.key });
      assert.equal(list.status, 200, list.text);
      assert.deepEqual(list.body.results, []);
      const recreated = await api.post('/v1/algorithms/doomed', { key: reborn.key, body: { name: 'Doomed_Algo' } });
      assert.equal(recreated.status, 200, recreated.text);

      // The other user is untouched.
      assert.equal((await api.get('/v1/users/bystander', { key: srv.adminKey })).status, 200);
    });

    test('malformed JSON is 400 code 2013', async () => {
      for (const raw of ['{"username": ', '{username: "x"}', "{'a': 1}", '{"a": 1}}']) {
        const res = await api.post('/v1/users', { key: srv.adminKey, raw, headers: { 'content-type': 'application/json' } });
        assertError(res, 400, 2013);
      }
      // An empty JSON body counts as no body (docs/compatibility.md §6 sends some requests empty): the schema then refuses it.
      const empty = await api.post('/v1/users', { key: srv.adminKey, raw: '', headers: { 'content-type': 'application/json' } });
      assertError(empty, 400, 2015);
    });

    test('wrong JSON types are 400', async () => {
      const bodies: unknown[] = [
        { username: 5, email: 'five@example.test' },
        { username: 'five', email: 5 },
        { username: 'five', email: 'five@example.test', fullname: ['x'] },
        { username: 'five', email: 'five@example.test', password: 12345678 },
        { username: null, email: 'five@example.test' },
        [],
        'a string',
        42,
        null,
      ];
      for (const body of bodies) {
        const res = await api.post('/v1/users', {
          key: srv.adminKey,
          raw: JSON.stringify(body),
          headers: { 'content-type': 'application/json' },
        });
        assertError(res, 400);
      }
      assertError(await api.put('/v1/users/admin', { key: srv.adminKey, body: { fullname: 7 } }), 400);
      assertError(await api.get('/v1/users/five', { key: srv.adminKey }), 404, 3000);
    });

    test('a body over 1 MiB is 413', async () => {
      const body = { username: 'huge', email: 'huge@example.test', fullname: 'x'.repeat(1024 * 1024 + 16) };
      assertError(await api.post('/v1/users', { key: srv.adminKey, body }), 413);
      assertError(await api.get('/v1/users/huge', { key: srv.adminKey }), 404, 3000);
    });

    test('an unsupported content type is 415', async () => {
      for (const type of ['application/xml', 'application/x-www-form-urlencoded', 'image/png']) {
        const res = await api.post('/v1/users', {
          key: srv.adminKey,
          raw: 'username=ct&email=ct%40example.test',
          headers: { 'content-type': type },
        });
        assertError(res, 415);
      }
      assertError(await api.get('/v1/users/ct', { key: srv.adminKey }), 404, 3000);
    });

    test('an unknown endpoint is a JSON 404', async () => {
      assertError(await api.get('/v1/no/such/thing', { key: srv.adminKey }), 404);
      assertError(await api.get('/v1/no/such/thing'), 404);
    });
  });
}
