import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { type Client } from '../support/http.js';
import { assertError, checkedClient } from '../support/assertions.js';
import { createUser } from '../support/fixtures.js';
import { DATABASES, startTestServer, type TestServer } from '../support/server.js';
import { signJwt } from '../../src/domain/accounts/secrets.js';

const KEY_FORMAT = /^sim[A-Za-z0-9+/]{25}$/;
const ALL_CAPABILITIES = ['manage_algorithms', 'call_algorithms', 'read_data', 'write_data'];

/** Every stored value of the test server's database, as text. */
async function databaseText(srv: TestServer): Promise<string> {
  if (srv.config.databaseUrl) {
    const c = new pg.Client({ connectionString: srv.config.databaseUrl });
    await c.connect();
    try {
      const tables = await c.query<{ table_name: string }>(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'",
      );
      assert.ok(
        tables.rows.some((t) => t.table_name === 'api_keys'),
        'the api_keys table exists',
      );
      let out = '';
      for (const { table_name } of tables.rows) {
        const rows = await c.query<{ row: string }>(`SELECT row_to_json(t)::text AS row FROM "${table_name}" t`);
        out += rows.rows.map((r) => r.row).join('\n');
      }
      return out;
    } finally {
      await c.end();
    }
  }
  const file = path.join(srv.dataDir, 'algohost.sqlite');
  const db = new SQLite(file, { readonly: true, fileMustExist: true });
  let out = '';
  try {
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[];
    assert.ok(
      tables.some((t) => t.name === 'api_keys'),
      'the api_keys table exists',
    );
    for (const { name } of tables) out += JSON.stringify(db.prepare(`SELECT * FROM "${name}"`).all());
  } finally {
    db.close();
  }
  // The raw bytes too: the database file and its write-ahead log.
  for (const f of [file, `${file}-wal`, `${file}-journal`]) {
    if (fs.existsSync(f)) out += fs.readFileSync(f).toString('latin1');
  }
  return out;
}

for (const database of DATABASES) {
  describe(`API keys and authentication (${database})`, () => {
    let srv: TestServer;
    let api: Client;
    before(async () => {
      srv = await startTestServer({ database });
      api = checkedClient(srv.url);
    });
    after(() => srv.stop());

    test('an admin creates keys for anyone, a user for themself, not for someone else (403)', async () => {
      const kim = await createUser(api, srv.adminKey, 'kim');
      const lee = await createUser(api, srv.adminKey, 'lee');

      const byAdmin = await api.post('/v1/users/kim/keys', { key: srv.adminKey, body: {} });
      assert.equal(byAdmin.status, 200, byAdmin.text);
      assert.match(byAdmin.body.id, /^[0-9a-f-]{36}$/);
      assert.equal(byAdmin.body.kind, 'standard');
      assert.deepEqual([...byAdmin.body.capabilities].sort(), [...ALL_CAPABILITIES].sort());
      assert.equal(byAdmin.body.prefix, byAdmin.body.key.slice(0, byAdmin.body.prefix.length));
      assert.ok(byAdmin.body.prefix.length < byAdmin.body.key.length);
      assert.ok(!Number.isNaN(Date.parse(byAdmin.body.created_at)), byAdmin.body.created_at);

      const bySelf = await api.post('/v1/users/kim/keys', { key: kim.key, body: { description: 'laptop' } });
      assert.equal(bySelf.status, 200, bySelf.text);
      assert.equal(bySelf.body.description, 'laptop');
      // Both keys work.
      for (const key of [byAdmin.body.key, bySelf.body.key]) {
        assert.equal((await api.get('/v1/users/kim/keys', { key })).status, 200);
      }

      assertError(await api.post('/v1/users/lee/keys', { key: kim.key, body: {} }), 403, 2001);
      assertError(await api.post('/v1/users/no_such_user/keys', { key: kim.key, body: {} }), 403, 2001);
      assertError(await api.post('/v1/users/no_such_user/keys', { key: srv.adminKey, body: {} }), 404, 3000);
      assertError(await api.post('/v1/users/lee/keys', { body: {} }), 401);
      assertError(await api.get('/v1/users/lee/keys', { key: kim.key }), 403, 2001);
      assertError(await api.delete(`/v1/users/lee/keys/${lee.keyId}`, { key: kim.key }), 403, 2001);
      // Lee's key survived Kim's attempt.
      assert.equal((await api.get('/v1/users/lee/keys', { key: lee.key })).status, 200);
    });

    test('keys are "sim" + 25 characters of [A-Za-z0-9+/], 28 in all, and all different', async () => {
      await createUser(api, srv.adminKey, 'fmt');
      const keys = new Set<string>();
      for (let i = 0; i < 25; i++) {
        const res = await api.post('/v1/users/fmt/keys', { key: srv.adminKey, body: {} });
        assert.equal(res.status, 200, res.text);
        assert.match(res.body.key, KEY_FORMAT);
        assert.equal(res.body.key.length, 28);
        keys.add(res.body.key);
      }
      assert.equal(keys.size, 25);
    });

    test('the key is returned once; the list shows id, kind, capabilities, prefix and created_at but never the key', async () => {
      const ivy = await createUser(api, srv.adminKey, 'ivy');
      const second = await api.post('/v1/users/ivy/keys', { key: ivy.key, body: { capabilities: ['call_algorithms'] } });
      assert.equal(second.status, 200, second.text);

      for (const lister of [ivy.key, srv.adminKey]) {
        const list = await api.get('/v1/users/ivy/keys', { key: lister });
        assert.equal(list.status, 200, list.text);
        assert.ok(!list.text.includes(ivy.key), 'the list does not contain the first key');
        assert.ok(!list.text.includes(second.body.key), 'the list does not contain the second key');
        assert.equal(list.body.results.length, 2);
        for (const k of list.body.results) {
          assert.deepEqual(
            Object.keys(k)
              .filter((f) => f !== 'description')
              .sort(),
            ['capabilities', 'created_at', 'id', 'kind', 'prefix'],
          );
          assert.ok(!('key' in k));
        }
        const listed = list.body.results.find((k: { id: string }) => k.id === second.body.id);
        assert.ok(listed, 'the new key is listed by id');
        assert.deepEqual(listed, {
          id: second.body.id,
          kind: 'standard',
          capabilities: ['call_algorithms'],
          prefix: second.body.prefix,
          created_at: second.body.created_at,
        });
        const first = list.body.results.find((k: { id: string }) => k.id === ivy.keyId);
        assert.ok(first);
        assert.ok(ivy.key.startsWith(first.prefix));
      }
    });

    test('keys are stored hashed: the secret appears nowhere in the database', async () => {
      const hal = await createUser(api, srv.adminKey, 'hal');
      const extra = await api.post('/v1/users/hal/keys', { key: hal.key, body: {} });
      assert.equal(extra.status, 200);
      // The key is in the database in some form: it authenticates.
      assert.equal((await api.get('/v1/users/hal/keys', { key: extra.body.key })).status, 200);
      const text = await databaseText(srv);
      assert.ok(text.includes(hal.keyId), 'the dump holds the key rows');
      for (const secret of [hal.key, extra.body.key, srv.adminKey]) {
        assert.ok(!text.includes(secret), 'the whole key is not stored');
        assert.ok(!text.includes(secret.slice(8)), 'the secret part of the key is not stored');
      }
    });

    test('only admins create admin keys; a standard key gets 403', async () => {
      const ann = await createUser(api, srv.adminKey, 'ann');
      assertError(await api.post('/v1/users/ann/keys', { key: ann.key, body: { kind: 'admin' } }), 403, 2001);
      const listed = await api.get('/v1/users/ann/keys', { key: ann.key });
      assert.deepEqual(
        listed.body.results.map((k: { kind: string }) => k.kind),
        ['standard'],
      );

      const admin = await api.post('/v1/users/ann/keys', { key: srv.adminKey, body: { kind: 'admin' } });
      assert.equal(admin.status, 200, admin.text);
      assert.equal(admin.body.kind, 'admin');
      assert.match(admin.body.key, KEY_FORMAT);
      // The new admin key does what admin keys do (docs/compatibility.md §9.2 endpoint 6), unlike Ann's standard key.
      assert.equal((await api.get('/v1/users/ann', { key: admin.body.key })).status, 200);
      assertError(await api.get('/v1/users/ann', { key: ann.key }), 403, 2001);

      assertError(await api.post('/v1/users/ann/keys', { key: srv.adminKey, body: { kind: 'superuser' } }), 400);
      assertError(await api.post('/v1/users/ann/keys', { key: srv.adminKey, body: { kind: 5 } }), 400);
    });

    test('capabilities default to all four; unknown ones are 400; a key cannot grant what its creator lacks', async () => {
      const cap = await createUser(api, srv.adminKey, 'cap');
      const unknown = await api.post('/v1/users/cap/keys', { key: cap.key, body: { capabilities: ['call_algorithms', 'fly'] } });
      assertError(unknown, 400);
      assert.match(unknown.body.error.message, /fly/);
      assertError(await api.post('/v1/users/cap/keys', { key: cap.key, body: { capabilities: 'call_algorithms' } }), 400);
      assertError(await api.post('/v1/users/cap/keys', { key: cap.key, body: { capabilities: [1] } }), 400);

      const narrow = await api.post('/v1/users/cap/keys', { key: cap.key, body: { capabilities: ['call_algorithms', 'read_data'] } });
      assert.equal(narrow.status, 200, narrow.text);
      assert.deepEqual([...narrow.body.capabilities].sort(), ['call_algorithms', 'read_data']);

      // A narrow key manages no keys at all (issue 11: no key minting a broader one).
      const narrower = await api.post('/v1/users/cap/keys', { key: narrow.body.key, body: { capabilities: ['read_data'] } });
      assertError(narrower, 403, 2001);
      assert.match(narrower.body.error.message, /every capability/);
      const wider = await api.post('/v1/users/cap/keys', {
        key: narrow.body.key,
        body: { capabilities: ['read_data', 'manage_algorithms'] },
      });
      assertError(wider, 403, 2001);
      assert.match(wider.body.error.message, /manage_algorithms/);
      // A full key may still hand on less than it has.
      const fromFull = await api.post('/v1/users/cap/keys', { key: cap.key, body: { capabilities: ['read_data'] } });
      assert.deepEqual(fromFull.body.capabilities, ['read_data']);
      // Omitted capabilities mean all four, which the narrow key lacks.
      assertError(await api.post('/v1/users/cap/keys', { key: narrow.body.key, body: {} }), 403, 2001);
      const count = (await api.get('/v1/users/cap/keys', { key: cap.key })).body.results.length;
      assert.equal(count, 3); // cap's own, narrow, fromFull
    });

    test('a key without manage_algorithms cannot create algorithms (403); one with it can', async () => {
      const alg = await createUser(api, srv.adminKey, 'alg');
      const callOnly = await api.post('/v1/users/alg/keys', { key: alg.key, body: { capabilities: ['call_algorithms'] } });
      assert.equal(callOnly.status, 200);
      assertError(await api.post('/v1/algorithms/alg', { key: callOnly.body.key, body: { name: 'X' } }), 403, 2001);
      assertError(await api.get('/v1/algorithms/alg/X', { key: alg.key }), 404, 1001);
      const ok = await api.post('/v1/algorithms/alg', { key: alg.key, body: { name: 'X' } });
      assert.equal(ok.status, 200, ok.text);
      assert.equal(ok.body.owner, 'alg');
      assert.equal(ok.body.name, 'X');
    });

    test('a revoked key gets 401 at once; revoking an unknown id is 404', async () => {
      const rex = await createUser(api, srv.adminKey, 'rex');
      const spare = await api.post('/v1/users/rex/keys', { key: rex.key, body: {} });
      // Used once before the revoke, so the node has seen it.
      assert.equal((await api.get('/v1/users/rex/keys', { key: spare.body.key })).status, 200);

      const revoke = await api.delete(`/v1/users/rex/keys/${spare.body.id}`, { key: rex.key });
      assert.equal(revoke.status, 204, revoke.text);
      assert.equal(revoke.text, '');
      assertError(await api.get('/v1/users/rex/keys', { key: spare.body.key }), 401, 2002);
      assertError(await api.get('/v1/users/rex/keys', { auth: spare.body.key }), 401, 2002);
      const list = await api.get('/v1/users/rex/keys', { key: rex.key });
      assert.deepEqual(
        list.body.results.map((k: { id: string }) => k.id),
        [rex.keyId],
      );

      assertError(await api.delete(`/v1/users/rex/keys/${spare.body.id}`, { key: rex.key }), 404);
      assertError(await api.delete('/v1/users/rex/keys/00000000-0000-4000-8000-000000000000', { key: rex.key }), 404);
      assertError(await api.delete('/v1/users/rex/keys/not-a-uuid', { key: rex.key }), 404);
      // Another user's key id is not Rex's to revoke.
      const other = await createUser(api, srv.adminKey, 'rex_other');
      assertError(await api.delete(`/v1/users/rex/keys/${other.keyId}`, { key: rex.key }), 404);
      assert.equal((await api.get('/v1/users/rex_other/keys', { key: other.key })).status, 200);

      // An admin revokes anyone's key; a key may revoke itself.
      const third = await api.post('/v1/users/rex/keys', { key: rex.key, body: {} });
      assert.equal((await api.delete(`/v1/users/rex/keys/${third.body.id}`, { key: srv.adminKey })).status, 204);
      assertError(await api.get('/v1/users/rex/keys', { key: third.body.key }), 401, 2002);
      assert.equal((await api.delete(`/v1/users/rex/keys/${rex.keyId}`, { key: rex.key })).status, 204);
      assertError(await api.get('/v1/users/rex/keys', { key: rex.key }), 401, 2002);
    });

    test('Authorization accepts "Simple <key>", the bare key and "Bearer <jwt>"; other schemes are 401', async () => {
      const sam = await createUser(api, srv.adminKey, 'sam');
      assert.equal((await api.get('/v1/users/sam/keys', { auth: `Simple ${sam.key}` })).status, 200);
      assert.equal((await api.get('/v1/users/sam/keys', { auth: sam.key })).status, 200);

      const encoded = Buffer.from(`sam:${sam.key}`).toString('base64');
      for (const auth of [`Basic ${encoded}`, `Token ${sam.key}`, `Bearer ${sam.key}`, 'Simple', '', `Simple ${sam.key}x`]) {
        assertError(await api.get('/v1/users/sam/keys', { auth }), 401);
      }
    });

    test('POST /v1/auth/token signs a user in with a password; the JWT works as Bearer', async () => {
      const created = await api.post('/v1/users', {
        key: srv.adminKey,
        body: { username: 'pat', email: 'pat@example.test', password: 'correct horse' },
      });
      assert.equal(created.status, 200, created.text);
      assert.ok(!('password' in created.body));

      const session = await api.post('/v1/auth/token', { body: { username: 'pat', password: 'correct horse' } });
      assert.equal(session.status, 200, session.text);
      assert.equal(session.body.token_type, 'Bearer');
      assert.match(session.body.token, /^[\w-]+\.[\w-]+\.[\w-]+$/);
      assert.ok(Date.parse(session.body.expires_at) > Date.now(), session.body.expires_at);

      const mine = await api.post('/v1/users/pat/keys', { auth: `Bearer ${session.body.token}`, body: {} });
      assert.equal(mine.status, 200, mine.text);
      assert.match(mine.body.key, KEY_FORMAT);
      assert.equal((await api.get('/v1/users/pat/keys', { auth: `bearer ${session.body.token}` })).status, 200);
      // A session is the user, not an admin.
      assertError(await api.get('/v1/users/pat', { auth: `Bearer ${session.body.token}` }), 403, 2001);
      assertError(await api.post('/v1/users/pat/keys', { auth: `Bearer ${session.body.token}`, body: { kind: 'admin' } }), 403);
      // A JWT is not an API key.
      assertError(await api.get('/v1/users/pat/keys', { auth: `Simple ${session.body.token}` }), 401);

      // A password set later with PUT works as well, and replaces the old one. Without a current
      // password only an admin sets it: a key alone never makes a password (issue 11).
      const sue = await createUser(api, srv.adminKey, 'sue');
      assertError(await api.post('/v1/auth/token', { body: { username: 'sue', password: 'anything at all' } }), 401);
      assertError(await api.put('/v1/users/sue', { key: sue.key, body: { password: 'sue secret 1' } }), 403);
      assert.equal((await api.put('/v1/users/sue', { key: srv.adminKey, body: { password: 'sue secret 1' } })).status, 200);
      const sueSession = await api.post('/v1/auth/token', { body: { username: 'sue', password: 'sue secret 1' } });
      assert.equal(sueSession.status, 200, sueSession.text);
      assert.equal((await api.get('/v1/users/sue/keys', { auth: `Bearer ${sueSession.body.token}` })).status, 200);
      assert.equal((await api.put('/v1/users/sue', { key: srv.adminKey, body: { password: 'sue secret 2' } })).status, 200);
      assertError(await api.post('/v1/auth/token', { body: { username: 'sue', password: 'sue secret 1' } }), 401);
      assert.equal((await api.post('/v1/auth/token', { body: { username: 'sue', password: 'sue secret 2' } })).status, 200);
    });

    test('wrong passwords, unknown users and bad sign-in bodies are refused', async () => {
      await api.post('/v1/users', { key: srv.adminKey, body: { username: 'pwd', email: 'pwd@example.test', password: 'right password' } });
      assertError(await api.post('/v1/auth/token', { body: { username: 'pwd', password: 'wrong password' } }), 401);
      assertError(await api.post('/v1/auth/token', { body: { username: 'pwd', password: '' } }), 401);
      assertError(await api.post('/v1/auth/token', { body: { username: 'nobody_at_all', password: 'right password' } }), 401);
      assertError(await api.post('/v1/auth/token', { body: { username: 'pwd' } }), 400);
      assertError(await api.post('/v1/auth/token', { body: { username: 'pwd', password: 5 } }), 400);
      assertError(
        await api.post('/v1/auth/token', { raw: '{"username": "pwd", ', headers: { 'content-type': 'application/json' } }),
        400,
        2013,
      );
      // Too short a password is refused when it is set.
      const short = await api.post('/v1/users', {
        key: srv.adminKey,
        body: { username: 'shorty', email: 'shorty@example.test', password: 'short' },
      });
      assertError(short, 400);
      assert.match(short.body.error.message, /password/);
    });

    test('expired, garbled and foreign JWTs are 401', async () => {
      await api.post('/v1/users', { key: srv.adminKey, body: { username: 'jay', email: 'jay@example.test', password: 'jay password' } });
      const session = await api.post('/v1/auth/token', { body: { username: 'jay', password: 'jay password' } });
      const token: string = session.body.token;
      assert.equal((await api.get('/v1/users/jay/keys', { auth: `Bearer ${token}` })).status, 200);

      const [header, payload, signature] = token.split('.') as [string, string, string];
      const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
      // Change a character in the middle: every bit of it counts (unlike the last one's).
      const flipped = signature.slice(0, 10) + (signature[10] === 'A' ? 'B' : 'A') + signature.slice(11);
      const forged = Buffer.from(JSON.stringify({ ...claims, exp: claims.exp + 3600 })).toString('base64url');
      const garbled = [
        'not-a-jwt',
        'a.b.c',
        `${header}.${payload}`,
        `${header}.${payload}.${flipped}`,
        `${header}.${forged}.${signature}`,
        `${token}x`,
        await signJwt({ ...claims }, 'some other secret'),
        `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${payload}.`,
      ];
      for (const t of garbled) assertError(await api.get('/v1/users/jay/keys', { auth: `Bearer ${t}` }), 401);
      assertError(await api.get('/v1/users/jay/keys', { auth: 'Bearer' }), 401);

      // A token signed like the server's own, but expired, is refused; the same token unexpired works.
      const row = await srv.server.services.db
        .selectFrom('cluster_settings')
        .select('value')
        .where('key', '=', 'session_jwt_secret')
        .executeTakeFirstOrThrow();
      const now = Math.floor(Date.now() / 1000);
      const expired = await signJwt({ ...claims, iat: now - 7200, exp: now - 3600 }, row.value);
      const fresh = await signJwt({ ...claims, iat: now, exp: now + 3600 }, row.value);
      assert.equal((await api.get('/v1/users/jay/keys', { auth: `Bearer ${fresh}` })).status, 200);
      assertError(await api.get('/v1/users/jay/keys', { auth: `Bearer ${expired}` }), 401);

      // A deleted user's session stops working.
      assert.equal((await api.delete('/v1/users/jay', { key: srv.adminKey })).status, 204);
      assertError(await api.get('/v1/users/jay/keys', { auth: `Bearer ${token}` }), 401);
    });

    test('the admin account: ALGOHOST_ADMIN_KEY looks up /v1/users/admin and holds an admin key', async () => {
      const me = await api.get('/v1/users/admin', { key: srv.adminKey });
      assert.equal(me.status, 200, me.text);
      assert.equal(me.body.username, 'admin');
      assert.equal(me.body.resource_type, 'user');
      assert.equal(me.body.self_link, `${srv.url}/v1/users/admin`);
      assert.equal((await api.get('/v1/users/admin', { auth: srv.adminKey })).status, 200);

      const keys = await api.get('/v1/users/admin/keys', { key: srv.adminKey });
      assert.equal(keys.status, 200);
      const mine = keys.body.results.filter((k: { prefix: string }) => srv.adminKey.startsWith(k.prefix));
      assert.equal(mine.length, 1);
      assert.equal(mine[0].kind, 'admin');
      assert.ok(!keys.text.includes(srv.adminKey));

      // An admin cannot delete the account it acts as.
      assertError(await api.delete('/v1/users/admin', { key: srv.adminKey }), 400);
      // With a password the admin signs in, and the session acts as an admin.
      assert.equal((await api.put('/v1/users/admin', { key: srv.adminKey, body: { password: 'admin password' } })).status, 200);
      const session = await api.post('/v1/auth/token', { body: { username: 'admin', password: 'admin password' } });
      assert.equal(session.status, 200, session.text);
      const lookup = await api.get('/v1/users/admin', { auth: `Bearer ${session.body.token}` });
      assert.equal(lookup.status, 200, lookup.text);
    });
  });
}
