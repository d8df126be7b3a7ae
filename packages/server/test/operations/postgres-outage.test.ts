/**
 * Issue 17, "PostgreSQL stopped mid-run": the test runs its own PostgreSQL cluster (initdb and
 * pg_ctl as the postgres user, as scripts/with-services.sh does), stops it under a running node:
 * requests get 503 with a message naming the database, the node stays up, and once PostgreSQL is
 * back the node serves again by itself, with nothing lost.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { createUser, type TestUser } from '../support/fixtures.js';
import { client, request, type Client } from '../support/http.js';
import { makeTempDir, startTestServer, type TestServer } from '../support/server.js';

const exec = promisify(execFile);
const PG_BIN = fs.existsSync('/usr/lib/postgresql')
  ? fs
      .readdirSync('/usr/lib/postgresql')
      .sort((a, b) => Number(a) - Number(b))
      .map((v) => `/usr/lib/postgresql/${v}/bin`)
      .at(-1)
  : undefined;
const root = process.getuid?.() === 0;
const skip = !PG_BIN
  ? 'PostgreSQL is not installed (scripts/install-deps.sh installs it)'
  : !root
    ? 'needs root to run PostgreSQL as its user'
    : false;

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

describe('PostgreSQL stopped under a running node', { skip }, () => {
  let dir: string;
  let port: number;
  let srv: TestServer;
  let api: Client;
  let alice: TestUser;
  const pgCtl = (...args: string[]) => exec('runuser', ['-u', 'postgres', '--', `${PG_BIN}/pg_ctl`, '-D', path.join(dir, 'data'), ...args]);
  const startPg = () =>
    pgCtl('-l', path.join(dir, 'postgres.log'), '-w', '-o', `-c listen_addresses=127.0.0.1 -p ${port} -k ${dir} -c fsync=off`, 'start');

  before(async () => {
    dir = await makeTempDir('algohost-pg-outage-');
    fs.chmodSync(dir, 0o755);
    await exec('chown', ['postgres', dir]);
    port = await freePort();
    await exec('runuser', [
      '-u',
      'postgres',
      '--',
      `${PG_BIN}/initdb`,
      '-D',
      path.join(dir, 'data'),
      '-A',
      'trust',
      '-U',
      'postgres',
      '--no-sync',
    ]);
    await startPg();
    srv = await startTestServer({ env: { ALGOHOST_DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/postgres` } });
    api = client(srv.url);
    alice = await createUser(api, srv.adminKey, 'alice');
    assert.equal((await api.post('/v1/data/alice', { key: alice.key, body: { name: 'kept' } })).status, 200);
    assert.equal((await request(srv.url, 'PUT', '/v1/data/alice/kept/a.txt', { key: alice.key, raw: 'before' })).status, 200);
  });
  after(async () => {
    await srv?.stop();
    if (dir) {
      await pgCtl('-m', 'immediate', 'stop').catch(() => {});
      await fs.promises.rm(dir, { recursive: true, force: true });
    }
  });

  test('while it is down: 503 naming the database, for reads and writes; the node stays up', async () => {
    await pgCtl('-m', 'fast', '-w', 'stop');
    const reads = await api.get('/v1/data/alice/kept', { key: alice.key });
    assert.equal(reads.status, 503, reads.text);
    assert.match(reads.body.error.message, /the database is unavailable|\(the database or the blob store\) is unreachable/);
    assert.equal(reads.headers.get('retry-after'), '5');
    const writes = await api.post('/v1/data/alice', { key: alice.key, body: { name: 'new' } });
    assert.equal(writes.status, 503, writes.text);
    const users = await api.get('/v1/users/alice', { key: srv.adminKey });
    assert.equal(users.status, 503, users.text);
    assert.equal((await api.get('/healthz')).status, 200, 'the node itself is up');
  });

  test('once it is back: the node serves again by itself, nothing lost', async () => {
    await startPg();
    // The pool replaces its dropped connections on the next queries: no restart of the node.
    let res = await api.get('/v1/data/alice/kept', { key: alice.key });
    for (let i = 0; i < 100 && res.status === 503; i++) {
      await new Promise((r) => setTimeout(r, 100));
      res = await api.get('/v1/data/alice/kept', { key: alice.key });
    }
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(
      (res.body.files as { filename: string }[]).map((f) => f.filename),
      ['a.txt'],
    );
    const read = await request(srv.url, 'GET', '/v1/data/alice/kept/a.txt', { key: alice.key });
    assert.equal(read.text, 'before');
    assert.equal((await api.post('/v1/data/alice', { key: alice.key, body: { name: 'new' } })).status, 200);
  });
});
