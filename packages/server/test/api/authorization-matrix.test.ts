/**
 * The authorization matrix: every operation of the server's own /v1/openapi.json (so a new
 * endpoint is covered without editing this file) × every kind of caller (anonymous, a wrong key,
 * a revoked key, an expired session token, alice's key lacking the operation's capability, a
 * stranger, an organization member, the owner, an admin), against the real resources of
 * support/world.ts owned by the organization acme. The expected outcome of each cell is in
 * authorization-matrix.table.ts. Asserted: no unauthenticated caller ever succeeds where the
 * document asks for credentials, no answer is a 500, and every cell's class is the table's.
 * ALGOHOST_MATRIX_PRINT=1 prints the observed matrix as table rows (to review and paste).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { signJwt, generateApiKey } from '../../src/domain/accounts/secrets.js';
import { CAPABILITIES } from '../../src/domain/accounts/model.js';
import { createUser } from '../support/fixtures.js';
import { clone, commitAndPush, git, gitUrl, removeClone } from '../support/git.js';
import { client, request, type Client } from '../support/http.js';
import { addMember } from '../support/organizations.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { seedWorld, type World } from '../support/world.js';
import { CALLERS, type Caller, type MatrixContext, type MatrixRequest, type Outcome, TABLE } from './authorization-matrix.table.js';

interface Operation {
  id: string;
  method: string;
  template: string;
  /** `security: []`: the document says no credential is needed. */
  open: boolean;
  contentType?: string;
}

describe('authorization matrix', () => {
  let srv: TestServer;
  let world: World;
  let api: Client;
  let operations: Operation[];
  let ctx: MatrixContext;
  let source: string;
  const headers = new Map<Caller, string | undefined>();
  /** Alice's keys each lacking one capability. */
  const lacking = new Map<string, string>();

  before(async () => {
    srv = await startTestServer();
    world = await seedWorld(srv, { owner: 'acme' });
    api = client(srv.url);
    const doc = await api.get('/v1/openapi.json');
    assert.equal(doc.status, 200);
    operations = operationsOf(doc.body);
    source = (await clone(gitUrl(srv.url, world.alice.name, world.alice.key, world.owner, world.algorithm))).dir;
    ctx = await contextOf(srv, world, api, source);

    const aliceKey = async (capabilities: string[]) => {
      const made = await api.post(`/v1/users/${world.alice.name}/keys`, { key: world.alice.key, body: { capabilities } });
      assert.equal(made.status, 200, made.text);
      return made.body as { key: string; id: string };
    };
    const revoked = await aliceKey([...CAPABILITIES]);
    const gone = await api.delete(`/v1/users/${world.alice.name}/keys/${revoked.id}`, { key: world.alice.key });
    assert.equal(gone.status, 204, gone.text);
    for (const capability of CAPABILITIES) lacking.set(capability, (await aliceKey(CAPABILITIES.filter((c) => c !== capability))).key);

    headers.set('anonymous', undefined);
    headers.set('wrong_key', `Simple ${generateApiKey()}`);
    headers.set('revoked_key', `Simple ${revoked.key}`);
    headers.set('expired_jwt', `Bearer ${await expiredSession(srv, api, world)}`);
    headers.set('other_user', `Simple ${world.carol.key}`);
    headers.set('org_member', `Simple ${world.bob.key}`);
    headers.set('owner', `Simple ${world.alice.key}`);
    headers.set('admin', `Simple ${world.adminKey}`);
  });
  after(async () => {
    await srv?.stop();
    if (source) await removeClone(source);
  });

  test('every operation of the document has a row in the table', () => {
    const missing = operations.filter((op) => !TABLE[op.id]).map((op) => `${op.id} (${op.method} ${op.template})`);
    assert.deepEqual(missing, [], `add these operations to packages/server/test/api/authorization-matrix.table.ts: ${missing.join(', ')}`);
    const stale = Object.keys(TABLE).filter((id) => !operations.some((op) => op.id === id));
    assert.deepEqual(stale, [], `the table has rows for operations the document no longer has: ${stale.join(', ')}`);
  });

  test('every operation × every caller: the table’s outcome, never a 500, no unauthenticated success', async () => {
    const failures: string[] = [];
    const printed: string[] = [];
    for (const op of operations) {
      const row = TABLE[op.id];
      if (!row) continue;
      const seen: Partial<Record<Caller, number>> = {};
      for (const caller of CALLERS) {
        const req = await row.request(ctx);
        assert.ok(matches(op.template, req.path), `${op.id}: the table's path ${req.path} is not ${op.template}`);
        const auth = caller === 'lacking_capability' ? `Simple ${lacking.get(row.capability)!}` : headers.get(caller);
        const res = await send(srv.url, op, req, auth);
        seen[caller] = res.status;
        const where = `${op.id} as ${caller}: ${op.method} ${req.path} answered ${res.status}`;
        if (res.status >= 500 && row.expect[caller] !== res.status) failures.push(`${where} (a server error): ${res.text.slice(0, 300)}`);
        if (!op.open && ['anonymous', 'wrong_key', 'revoked_key', 'expired_jwt'].includes(caller) && res.status < 300) {
          failures.push(`${where}: an unauthenticated success`);
        }
        const expected = row.expect[caller];
        if (classOf(res.status) !== expected) failures.push(`${where}, the table expects ${expected}: ${res.text.slice(0, 300)}`);
      }
      printed.push(`  '${op.id}': ${CALLERS.map((c) => `${c}: ${show(classOf(seen[c]!))}`).join(', ')}`);
    }
    if (process.env.ALGOHOST_MATRIX_PRINT) console.log(printed.join('\n'));
    assert.deepEqual(failures, [], `${failures.length} cells differ from the table:\n${failures.join('\n')}`);
  });
});

/** The operations of the document, with what a request needs to know of each. */
function operationsOf(doc: { paths: Record<string, Record<string, unknown>> }): Operation[] {
  const out: Operation[] = [];
  for (const [template, item] of Object.entries(doc.paths)) {
    for (const [method, value] of Object.entries(item)) {
      const op = value as { operationId?: string; security?: unknown[]; requestBody?: { content: Record<string, unknown> } };
      if (!op.operationId) continue;
      out.push({
        id: op.operationId,
        method: method.toUpperCase(),
        template,
        open: Array.isArray(op.security) && op.security.length === 0,
        ...(op.requestBody ? { contentType: Object.keys(op.requestBody.content)[0] } : {}),
      });
    }
  }
  return out;
}

function matches(template: string, path: string): boolean {
  const pattern = template
    .split(/(\{[^}]+\})/)
    .map((part) => (part === '{*}' ? '.+' : part.startsWith('{') ? '[^/?]+' : part.replace(/[.*+?^$()[\]\\|]/g, '\\$&')))
    .join('');
  return new RegExp(`^${pattern}(\\?.*)?$`).test(path);
}

async function send(base: string, op: Operation, req: MatrixRequest, auth: string | undefined) {
  const contentType = req.raw !== undefined ? (op.contentType ?? 'text/plain') : undefined;
  return request(base, op.method, req.path, {
    ...(auth === undefined ? {} : { auth }),
    ...(req.raw !== undefined ? { raw: req.raw } : req.body !== undefined ? { body: req.body } : {}),
    headers: contentType ? { 'content-type': contentType === '*/*' ? 'text/plain' : contentType } : {},
  });
}

function classOf(status: number): Outcome | number {
  return status >= 200 && status < 300 ? '2xx' : status;
}

const show = (o: Outcome | number) => (o === '2xx' ? "'2xx'" : String(o));

/** A session token of alice's signed with the cluster's real secret, expired an hour ago. */
async function expiredSession(srv: TestServer, api: Client, world: World): Promise<string> {
  // Signing in makes the cluster's secret exist; then it is read where the cluster keeps it.
  const session = await api.post('/v1/auth/token', { body: { username: world.alice.name, password: world.alicePassword } });
  assert.equal(session.status, 200, session.text);
  const { value: secret } = await srv.server.services.db
    .selectFrom('cluster_settings')
    .select('value')
    .where('key', '=', 'session_jwt_secret')
    .executeTakeFirstOrThrow();
  const user = await api.get(`/v1/users/${world.alice.name}`, { key: world.adminKey });
  const now = Math.floor(Date.now() / 1000);
  const token = await signJwt({ sub: user.body.id as string, name: world.alice.name, iat: now - 7200, exp: now - 3600 }, secret);
  // The same token unexpired works: the matrix's 401s are the expiry's, not a bad signature's.
  const fresh = await signJwt({ sub: user.body.id as string, name: world.alice.name, iat: now, exp: now + 3600 }, secret);
  const ok = await api.get('/v1/auth/whoami', { auth: `Bearer ${fresh}` });
  assert.equal(ok.status, 200, ok.text);
  return token;
}

/** The world's names and the makers of fresh resources for requests that consume theirs. */
async function contextOf(srv: TestServer, world: World, api: Client, source: string): Promise<MatrixContext> {
  let n = 0;
  let pushes = 0;
  // A README (algorithm.source.readme reads it), changed by every push that makes a new build.
  const pushChange = async () => {
    await fs.promises.writeFile(path.join(source, 'README.md'), `# Hello\n\nchange ${++pushes}\n`);
    const pushed = await commitAndPush(source, `change ${pushes}`, { wait: true });
    assert.match(pushed.stderr, /build \S+ succeeded/, pushed.stderr);
  };
  await pushChange();
  const unique = (prefix: string) => `${prefix}matrix${++n}`;
  const alice = world.alice;
  const envId = world.environmentId;
  const ok = (res: { status: number; text: string }, status = 200) => assert.equal(res.status, status, res.text);
  const freshUser = async () => (await createUser(api, srv.adminKey, unique('u'))).name;
  const freshEventCluster = async () => {
    const made = await api.post('/v1/admin/event-clusters', {
      key: srv.adminKey,
      body: { name: unique('k'), bootstrap_servers: ['127.0.0.1:9'] },
    });
    ok(made);
    return made.body.id as string;
  };
  const eventCluster = await freshEventCluster();
  // An external SCM configuration whose provider does not exist: nothing here reaches a provider
  // before the caller's authorization is checked (the matrix has no forge).
  const freshScmConfig = async () => {
    const made = await api.post('/v1/admin/scms', {
      key: srv.adminKey,
      body: { name: unique('scm'), provider: 'gitea', urls: { web: 'http://127.0.0.1:9' }, oauth: { client_id: 'c', client_secret: 's' } },
    });
    ok(made);
    return made.body.id as string;
  };
  const algorithmRead = await api.get(`/v1/algorithms/${world.owner}/${world.algorithm}`, { key: alice.key });
  ok(algorithmRead);
  const freshEventFlow = async () => {
    const made = await api.post(`/v1/algorithms/${world.owner}/${world.algorithm}/event-flows`, {
      key: alice.key,
      body: {
        source_type: 'sqs',
        source_uri: `https://sqs.us-east-1.amazonaws.com/123456789012/${unique('q')}`,
        credentials: { role_arn: 'arn:aws:iam::123456789012:role/matrix' },
      },
    });
    ok(made);
    return made.body.id as string;
  };
  return {
    owner: world.owner,
    org: world.org,
    alice: alice.name,
    algorithm: world.algorithm,
    buildId: world.buildId,
    commit: world.commit,
    version: world.version,
    collection: world.collection,
    file: world.file,
    asyncRequestId: world.asyncRequestId,
    language: world.language,
    environmentSpecificationId: world.environmentSpecificationId,
    environmentId: envId,
    eventCluster,
    eventFlow: await freshEventFlow(),
    scmConfig: await freshScmConfig(),
    algorithmId: algorithmRead.body.id as string,
    unique,
    unpublishedBuild: async () => {
      const head = (await git(['rev-parse', 'HEAD'], source)).stdout.trim();
      const algorithm = await api.get(`/v1/algorithms/${world.owner}/${world.algorithm}`, { key: alice.key });
      ok(algorithm);
      if (algorithm.body.version_info?.git_hash === head) await pushChange();
    },
    freshUser,
    freshInvitee: async () => {
      const name = await freshUser();
      ok(await api.put(`/v1/organizations/${world.org}/members/${name}`, { key: alice.key }), 202);
      return name;
    },
    freshInvitingOrg: async () => {
      const inviter = await createUser(api, srv.adminKey, unique('u'));
      const org = unique('o');
      ok(await api.post('/v1/organizations', { key: inviter.key, body: { org_name: org } }));
      ok(await api.put(`/v1/organizations/${org}/members/${alice.name}`, { key: inviter.key }), 202);
      return org;
    },
    freshMember: async () => {
      const user = await createUser(api, srv.adminKey, unique('u'));
      await addMember(api, world.org, alice.key, user);
      return user.name;
    },
    freshOrg: async () => {
      const org = unique('o');
      ok(await api.post('/v1/organizations', { key: alice.key, body: { org_name: org } }));
      return org;
    },
    freshAlicesKey: async () => {
      const made = await api.post(`/v1/users/${alice.name}/keys`, { key: alice.key, body: {} });
      ok(made);
      return made.body.id as string;
    },
    freshAlgorithm: async () => {
      const name = unique('A');
      ok(await api.post(`/v1/algorithms/${world.owner}`, { key: alice.key, body: { name, settings: { algorithm_environment: envId } } }));
      return name;
    },
    freshFile: async () => {
      const name = `${unique('f')}.txt`;
      ok(await api.put(`/v1/data/${world.owner}/${world.collection}/${name}`, { key: alice.key, raw: 'fresh' }));
      return name;
    },
    freshEventCluster,
    freshEventFlow,
    freshScmConfig,
  };
}
