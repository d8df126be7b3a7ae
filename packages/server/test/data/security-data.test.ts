/**
 * Issue 11, item 14: another user's private collection must not be told apart from a missing
 * one. mallory probes alice's existing private collections and a collection that does not
 * exist, with every method, on both prefixes with the separators sent as "/" and as %2F (issue
 * 18), with her key and from her own algorithm; every
 * answer must be the same 404 (status and error body, names aside). Where mallory may know the
 * collection exists (a public ACL) the answers stay as they were; alice still reads her own.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertError, checkedClient } from '../support/assertions.js';
import { accountId, callKey, createAlgorithm } from '../support/data.js';
import { createOrganization, createUser, type TestUser } from '../support/fixtures.js';
import { client, type Client } from '../support/http.js';
import { DATABASES, startTestServer, type TestServer } from '../support/server.js';

interface Probe {
  status: number;
  /** The error body with the probed collection's name replaced by `{c}`. */
  body: string;
  /** X-Error-Message, with the same replacement (HEAD answers carry only this). */
  header: string | null;
}

for (const database of DATABASES) {
  describe(`security: probing hosted data names (${database})`, () => {
    let srv: TestServer;
    let api: Client;
    let alice: TestUser;
    let mallory: TestUser;

    /** Every way of touching a collection (and a file and folder inside it) that mallory has. */
    const attempts = (prefix: string, owner: string, c: string, sep = '/'): [string, (key: string) => Promise<Probe>][] => {
      const probe =
        (method: 'get' | 'head' | 'put' | 'post' | 'patch' | 'delete', path: string, opts: { body?: unknown; raw?: string } = {}) =>
        async (key: string): Promise<Probe> => {
          // The separators after the prefix as some clients send them: "/" or %2F (issue 18).
          const [p, query] = `${owner}/${path}`.split('?') as [string, string | undefined];
          const url = `${prefix}/${p.split('/').join(sep)}${query === undefined ? '' : `?${query}`}`;
          // HEAD answers have no body, so not the checked client; the status is checked below.
          const res = await client(srv.url)[method](url, { key, ...opts });
          const scrub = (s: string) => s.split(c).join('{c}');
          return {
            status: res.status,
            body: scrub(res.text),
            header: res.headers.get('x-error-message') && scrub(res.headers.get('x-error-message')!),
          };
        };
      return [
        ['GET dir', probe('get', c)],
        ['GET dir ?acl=true', probe('get', `${c}?acl=true`)],
        ['GET file', probe('get', `${c}/file.txt`)],
        ['GET subfolder', probe('get', `${c}/sub`)],
        ['HEAD dir', probe('head', c)],
        ['HEAD file', probe('head', `${c}/file.txt`)],
        ['PUT file', probe('put', `${c}/planted.txt`, { raw: 'mallory was here' })],
        ['PUT over file', probe('put', `${c}/file.txt`, { raw: 'mallory was here' })],
        ['POST folder', probe('post', c, { body: { name: 'sub2' } })],
        ['PATCH acl', probe('patch', c, { body: { acl: { read: ['user://*'] } } })],
        ['DELETE file', probe('delete', `${c}/file.txt`)],
        ['DELETE dir', probe('delete', `${c}?force=true`)],
      ];
    };

    before(async () => {
      srv = await startTestServer({ database });
      api = checkedClient(srv.url);
      alice = await createUser(api, srv.adminKey, 'alice');
      mallory = await createUser(api, srv.adminKey, 'mallory');
      await createOrganization(api, alice.key, 'acme');
      for (const [owner, name, acl] of [
        ['alice', 'secrets', { read: [] }],
        ['alice', 'mine', undefined], // the default: alice's algorithms read it
        ['alice', 'pub', { read: ['user://*'] }],
        ['acme', 'team', { read: [] }],
      ] as const) {
        const made = await api.post(`/v1/data/${owner}`, { key: alice.key, body: { name, ...(acl ? { acl } : {}) } });
        assert.equal(made.status, 200, made.text);
        assert.equal((await api.post(`/v1/data/${owner}/${name}`, { key: alice.key, body: { name: 'sub' } })).status, 200);
        assert.equal((await api.put(`/v1/data/${owner}/${name}/file.txt`, { key: alice.key, raw: `${name} of alice` })).status, 200);
      }
    });
    after(() => srv.stop());

    for (const [prefix, sep] of [
      ['/v1/data', '/'],
      ['/v1/connector/data', '/'],
      ['/v1/data', '%2F'],
      ['/v1/connector/data', '%2f'],
    ] as const) {
      test(`mallory cannot tell alice's private collections from missing ones (${prefix}, separators ${sep})`, async () => {
        for (const [owner, existing] of [
          ['alice', 'secrets'],
          ['alice', 'mine'],
          ['acme', 'team'],
        ] as const) {
          const real = attempts(prefix, owner, existing, sep);
          const missing = attempts(prefix, owner, 'nosuch', sep);
          for (let i = 0; i < real.length; i++) {
            const [what, tryExisting] = real[i]!;
            const seenExisting = await tryExisting(mallory.key);
            const seenMissing = await missing[i]![1](mallory.key);
            assert.deepEqual(seenExisting, seenMissing, `${what} on ${owner}/${existing} vs a missing collection`);
            assert.equal(seenExisting.status, 404, `${what} on ${owner}/${existing}: ${seenExisting.body}`);
            assert.match(seenExisting.header ?? '', new RegExp(`^data://${owner}/\\{c\\}.* does not exist$`), what);
          }
        }
        // The same answer as for alice when she asks for something missing of her own.
        const forMallory = await api.get(`${prefix}/alice/secrets/file.txt`, { key: mallory.key });
        assertError(forMallory, 404, 7001);
        const forAlice = await api.get(`${prefix}/alice/nosuch/file.txt`, { key: alice.key });
        assert.equal(forMallory.text.replace('secrets', 'nosuch'), forAlice.text);
        // Nothing mallory tried changed anything.
        assert.equal((await api.get(`${prefix}/alice/secrets/file.txt`, { key: alice.key })).text, 'secrets of alice');
        assert.equal((await api.get(`${prefix}/alice/mine/file.txt`, { key: alice.key })).text, 'mine of alice');
        assert.equal((await api.get(`${prefix}/acme/team/file.txt`, { key: alice.key })).text, 'team of alice');
        assertError(await api.get(`${prefix}/alice/secrets/planted.txt`, { key: alice.key }), 404, 7001);
        assertError(await api.get(`${prefix}/alice/nosuch`, { key: alice.key }), 404, 7001);
        assert.deepEqual((await api.get(`${prefix}/alice/secrets?acl=true`, { key: alice.key })).body.acl, { read: [] });
      });
    }

    test("mallory's algorithm probing alice's collections gets the same 404 as for a missing one", async () => {
      const malloryAlgo = {
        id: await createAlgorithm(api, 'mallory', mallory.key, 'Prober'),
        ownerId: await accountId(api, srv.adminKey, 'mallory'),
      };
      const call = await callKey(srv, mallory, malloryAlgo);
      try {
        for (const sep of ['/', '%2F']) {
          const real = attempts('/v1/data', 'alice', 'secrets', sep);
          const missing = attempts('/v1/data', 'alice', 'nosuch', sep);
          for (let i = 0; i < real.length; i++) {
            const [what, tryExisting] = real[i]!;
            const seen = await tryExisting(call.key);
            assert.deepEqual(seen, await missing[i]![1](call.key), `${what} (${sep})`);
            assert.equal(seen.status, 404, `${what} (${sep}): ${seen.body}`);
          }
        }
      } finally {
        call.revoke();
      }
      assert.equal((await api.get('/v1/data/alice/secrets/file.txt', { key: alice.key })).text, 'secrets of alice');
    });

    test('where mallory may know a collection exists, the answers stay: public reads, refused writes; alice keeps everything', async () => {
      assert.equal((await api.get('/v1/data/alice/pub/file.txt', { key: mallory.key })).text, 'pub of alice');
      const write = await api.put('/v1/data/alice/pub/planted.txt', { key: mallory.key, raw: 'x' });
      assertError(write, 403, 2001);
      assert.equal(write.body.error.message, 'mallory may not change data://alice/pub: only alice may write there');
      assertError(await api.delete('/v1/data/alice/pub/file.txt', { key: mallory.key }), 403, 2001);
      assertError(await api.post('/v1/data/alice', { key: mallory.key, body: { name: 'secrets' } }), 403, 2001);
      assertError(await api.post('/v1/data/alice', { key: mallory.key, body: { name: 'nosuch' } }), 403, 2001);
      // Listing alice's root shows mallory only the public collection.
      assert.deepEqual((await api.get('/v1/data/alice', { key: mallory.key })).body, { folders: [{ name: 'pub' }] });
      // alice (and an admin) still read and write her private collections.
      assert.equal((await api.get('/v1/data/alice/secrets/file.txt', { key: alice.key })).text, 'secrets of alice');
      assert.equal((await api.get('/v1/data/alice/secrets/file.txt', { key: srv.adminKey })).text, 'secrets of alice');
      assert.equal((await api.put('/v1/data/alice/secrets/more.txt', { key: alice.key, raw: 'more' })).status, 200);
      assert.equal((await api.get('/v1/data/alice/secrets/more.txt', { key: alice.key })).text, 'more');
      assert.deepEqual(
        (await api.get('/v1/data/alice', { key: alice.key })).body.folders.map((f: { name: string }) => f.name),
        ['mine', 'pub', 'secrets'],
      );
    });
  });
}
