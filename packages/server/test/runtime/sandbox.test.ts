import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createAndBuild } from '../support/algorithms.js';
import { createUser, type TestUser } from '../support/fixtures.js';
import { client, request, type Client } from '../support/http.js';
import { startTestServer, type TestServer } from '../support/server.js';

/** cpu.cfs_quota_us (or the cpu.max quota) of every runner cgroup on this machine. */
function cpuQuotas(): number[] {
  const quotas: number[] = [];
  const visit = (dir: string, depth: number) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      if (e.isFile() && (e.name === 'cpu.cfs_quota_us' || e.name === 'cpu.max') && dir.includes('/algohost/')) {
        const quota = Number(fs.readFileSync(path.join(dir, e.name), 'utf8').trim().split(' ')[0]);
        if (Number.isFinite(quota)) quotas.push(quota);
      }
      if (e.isDirectory() && depth < 8) visit(path.join(dir, e.name), depth + 1);
    }
  };
  visit(fs.existsSync('/sys/fs/cgroup/cpu') ? '/sys/fs/cgroup/cpu' : '/sys/fs/cgroup', 0);
  return quotas;
}

const HOSTILE = fileURLToPath(new URL('../../../../test/fixtures/hostile/python/', import.meta.url));

/** The hostile algorithm tries what it must not do; every attempt is contained, the service serves on. */
describe('sandbox and limits (hostile Python algorithm)', () => {
  let srv: TestServer;
  let api: Client;
  let mallory: TestUser;
  let sha: string;
  let netSha: string;
  const run = async (input: unknown, query = '', name = 'Hostile', commit = sha) =>
    request(srv.url, 'POST', `/v1/algo/mallory/${name}/${commit}${query}`, { key: mallory.key, body: input });

  before(async () => {
    // The environment's own memory limit (192 MiB) overrides the cluster's (256 MiB); the CPU
    // quota has an odd value so that this server's runner groups can be told from others'.
    // One runner per algorithm: every call after a failed one lands where the failure was.
    srv = await startTestServer({
      env: {
        ALGOHOST_RUNNERS_PER_ALGORITHM: '1',
        ALGOHOST_RUNNER_MEMORY: '256',
        ALGOHOST_ENVIRONMENT_MEMORY: 'python311=192',
        ALGOHOST_RUNNER_PIDS: '64',
        ALGOHOST_RUNNER_CPUS: '0.37',
      },
    });
    api = client(srv.url);
    mallory = await createUser(api, srv.adminKey, 'mallory');
    sha = await createAndBuild(srv.url, api, mallory, 'mallory', 'Hostile', HOSTILE, { environment: 'python311' });
    netSha = await createAndBuild(srv.url, api, mallory, 'mallory', 'Networked', HOSTILE.replace(/\/$/, ''), {
      environment: 'python311',
      settings: { network_access: 'full' },
    }).catch(() => '');
  });
  after(() => srv.stop());

  test('runs as an unprivileged uid', async () => {
    const res = await run({ op: 'whoami' });
    assert.deepEqual(res.body.result, { uid: 65534, gid: 65534 });
  });

  test('cannot read host secrets, the data directory, the database or other builds', async () => {
    for (const p of ['/etc/shadow', path.join(srv.dataDir, 'algohost.sqlite'), path.join(srv.dataDir, 'initial-admin-key')]) {
      const res = await run({ op: 'read', path: p });
      assert.equal(res.body.result.ok, false, `${p} was readable: ${JSON.stringify(res.body.result)}`);
    }
    for (const p of [
      srv.dataDir,
      path.join(srv.dataDir, 'repositories'),
      path.join(srv.dataDir, 'builds', 'artifacts'),
      '/root',
      '/home',
    ]) {
      const res = await run({ op: 'list', path: p });
      assert.equal(res.body.result.ok, false, `${p} was listable: ${JSON.stringify(res.body.result)}`);
    }
  });

  test("does not see the service's environment", async () => {
    const env = (await run({ op: 'env' })).body.result as Record<string, string>;
    assert.ok(!Object.values(env).some((v) => v.includes(srv.adminKey)), 'the admin key leaked');
    assert.deepEqual(
      Object.keys(env).filter((k) => k.startsWith('ALGOHOST_') && !['ALGOHOST_RESPONSE_FIFO', 'ALGOHOST_ALGORITHM_NAME'].includes(k)),
      [],
    );
  });

  test('network_access isolated reaches nothing, not even the host loopback; full neither, and has the egress proxy', async () => {
    const port = Number(new URL(srv.url).port);
    const isolated = await run({ op: 'connect', host: '127.0.0.1', port });
    assert.equal(isolated.body.result.ok, false);
    assert.ok(netSha, 'the networked algorithm built');
    // Full network is outbound to public addresses through the node's egress proxy
    // (security-full-network.test.ts), never the host's own network.
    const full = await run({ op: 'connect', host: '127.0.0.1', port }, '', 'Networked', netSha);
    assert.equal(full.body.result.ok, false, JSON.stringify(full.body.result));
    const env = (await run({ op: 'env' }, '', 'Networked', netSha)).body.result as Record<string, string>;
    assert.equal(env.HTTPS_PROXY, 'http://127.0.0.1:3128');
  });

  test('an endless loop is a TimeoutError for that call; the next call gets a fresh runner', async () => {
    const res = await run({ op: 'loop' }, '?timeout=2');
    assert.equal(res.status, 200);
    assert.equal(res.body.error.error_type, 'TimeoutError');
    assert.deepEqual((await run({ op: 'echo' })).body.result, { echo: { op: 'echo' } });
  });

  test('unbounded allocation is an OutOfMemoryError naming the limit', async () => {
    const res = await run({ op: 'alloc' });
    assert.equal(res.body.error.error_type, 'OutOfMemoryError');
    assert.match(res.body.error.message, /192 MiB/);
    assert.deepEqual((await run({ op: 'echo' })).body.result, { echo: { op: 'echo' } });
  });

  test('a warm runner sits in a cgroup with the configured CPU quota', async () => {
    assert.deepEqual((await run({ op: 'echo' })).body.result, { echo: { op: 'echo' } });
    assert.ok(cpuQuotas().includes(37_000), `no runner cgroup with cpu.cfs_quota_us 37000: ${cpuQuotas().join(', ')}`);
  });

  test('a fork bomb hits the process limit; a full /tmp is ENOSPC; both only fail that call', async () => {
    const fork = await run({ op: 'fork' }, '?timeout=20');
    assert.equal(fork.status, 200);
    assert.ok(fork.body.error || fork.body.result.ok === false, JSON.stringify(fork.body).slice(0, 300));
    const disk = await run({ op: 'disk' });
    assert.ok(disk.body.error || /No space left/.test(disk.body.result.error), JSON.stringify(disk.body).slice(0, 300));
    assert.deepEqual((await run({ op: 'echo' })).body.result, { echo: { op: 'echo' } });
  });

  test('exiting or crashing mid-call is a SystemExit; output over 15 MB is refused naming the limit', async () => {
    assert.equal((await run({ op: 'exit' })).body.error.error_type, 'SystemExit');
    assert.equal((await run({ op: 'crash' })).body.error.error_type, 'SystemExit');
    const big = await run({ op: 'big' });
    assert.equal(big.body.error.error_type, 'TooLargeError');
    assert.match(big.body.error.message, /15 MB/);
    assert.deepEqual((await run({ op: 'echo' })).body.result, { echo: { op: 'echo' } });
  });

  test('a runner killed for a response far over the cap is never handed to the next call', async () => {
    // Past 1.4 × the 15 MB cap the host stops reading and kills the runner mid-response. The
    // calls queued behind it (one runner per algorithm) must each get a fresh runner and their
    // own result, never the dying one (whose exit would fail them as a SystemExit).
    const big = run({ op: 'big', bytes: 25_000_000, sleep: 0.5 });
    const next = [1, 2, 3].map((n) => run({ op: 'echo', n }));
    const killed = await big;
    assert.equal(killed.status, 200);
    assert.equal(killed.body.error?.error_type, 'TooLargeError', JSON.stringify(killed.body).slice(0, 300));
    assert.match(killed.body.error.message, /15 MB/);
    for (const [i, res] of (await Promise.all(next)).entries()) {
      assert.deepEqual(res.body.result, { echo: { op: 'echo', n: i + 1 } }, JSON.stringify(res.body).slice(0, 300));
    }
    assert.deepEqual((await run({ op: 'echo' })).body.result, { echo: { op: 'echo' } });
  });

  test('a forged response on the FIFO that is not a JSON object fails that call only', async () => {
    const forged = await run({ op: 'forge' });
    assert.equal(forged.status, 200);
    assert.equal(forged.body.error.error_type, 'SystemExit');
    assert.deepEqual((await run({ op: 'echo' })).body.result, { echo: { op: 'echo' } });
  });

  test('a forged response nesting 100,000 levels fails that call with the limit named, not the server', async () => {
    const deep = await run({ op: 'deep' });
    assert.equal(deep.status, 200, deep.text.slice(0, 300));
    assert.equal(deep.body.error.error_type, 'SystemExit');
    assert.match(deep.body.error.message, /deeper than the limit of 1000 levels/);
    assert.deepEqual((await run({ op: 'echo' })).body.result, { echo: { op: 'echo' } });
  });

  test('megabytes of prints do not break the call; stdout is for the owner only', async () => {
    const res = await run({ op: 'print', bytes: 3 * 1024 * 1024 }, '?stdout=True');
    assert.equal(res.body.result, 'printed');
    assert.ok(typeof res.body.metadata.stdout === 'string' && res.body.metadata.stdout.length > 0);
  });

  test('load() ran once per runner, not per call', async () => {
    await run({ op: 'echo' });
    await run({ op: 'echo' });
    assert.equal((await run({ op: 'loads' })).body.result, 1);
  });

  test('an algorithm error is HTTP 200 with error, message and stack trace', async () => {
    const res = await run({ op: 'raise' });
    assert.equal(res.status, 200);
    assert.equal(res.body.error.error_type, 'AlgorithmError');
    assert.match(res.body.error.message, /bad input on purpose/);
    assert.match(res.body.error.stacktrace, /ValueError/);
  });
});
