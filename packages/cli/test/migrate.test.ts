/**
 * The spec's migration workflow end to end with `algo migrate`: two algohost servers side by
 * side (own ports and data directories), the real git CLI, a build and a publish at the
 * destination, a second promotion round, and a migration between owners on one cluster.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { environmentId } from '../../server/test/support/algorithms.js';
import { createUser, type TestUser } from '../../server/test/support/fixtures.js';
import { clone, commitAndPush, gitUrl, removeClone } from '../../server/test/support/git.js';
import { client, type Client } from '../../server/test/support/http.js';
import { startTestServer, type TestServer } from '../../server/test/support/server.js';
import { algo, assertOk, assertOneLineFailure, makeHome, type CliResult } from './support/run-cli.js';

interface Row {
  source: string;
  source_version: string | null;
  destination: string;
  destination_version: string | null;
  action: string;
}

const rows = (r: CliResult): Row[] => {
  assertOk(r, 'migrate');
  return JSON.parse(r.stdout) as Row[];
};

describe('algo migrate between two clusters and between owners', () => {
  let dev: TestServer;
  let prod: TestServer;
  let devApi: Client;
  let prodApi: Client;
  let alice: TestUser;
  let carol: TestUser;
  let prodAlice: TestUser;
  let home: string;
  let work: string;
  const run = (args: string[]) => algo(args, { home, timeoutMs: 300_000 });

  /** Writes code answering `label` (plus a nested data file) and pushes it to dev's alice/name. */
  async function pushToDev(name: string, label: string): Promise<void> {
    fs.mkdirSync(path.join(work, 'src', 'words'), { recursive: true });
    fs.writeFileSync(path.join(work, 'src', 'words', 'label.txt'), label);
    fs.writeFileSync(
      path.join(work, 'src', `${name}.py`),
      'import os\n\ndef apply(input):\n    with open(os.path.join(os.path.dirname(__file__), "words", "label.txt")) as f:\n        return f.read()\n',
    );
    const push = await commitAndPush(work, label, { wait: true });
    assert.match(push.stderr, /succeeded/, push.stderr);
  }

  const callOn = async (api: Client, user: TestUser, address: string) => {
    const res = await api.post(`/v1/algo/${address}`, { key: user.key, body: null });
    assert.equal(res.status, 200, res.text);
    return res.body.result as string;
  };

  before(async () => {
    [dev, prod] = await Promise.all([startTestServer(), startTestServer()]);
    devApi = client(dev.url);
    prodApi = client(prod.url);
    alice = await createUser(devApi, dev.adminKey, 'alice');
    carol = await createUser(devApi, dev.adminKey, 'carol');
    prodAlice = await createUser(prodApi, prod.adminKey, 'alice');
    home = await makeHome();

    const env = await environmentId(devApi, alice.key, 'python311');
    for (const name of ['Hello', 'Other']) {
      const created = await devApi.post('/v1/algorithms/alice', {
        key: alice.key,
        body: {
          name,
          details: { summary: `${name} says its label` },
          settings: { algorithm_environment: env, license: 'mit', source_visibility: 'open', network_access: 'isolated' },
        },
      });
      assert.equal(created.status, 200, created.text);
    }
    ({ dir: work } = await clone(gitUrl(dev.url, 'alice', alice.key, 'alice', 'Hello')));
    fs.writeFileSync(path.join(work, 'requirements.txt'), '');
    await pushToDev('Hello', 'v1');
    const published = await devApi.post('/v1/algorithms/alice/Hello/versions', {
      key: alice.key,
      body: { version_info: { version_type: 'major' } },
    });
    assert.equal(published.body.version_info.semantic_version, '1.0.0', published.text);

    assertOk(await run(['auth', '--profile', 'dev', '--server', dev.url, '--key', alice.key, '--username', 'alice']), 'auth dev');
    assertOk(await run(['auth', '--profile', 'carol', '--server', dev.url, '--key', carol.key, '--username', 'carol']), 'auth carol');
    assertOk(await run(['auth', '--profile', 'prod', '--server', prod.url, '--key', prodAlice.key, '--username', 'alice']), 'auth prod');
  });
  after(async () => {
    await removeClone(work);
    await Promise.all([dev.stop(), prod.stop()]);
    await fs.promises.rm(home, { recursive: true, force: true });
  });

  test('--dry-run says what it would do and changes nothing', async () => {
    const r = await run(['migrate', 'alice/Hello', '--profile', 'dev', '--to', 'prod', '--dry-run', '--json']);
    assert.deepEqual(
      rows(r).map((x) => x.action),
      ['planned'],
    );
    assert.match(r.stderr, /would create alice\/Hello in environment python311 \(destination id [0-9a-f-]{36}\)/);
    assert.equal((await prodApi.get('/v1/algorithms/alice/Hello', { key: prodAlice.key })).status, 404);
  });

  test('first round: the destination is created from the source metadata, built, published, and answers alike', async () => {
    const r = await run(['migrate', 'alice/Hello', '--profile', 'dev', '--to', 'prod', '--json']);
    assert.deepEqual(rows(r), [
      {
        ...rows(r)[0],
        source: 'alice/Hello',
        source_version: '1.0.0',
        destination: 'alice/Hello',
        destination_version: '0.1.0',
        action: 'created',
      },
    ]);
    for (const step of ['creating alice/Hello', 'cloning', 'copying the working files', 'pushing', 'publishing']) {
      assert.match(r.stderr, new RegExp(`\\[1/1\\] alice/Hello: ${step}`), r.stderr);
    }
    const source = (await devApi.get('/v1/algorithms/alice/Hello', { key: alice.key })).body;
    const dest = (await prodApi.get('/v1/algorithms/alice/Hello', { key: prodAlice.key })).body;
    assert.equal(dest.details.summary, source.details.summary);
    for (const k of ['license', 'source_visibility', 'network_access', 'pipeline_enabled', 'package_set', 'language'] as const) {
      assert.equal(dest.settings[k], source.settings[k], k);
    }
    // Environment ids are per cluster: the destination's is its own.
    assert.notEqual(dest.settings.algorithm_environment, source.settings.algorithm_environment);
    assert.equal(dest.settings.algorithm_environment, await environmentId(prodApi, prodAlice.key, 'python311'));
    assert.equal(await callOn(prodApi, prodAlice, 'alice/Hello/0.1.0'), await callOn(devApi, alice, 'alice/Hello/1.0.0'));
    assert.equal(await callOn(prodApi, prodAlice, 'alice/Hello/0.1.0'), 'v1');
  });

  test('the same owner and name on the same cluster is refused', async () => {
    assertOneLineFailure(await run(['migrate', 'alice/Hello', '--profile', 'dev']), /owner, name and cluster must identify one algorithm/);
    const again = await devApi.post('/v1/algorithms/alice', { key: alice.key, body: { name: 'Hello' } });
    assert.equal(again.status, 409, again.text);
  });

  test('between owners on one cluster', async () => {
    const r = rows(await run(['migrate', 'alice/Hello', '--profile', 'dev', '--to', 'carol', '--to-owner', 'carol', '--json']));
    assert.equal(r[0]!.destination, 'carol/Hello');
    assert.equal(r[0]!.destination_version, '0.1.0');
    assert.equal(await callOn(devApi, carol, 'carol/Hello/0.1.0'), 'v1');
  });

  test('second round: a new source version is promoted to the next destination version; a rerun is up to date', async () => {
    await pushToDev('Hello', 'v2');
    const published = await devApi.post('/v1/algorithms/alice/Hello/versions', { key: alice.key, body: {} });
    assert.equal(published.body.version_info.semantic_version, '1.1.0');
    const second = rows(await run(['migrate', 'alice/Hello', '--profile', 'dev', '--to', 'prod', '--json']));
    assert.deepEqual(
      second.map((x) => [x.source_version, x.destination_version, x.action]),
      [['1.1.0', '0.2.0', 'promoted']],
    );
    assert.equal(await callOn(prodApi, prodAlice, 'alice/Hello/latestPrivate'), 'v2');
    assert.equal(await callOn(prodApi, prodAlice, 'alice/Hello/0.1.0'), 'v1');
    const rerun = rows(await run(['migrate', 'alice/Hello', '--profile', 'dev', '--to', 'prod', '--json']));
    assert.deepEqual(
      rerun.map((x) => [x.destination_version, x.action]),
      [['0.2.0', 'up-to-date']],
    );
  });

  test("all of an owner's algorithms at once, with a table report", async () => {
    const r = await run(['migrate', 'alice', '--profile', 'dev', '--to', 'prod']);
    assertOk(r, 'migrate all');
    assert.match(r.stdout, /^SOURCE\s+VERSION\s+DESTINATION\s+VERSION\s+ACTION$/m);
    assert.match(r.stdout, /alice\/Hello\s+1\.1\.0\s+alice\/Hello\s+0\.2\.0\s+up-to-date/);
    // Other was never built at the source: its template is copied, built and published.
    assert.match(r.stdout, /alice\/Other\s+\S+\s+alice\/Other\s+0\.1\.0\s+created/);
    assert.match(r.stderr, /\[2\/2\] alice\/Other: publishing/);
  });
});
