/**
 * Request-rate limits (api/rate-limits.ts) and the slowing of failed sign-ins
 * (domain/accounts/sign-in-throttle.ts), on real servers with small limits and an hour-long
 * window or delay, so that nothing depends on how fast the requests go.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createUser, type TestUser } from '../support/fixtures.js';
import { client, type Client, type Response } from '../support/http.js';
import { makeTempDir, startTestServer, type TestServer } from '../support/server.js';

const HOUR = '3600';

function assertLimited(res: Response, what: RegExp): void {
  assert.equal(res.status, 429, res.text);
  const retryAfter = Number(res.headers.get('retry-after'));
  assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 3600, `Retry-After: ${res.headers.get('retry-after')}`);
  assert.match(res.body.error.message, what);
}

describe('request-rate limit per key', () => {
  let srv: TestServer;
  let api: Client;
  let alice: TestUser;
  let bob: TestUser;
  before(async () => {
    srv = await startTestServer({
      env: { ALGOHOST_RATE_LIMIT_WINDOW: HOUR, ALGOHOST_RATE_LIMIT_PER_KEY: '5', ALGOHOST_RATE_LIMIT_PER_ADDRESS: '0' },
    });
    api = client(srv.url);
    alice = await createUser(api, srv.adminKey, 'alice');
    bob = await createUser(api, srv.adminKey, 'bob');
  });
  after(() => srv?.stop());

  test('a key gets 429 with Retry-After past its limit; another key of the same address is unaffected', async () => {
    for (let i = 0; i < 5; i++) assert.equal((await api.get('/v1/auth/whoami', { key: alice.key })).status, 200);
    assertLimited(await api.get('/v1/auth/whoami', { key: alice.key }), /too many requests from this credential: at most 5 per 3600 s/);
    // Any route, not just the one that used the budget up.
    assertLimited(await api.get('/v1/algorithms/alice', { key: alice.key }), /at most 5 per 3600 s/);
    assert.equal((await api.get('/v1/auth/whoami', { key: bob.key })).status, 200);
  });
});

describe('request-rate limit per address', () => {
  let srv: TestServer;
  let api: Client;
  before(async () => {
    srv = await startTestServer({ env: { ALGOHOST_RATE_LIMIT_WINDOW: HOUR, ALGOHOST_RATE_LIMIT_PER_ADDRESS: '4' } });
    api = client(srv.url);
  });
  after(() => srv?.stop());

  test('unauthenticated and authenticated requests of one address share its limit; past it even a valid key gets 429', async () => {
    assert.equal((await api.get('/healthz')).status, 200);
    assert.equal((await api.get('/v1/auth/whoami', { key: 'not-a-key' })).status, 401);
    assert.equal((await api.get('/v1/auth/whoami')).status, 401);
    assert.equal((await api.get('/v1/auth/whoami', { key: srv.adminKey })).status, 200);
    assertLimited(
      await api.get('/v1/auth/whoami', { key: srv.adminKey }),
      /too many requests from address 127\.0\.0\.1: at most 4 per 3600 s/,
    );
    assertLimited(await api.get('/healthz'), /address/);
    // Git's side door counts too.
    assertLimited(await api.get('/git/admin/nothing.git/info/refs?service=git-upload-pack'), /address/);
  });
});

describe('requests on the API socket of sandboxes are charged to the runners’ owner (issue 36 item 8)', () => {
  let srv: TestServer;
  let dir: string;
  const sockets: { close(): Promise<void> }[] = [];
  /** One request over a Unix socket, as an algorithm's client sends it; the status. */
  const over = (file: string, method: string, urlPath: string, body?: unknown) =>
    new Promise<{ status: number; text: string }>((resolve, reject) => {
      const data = body === undefined ? undefined : JSON.stringify(body);
      const req = http.request(
        {
          socketPath: file,
          method,
          path: urlPath,
          headers: data === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) },
        },
        (res) => {
          let text = '';
          res.on('data', (d: Buffer) => (text += d.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        },
      );
      req.on('error', reject);
      req.end(data);
    });
  before(async () => {
    srv = await startTestServer({ env: { ALGOHOST_RATE_LIMIT_WINDOW: HOUR, ALGOHOST_RATE_LIMIT_PER_ADDRESS: '4' } });
    dir = await makeTempDir('algohost-sockets-');
  });
  after(async () => {
    for (const s of sockets) await s.close();
    await srv?.stop();
    await fs.promises.rm(dir, { recursive: true, force: true });
  });

  test('two runners of mallory share her limit; a runner of another owner, and TCP clients, are not held by it', async () => {
    const open = async (name: string, owner: { id: string; name: string }) => {
      const file = path.join(dir, name);
      sockets.push(await srv.server.apiSockets.listen(file, owner));
      return file;
    };
    const mallory = { id: 'mallory-id', name: 'mallory' };
    const first = await open('a.sock', mallory);
    const second = await open('b.sock', mallory);
    const alices = await open('c.sock', { id: 'alice-id', name: 'alice' });
    for (let i = 0; i < 2; i++) assert.equal((await over(first, 'GET', '/healthz')).status, 200);
    for (let i = 0; i < 2; i++) assert.equal((await over(second, 'GET', '/healthz')).status, 200);
    const limited = await over(second, 'POST', '/v1/auth/token', { username: 'alice', password: 'guess' });
    assert.equal(limited.status, 429, limited.text);
    assert.match(limited.text, /too many requests from the runners of mallory: at most 4 per 3600 s/);
    assert.equal((await over(alices, 'GET', '/healthz')).status, 200);
    assert.equal((await client(srv.url).get('/healthz')).status, 200);
  });
});

describe('failed sign-ins are slowed per account name and per address', () => {
  let srv: TestServer;
  let api: Client;
  const signIn = (username: string, password: string) => api.post('/v1/auth/token', { body: { username, password } });
  const RIGHT = 'a long enough password';
  before(async () => {
    srv = await startTestServer({
      env: { ALGOHOST_SIGNIN_FAILURES_PER_ACCOUNT: '3', ALGOHOST_SIGNIN_FAILURES_PER_ADDRESS: '10', ALGOHOST_SIGNIN_DELAY: HOUR },
    });
    api = client(srv.url);
    for (const name of ['alice', 'bob', 'carol', 'dave']) await createUser(api, srv.adminKey, name, { password: RIGHT });
  });
  after(() => srv?.stop());

  test('a success clears the name’s count: failures below the limit never delay the owner', async () => {
    for (let i = 0; i < 2; i++) assert.equal((await signIn('dave', 'wrong')).status, 401);
    assert.equal((await signIn('dave', RIGHT)).status, 200);
    for (let i = 0; i < 2; i++) assert.equal((await signIn('dave', 'wrong')).status, 401);
    assert.equal((await signIn('dave', RIGHT)).status, 200);
  });

  test('past the failures of one name, even the right password waits (429); other names from the address do not', async () => {
    for (let i = 0; i < 3; i++) assert.equal((await signIn('alice', `guess ${i}`)).status, 401);
    assertLimited(await signIn('alice', RIGHT), /too many failed sign-ins; try again in \d+ s/);
    // Names are counted whatever their letter case.
    assertLimited(await signIn('ALICE', RIGHT), /too many failed sign-ins/);
    // An unknown name counts like a known one, and it is not alice's.
    assert.equal((await signIn('nobody', 'guess')).status, 401);
    assert.equal((await signIn('bob', RIGHT)).status, 200);
  });

  test('past the failures of one address, every name from it waits', async () => {
    // 4 (dave) + 3 (alice) + 1 (nobody) failures so far; two more reach the address's 10.
    for (let i = 0; i < 2; i++) assert.equal((await signIn('bob', `guess ${i}`)).status, 401);
    assertLimited(await signIn('carol', RIGHT), /too many failed sign-ins/);
    // Keys are not sign-ins: the account still works with its API key.
    const key = await api.post('/v1/users/carol/keys', { key: srv.adminKey, body: {} });
    assert.equal((await api.get('/v1/auth/whoami', { key: key.body.key })).status, 200);
  });
});
