/**
 * Issue 11, items 9 and 10: one tenant cannot take the build slots or the runners' memory from
 * the others. Mallory's builds are held open by a hook in front of the real builder (a gate per
 * commit the test releases), so nothing here depends on timing; her calls are held by an
 * algorithm that sleeps, and the pool's own count tells when they hold their runners.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createAndBuild } from '../support/algorithms.js';
import { type FairnessWorld, startFairnessWorld, waitFor, writeAlgorithm } from '../support/build-gates.js';
import { createUser, type TestUser } from '../support/fixtures.js';
import { client, request, type Client } from '../support/http.js';
import { DATABASES, makeTempDir, startTestServer, type TestServer } from '../support/server.js';

/** The cgroup v1 CPU hierarchy's algohost group of this process, when the machine has one. */
function v1CpuBase(): string | undefined {
  const line = fs
    .readFileSync('/proc/self/cgroup', 'utf8')
    .split('\n')
    .find((l) => l.split(':')[1]?.split(',').includes('cpu'));
  const dir = line && path.join('/sys/fs/cgroup/cpu', line.split(':')[2] ?? '/', 'algohost');
  return dir && fs.existsSync(dir) ? dir : undefined;
}

for (const database of DATABASES) {
  describe(`build fairness across accounts (${database})`, () => {
    const worlds: FairnessWorld[] = [];
    const setUp = async (env: Record<string, string>) => {
      const world = await startFairnessWorld({ database, env });
      worlds.push(world);
      return world;
    };
    after(async () => {
      for (const w of worlds) await w.close();
    });

    test("mallory's slow builds do not hold alice's back: one build per account at a time (the default with two slots)", async () => {
      const { srv, alice, mallory, gates, push, status } = await setUp({ ALGOHOST_BUILD_CONCURRENCY: '2' });
      assert.equal(srv.config.buildsPerAccount, 1, 'default: half of the two build slots');
      const m1 = await push(mallory, 'SlowOne', true);
      const m2 = await push(mallory, 'SlowTwo', true);
      await waitFor("mallory's first build to start", () => gates.entered.has(m1.sha));

      const a = await push(alice, 'Quick', false);
      await waitFor("alice's build to succeed while mallory's are held", async () => (await status(a)) === 'succeeded');
      assert.equal(await status(m1), 'in-progress');
      assert.equal(await status(m2), 'queued', "mallory's second build waits for her first");
      assert.equal(gates.entered.has(m2.sha), false);

      const res = await request(srv.url, 'POST', `/v1/algo/alice/Quick/${a.sha}`, { key: alice.key, body: 'hi' });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.result, 'alice/Quick answers hi');

      gates.release(m1.sha);
      await waitFor("mallory's second build to start after her first", () => gates.entered.has(m2.sha));
      assert.equal(await status(m1), 'succeeded');
      gates.release(m2.sha);
      await waitFor("mallory's second build to succeed", async () => (await status(m2)) === 'succeeded');
    });

    test('a freed slot goes to the account with the fewest builds running, not to the oldest queued build', async () => {
      const { mallory, alice, gates, push, status } = await setUp({
        ALGOHOST_BUILD_CONCURRENCY: '2',
        ALGOHOST_BUILDS_PER_ACCOUNT: '2',
      });
      const m1 = await push(mallory, 'HoldOne', true);
      const m2 = await push(mallory, 'HoldTwo', true);
      await waitFor("mallory's builds to take both slots", () => gates.entered.has(m1.sha) && gates.entered.has(m2.sha));
      const m3 = await push(mallory, 'HoldThree', true);
      const a = await push(alice, 'Fair', true);
      assert.equal(await status(a), 'queued', 'both slots are taken');

      gates.release(m1.sha);
      await waitFor("alice's build to take the freed slot", () => gates.entered.has(a.sha));
      assert.equal(gates.entered.has(m3.sha), false, "mallory's older third build still waits");
      assert.equal(await status(m3), 'queued');

      gates.releaseAll();
      for (const b of [m1, m2, m3, a]) await waitFor(`${b.name} to succeed`, async () => (await status(b)) === 'succeeded');
    });
  });
}

describe('runner limits per account and the node memory budget', () => {
  let srv: TestServer;
  let api: Client;
  let alice: TestUser;
  let mallory: TestUser;
  const sha: Record<string, string> = {};
  const held: Promise<unknown>[] = [];

  const call = (user: TestUser, name: string, body: unknown, query = '') =>
    request(srv.url, 'POST', `/v1/algo/${user.name}/${name}/${sha[name]}${query}`, { key: user.key, body });
  /** Starts a call that sleeps in its runner; the server's stop ends it. */
  const hold = (user: TestUser, name: string) => held.push(call(user, name, { sleep: 600 }, '?timeout=600').catch(() => undefined));
  const usage = (name: string) => [...srv.server.services.pool.usage().values()].find((u) => u.name === name);
  const nodeRunners = () => [...srv.server.services.pool.usage().values()].reduce((n, u) => n + u.runners, 0);

  before(async () => {
    srv = await startTestServer({
      env: {
        ALGOHOST_RUNNER_MEMORY: '256',
        ALGOHOST_RUNNER_MEMORY_BUDGET: '768',
        ALGOHOST_RUNNERS_PER_ACCOUNT: '2',
        ALGOHOST_RUNNER_MEMORY_PER_ACCOUNT: '768',
      },
    });
    api = client(srv.url);
    alice = await createUser(api, srv.adminKey, 'alice');
    mallory = await createUser(api, srv.adminKey, 'mallory');
    for (const [user, name] of [
      [mallory, 'HogOne'],
      [mallory, 'HogTwo'],
      [mallory, 'HogThree'],
      [alice, 'Mine'],
      [alice, 'Other'],
    ] as const) {
      const dir = await makeTempDir('algohost-tree-');
      writeAlgorithm(dir, user.name, name);
      sha[name] = await createAndBuild(srv.url, api, user, user.name, name, dir, { environment: 'python311' });
      await fs.promises.rm(dir, { recursive: true, force: true });
    }
  });
  after(async () => {
    await srv.stop();
    await Promise.all(held);
  });

  test("mallory cannot hold more runners than her limit; alice's call still gets a runner and her own result", async () => {
    hold(mallory, 'HogOne');
    hold(mallory, 'HogTwo');
    await waitFor("mallory's two calls to hold their runners", () => usage('mallory')?.busy === 2);

    // Under contention accounts share the CPU equally: each has one CPU group its runners sit in.
    const cpuBase = v1CpuBase();
    if (cpuBase) {
      const id = [...srv.server.services.pool.usage()].find(([, u]) => u.name === 'mallory')![0];
      const accountGroup = path.join(cpuBase, `account-${id}`);
      // "Busy" counts runners still starting too: their sandboxes (and groups) may come a moment later.
      const groups = () => (fs.existsSync(accountGroup) ? fs.readdirSync(accountGroup).filter((n) => n.startsWith('s-')) : []);
      await waitFor("mallory's two runners in her account's CPU group", () => groups().length === 2);
      assert.equal(groups().length, 2, "mallory's two runners are in her account's CPU group");
    }

    const refused = await call(mallory, 'HogThree', 'more');
    assert.equal(refused.status, 429, refused.text);
    assert.match(
      refused.body.error.message,
      /mallory's algorithms already have 2 runners on this node, the most one account may have \(2\)/,
    );
    assert.ok(Number(refused.headers.get('retry-after')) >= 1);
    assert.equal(usage('mallory')?.runners, 2);

    const res = await call(alice, 'Mine', 'hello');
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.result, 'alice/Mine answers hello');
  });

  test('a runner that does not fit the node budget is refused with 503 naming the budget, after idle runners made room', async () => {
    // The budget holds three 256 MiB runners: mallory's two busy ones and alice's idle Mine.
    assert.equal(nodeRunners(), 3);
    hold(alice, 'Other'); // takes the place of the idle runner of Mine
    await waitFor("alice's Other to hold its runner", () => usage('alice')?.busy === 1 && nodeRunners() === 3);

    const res = await call(alice, 'Mine', 'again');
    assert.equal(res.status, 503, res.text);
    assert.match(res.body.error.message, /this node's runner memory budget of 768 MiB and all are busy/);
    assert.equal(usage('mallory')?.busy, 2, 'busy runners are never stopped to make room');
  });
});
