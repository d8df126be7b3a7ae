/**
 * Issue 36, items 6, 7, 8 and 15: what one tenant (or anyone) can do to the HTTP edge, played as
 * mallory, on a real server with small limits, on SQLite and on PostgreSQL when the test services
 * run. Each test ends with alice's own call or sign-in still getting alice's result.
 * - 6: idle connections to a sandbox's API socket are held to that sandbox's budget, never the
 *   node's TCP capacity; idle TCP connections from many addresses make room for a client that
 *   authenticates, instead of locking everyone out;
 * - 7: 20,000 anonymous failed sign-ins leave a handful of aggregated audit entries;
 * - 8: sign-ins over the API socket are charged to the runner's owner; a flood of made-up names
 *   does not free alice's name; a blocked alice still gets in (a client she used, a key);
 * - 15: a failed sign-in is logged by account id, or by a hash of the name: never as typed.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createAndBuild, writePythonAlgorithm } from '../support/algorithms.js';
import { PYTHON_API_REQUEST } from '../support/api-socket-python.js';
import { accountId } from '../support/data.js';
import { createUser, type TestUser } from '../support/fixtures.js';
import { FIXTURES_DIR } from '../support/fixtures-algorithms.js';
import { client, request, type Client } from '../support/http.js';
import { DATABASES, makeTempDir, startTestServer, type TestServer } from '../support/server.js';

const PASSWORD = 'alice has a long password';
/** A password typed into the name field: it must reach the log in no form that shows it. */
const TYPED_IN_NAME_FIELD = 'correct horse battery staple 36';

/**
 * Mallory's pipeline algorithm: tries each name with one password over its API socket (as any
 * algorithm with pipeline_enabled can), and answers the statuses it got.
 */
const SPRAY = String.raw`
import json
${PYTHON_API_REQUEST}

def sign_in(name, password):
    body = json.dumps({"username": name, "password": password}).encode()
    return api_request("POST", "/v1/auth/token", key="", body=body, content_type="application/json")["status"]

def apply(input):
    return [sign_in(name, input["password"]) for name in input["names"]]
`;

interface Answer {
  status: number;
  text: string;
  body: any;
}

/** One request from `localAddress` (a loopback address of the test's choosing). */
function from(
  base: string,
  localAddress: string,
  method: string,
  urlPath: string,
  opts: { key?: string; body?: unknown; agent?: http.Agent } = {},
): Promise<Answer> {
  const url = new URL(base);
  const body = opts.body === undefined ? undefined : JSON.stringify(opts.body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        method,
        path: urlPath,
        localAddress,
        agent: opts.agent ?? false,
        headers: {
          ...(opts.key ? { authorization: `Simple ${opts.key}` } : {}),
          ...(body !== undefined ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } : {}),
        },
      },
      (res) => {
        const parts: Buffer[] = [];
        res.on('data', (d: Buffer) => parts.push(d));
        res.on('end', () => {
          const text = Buffer.concat(parts).toString('utf8');
          resolve({
            status: res.statusCode ?? 0,
            text,
            body: (res.headers['content-type'] ?? '').includes('json') && text ? JSON.parse(text) : text,
          });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** A connection that sends nothing (or `send`); resolves `closed` with what the server wrote once it closed it. */
function hold(opts: net.NetConnectOpts): { socket: net.Socket; connected: Promise<void>; closed: Promise<string> } {
  const socket = net.connect(opts);
  let seen = '';
  socket.on('data', (d) => (seen += d.toString('latin1')));
  socket.on('error', () => {});
  const connected = new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  const closed = new Promise<string>((resolve) => socket.once('close', () => resolve(seen)));
  return { socket, connected, closed };
}

const isOpen = (s: net.Socket) => !s.destroyed && s.readyState === 'open';

for (const database of DATABASES) {
  describe(`one tenant against the edge (${database}): connections, sign-ins, the audit log`, () => {
    let srv: TestServer;
    let api: Client;
    let alice: TestUser;
    let mallory: TestUser;
    let aliceId: string;
    let helloSha: string;
    const callHello = (who: string, localAddress = '127.0.0.1') =>
      from(srv.url, localAddress, 'POST', `/v1/algo/alice/Hello/${helloSha}`, { key: alice.key, body: who });
    const spray = (names: string[]) =>
      request(srv.url, 'POST', '/v1/algo/mallory/Spray/1.0.0', { key: mallory.key, body: { names, password: 'Summer2026!' } });
    const signIn = (localAddress: string, username: string, password: string) =>
      from(srv.url, localAddress, 'POST', '/v1/auth/token', { body: { username, password } });
    const auditRows = () =>
      srv.server.services.db
        .selectFrom('audit_log')
        .selectAll()
        .where('action', '=', 'session.create')
        .orderBy('at')
        .orderBy('id')
        .execute();

    before(async () => {
      srv = await startTestServer({
        database,
        env: {
          ALGOHOST_MAX_CONNECTIONS: '40',
          // No cap per address: as behind a proxy, or a flood from many addresses.
          ALGOHOST_MAX_CONNECTIONS_PER_CLIENT: '0',
          ALGOHOST_MAX_CONNECTIONS_PER_SANDBOX: '8',
          ALGOHOST_HEADERS_TIMEOUT: '600',
          ALGOHOST_REQUEST_TIMEOUT: '600',
          ALGOHOST_SIGNIN_FAILURES_PER_ACCOUNT: '3',
          ALGOHOST_SIGNIN_FAILURES_PER_ADDRESS: '10',
          ALGOHOST_SIGNIN_DELAY: '600',
          ALGOHOST_SIGNIN_MAX_DELAY: '900',
        },
      });
      api = client(srv.url);
      alice = await createUser(api, srv.adminKey, 'alice', { password: PASSWORD });
      mallory = await createUser(api, srv.adminKey, 'mallory');
      aliceId = await accountId(api, srv.adminKey, 'alice');
      helloSha = await createAndBuild(srv.url, api, alice, 'alice', 'Hello', path.join(FIXTURES_DIR, 'python', 'hello'), {
        environment: 'python311',
      });
      const tree = await makeTempDir('algohost-spray-');
      writePythonAlgorithm(tree, 'mallory', 'Spray', SPRAY);
      await createAndBuild(srv.url, api, mallory, 'mallory', 'Spray', tree, {
        environment: 'python311',
        settings: { pipeline_enabled: true, algorithm_callability: 'public' },
      });
      await fs.promises.rm(tree, { recursive: true, force: true });
      const published = await api.post('/v1/algorithms/mallory/Spray/versions', {
        key: mallory.key,
        body: { version_info: { version_type: 'major' }, settings: { algorithm_callability: 'public' } },
      });
      assert.equal(published.status, 200, published.text);
      assert.equal((await callHello('alice')).body.result, 'hello alice');
    });
    after(() => srv?.stop());

    test('item 15: a failed sign-in is logged by account id, or by a keyed hash of the name, never as typed', async () => {
      assert.equal((await signIn('127.0.4.1', 'ALICE', 'a wrong guess')).status, 401);
      for (let i = 0; i < 2; i++) assert.equal((await signIn('127.0.4.1', TYPED_IN_NAME_FIELD, PASSWORD)).status, 401);
      await srv.server.services.audit.flushSignIns();
      const rows = (await auditRows()).filter((r) => r.address === '127.0.4.1');
      assert.equal(rows.length, 2, JSON.stringify(rows));
      const [named, unknown] = rows;
      assert.equal(named!.actor, 'alice', 'the account’s own name, not the letters typed');
      assert.equal(named!.actor_id, aliceId);
      assert.equal(unknown!.actor, null);
      assert.equal(unknown!.actor_id, null);
      const details = JSON.parse(unknown!.details) as { name_hash: string; attempts: number };
      assert.match(details.name_hash, /^[0-9a-f]{32}$/);
      assert.equal(details.attempts, 2, 'the same name from the same client is one entry');
      // A plain hash of the text would let whoever reads the log test guesses against it.
      assert.notEqual(details.name_hash, crypto.createHash('sha256').update(TYPED_IN_NAME_FIELD).digest('hex').slice(0, 32));
      const everything = JSON.stringify(await srv.server.services.db.selectFrom('audit_log').selectAll().execute());
      assert.ok(!everything.includes('correct horse'), 'the typed text reached the database');
      const listed = await api.get('/v1/admin/audit?action=session.create', { key: srv.adminKey });
      assert.ok(!listed.text.includes('correct horse'), 'the typed text is listed');
      assert.ok(listed.body.results.some((e: { actor: string | null }) => e.actor === 'alice'));
    });

    test('item 6: idle connections on a sandbox’s API socket are held to its budget, not the node’s; alice’s call answers', async () => {
      // Mallory's runner is warm: its sandbox has its API socket.
      assert.deepEqual((await spray([])).body.result, []);
      const dir = srv.server.services.runners.apiSocketDir;
      const sockets = (await fs.promises.readdir(dir)).filter((f) => f.endsWith('.sock'));
      assert.equal(sockets.length, 1, `one pipeline runner, one socket: ${sockets.join(' ')}`);
      const tcpBefore = srv.server.connections.open;
      // As her runner would: a hundred idle connections to its socket.
      const flood = Array.from({ length: 100 }, () => hold({ path: path.join(dir, sockets[0]!) }));
      const refused: string[] = [];
      await new Promise<void>((resolve) => {
        for (const c of flood) {
          void c.closed.then((seen) => {
            refused.push(seen);
            if (refused.length === 92) resolve();
          });
        }
      });
      for (const seen of refused) {
        assert.match(seen, /^HTTP\/1\.1 503 /);
        assert.match(seen, /this sandbox holds as many connections to the API as it may \(8\)/);
      }
      assert.equal(flood.filter((c) => isOpen(c.socket)).length, 8);
      assert.ok(srv.server.connections.open <= tcpBefore, `the TCP capacity is untouched: ${srv.server.connections.open} held`);
      // Alice, over TCP, gets her own result.
      const answer = await callHello('alice', '127.0.0.9');
      assert.equal(answer.status, 200, answer.text);
      assert.equal(answer.body.result, 'hello alice');
      for (const c of flood) c.socket.destroy();
      await Promise.all(flood.map((c) => c.closed));
    });

    test('item 6: idle TCP connections from 48 addresses make room for clients that authenticate; none of them is locked out', async () => {
      // Alice's keep-alive connection carried an authenticated request before the flood.
      const kept = hold({ host: '127.0.0.1', port: Number(new URL(srv.url).port), localAddress: '127.0.0.10' });
      await kept.connected;
      const whoami = `GET /v1/auth/whoami HTTP/1.1\r\nHost: x\r\nAuthorization: Simple ${alice.key}\r\n\r\n`;
      kept.socket.write(whoami);
      await new Promise((r) => kept.socket.once('data', r));
      // Mallory: 240 idle connections from 48 addresses, five times the node's cap of 40.
      const port = Number(new URL(srv.url).port);
      const flood: ReturnType<typeof hold>[] = [];
      for (let round = 0; round < 5; round++) {
        const batch = Array.from({ length: 48 }, (_, i) => hold({ host: '127.0.0.1', port, localAddress: `127.0.1.${i + 1}` }));
        await Promise.all(batch.map((c) => c.connected));
        flood.push(...batch);
      }
      await new Promise((r) => setTimeout(r, 100));
      assert.ok(srv.server.connections.open <= 40, `${srv.server.connections.open} held`);
      // Alice's new connection gets in and her call answers; so does her kept one.
      const answer = await callHello('alice', '127.0.0.11');
      assert.equal(answer.status, 200, answer.text);
      assert.equal(answer.body.result, 'hello alice');
      assert.ok(isOpen(kept.socket), 'the connection that authenticated was kept');
      let seen = '';
      kept.socket.on('data', (d) => (seen += d.toString()));
      kept.socket.write(whoami);
      for (let i = 0; i < 100 && !seen.includes('"alice"'); i++) await new Promise((r) => setTimeout(r, 20));
      assert.match(seen, /^HTTP\/1\.1 200 /);
      // Of mallory's connections only the latest few are held.
      assert.ok(flood.filter((c) => isOpen(c.socket)).length < 40);
      for (const c of [...flood, kept]) c.socket.destroy();
      await Promise.all([...flood, kept].map((c) => c.closed));
    });

    test('item 8: sign-ins over the API socket are charged to the runner’s owner: a spray from mallory’s algorithm is throttled', async () => {
      const names = ['alice', ...Array.from({ length: 14 }, (_, i) => `spray-${i}`)];
      const first = await spray(names);
      assert.equal(first.status, 200, first.text);
      const statuses = first.body.result as number[];
      assert.deepEqual(statuses.slice(0, 10), Array(10).fill(401));
      assert.deepEqual(statuses.slice(10), Array(5).fill(429), 'past 10 failures the runner’s owner waits');
      // Another call of her algorithm is charged the same: still waiting.
      assert.deepEqual((await spray(['bob', 'carol'])).body.result, [429, 429]);
      // Alice, over TCP, signs in with her password.
      const mine = await signIn('127.0.0.1', 'alice', PASSWORD);
      assert.equal(mine.status, 200, mine.text);
      // The log names whose sandbox the attempts came from (it has no address).
      await srv.server.services.audit.flushSignIns();
      const fromSandbox = (await auditRows()).filter((r) => r.details.includes('the runners of mallory'));
      assert.ok(fromSandbox.length >= 2 && fromSandbox.every((r) => r.address === null), JSON.stringify(fromSandbox));
    });

    test('item 8: a blocked alice still signs in from a client she used, and with a key; made-up names do not free her name', async () => {
      // Mallory fails three times for alice from her own address: alice's name is blocked.
      for (let i = 0; i < 3; i++) assert.equal((await signIn('127.0.2.1', 'alice', `guess ${i}`)).status, 401);
      const blocked = await signIn('127.0.2.2', 'alice', PASSWORD);
      assert.equal(blocked.status, 429, 'a new client waits, even with the right password');
      // The client alice signed in from before is not held by mallory's failures.
      const known = await signIn('127.0.0.1', 'alice', PASSWORD);
      assert.equal(known.status, 200, known.text);
      // Keys are not sign-ins: hers works, and an admin can make her one.
      assert.equal((await api.get('/v1/auth/whoami', { key: alice.key })).body.username, 'alice');
      const made = await api.post('/v1/users/alice/keys', { key: srv.adminKey, body: {} });
      assert.equal(made.status, 200, made.text);
      assert.equal((await api.get('/v1/auth/whoami', { key: made.body.key as string })).body.username, 'alice');
      assert.equal((await callHello('alice')).body.result, 'hello alice');
    });

    test('item 7: anonymous failed sign-ins from one client leave a few aggregated audit entries; alice’s block stays', async () => {
      // Through the server: 2,000 attempts for made-up names, 16 at a time.
      const before = (await auditRows()).length;
      const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
      const statuses = new Map<number, number>();
      let next = 0;
      const OVER_HTTP = 2000;
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          while (next < OVER_HTTP) {
            const i = next++;
            const res = await from(srv.url, '127.0.3.1', 'POST', '/v1/auth/token', {
              agent,
              body: { username: `nobody-${i}-${crypto.randomBytes(4).toString('hex')}`, password: 'x' },
            });
            statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          }
        }),
      );
      agent.destroy();
      assert.equal(statuses.get(401), 10, JSON.stringify([...statuses]));
      assert.equal(statuses.get(429), OVER_HTTP - 10);
      // And 20,000 more as the edge hands them to the log (the HTTP part costs a CI run too
      // much time), from one client, each name new.
      const audit = srv.server.services.audit;
      for (let i = 0; i < 20_000; i++) {
        await audit.recordSignIn({
          username: `flood-${i}`,
          status: 429,
          target: '/v1/auth/token',
          address: '127.0.3.2',
          client: '127.0.3.2',
        });
      }
      await audit.flushSignIns();
      const rows = (await auditRows()).slice(before);
      // At most 20 entries of unknown names per window, and one more per outcome for the rest
      // (twice that should a window end during the flood).
      assert.ok(rows.length <= 44, `${rows.length} entries`);
      const attempts = rows.reduce((n, r) => n + (JSON.parse(r.details) as { attempts: number }).attempts, 0);
      assert.equal(attempts, OVER_HTTP + 20_000, 'every attempt is counted');
      assert.ok(rows.every((r) => r.actor_id === null && r.actor === null));
      // The flood of made-up names did not free alice's name.
      assert.equal((await signIn('127.0.2.3', 'alice', PASSWORD)).status, 429);
      assert.equal((await callHello('alice')).body.result, 'hello alice');
    });
  });
}
