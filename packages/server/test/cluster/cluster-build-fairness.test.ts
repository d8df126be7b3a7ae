/**
 * Cluster mode: one tenant's slow builds cannot take every worker's build slots. Builds reach
 * the workers in push order through JetStream; each worker keeps the per-account limit for the
 * builds it runs (BuildService.runDispatched), so a free slot goes to the next account's build.
 * An API node and two workers in this process (support/server.ts), sharing PostgreSQL, NATS and S3:
 *
 *   ALGOHOST_TEST_SERVICES=postgres,nats,s3 bash scripts/with-services.sh \
 *     bash scripts/run-tests.sh packages/server/test/cluster/cluster-build-fairness.test.ts
 *
 * Mallory's builds are held open by gates in front of both workers' builders, so nothing here
 * depends on timing.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { type FairnessWorld, type PushedBuild, startFairnessWorld, waitFor } from '../support/build-gates.js';

const missing = (['ALGOHOST_TEST_POSTGRES_URL', 'ALGOHOST_TEST_NATS_URL', 'ALGOHOST_TEST_S3_ENDPOINT'] as const).filter(
  (name) => !process.env[name],
);

describe('build fairness across accounts on a cluster', { skip: missing.length ? `needs ${missing.join(', ')}` : false }, () => {
  let world: FairnessWorld | undefined;
  after(async () => {
    await world?.close();
  });

  test("mallory's four slow builds take one slot per worker, not all four: alice's build runs beside them", async () => {
    // Two workers with two build slots each; one build per account on each (the default).
    world = await startFairnessWorld({ topology: 'cluster', env: { ALGOHOST_BUILD_CONCURRENCY: '2' } });
    const { srv, alice, mallory, gates, push, status } = world;
    assert.equal(srv.config.buildsPerAccount, 1);
    assert.equal(srv.runnerServers.length, 2);
    const held: PushedBuild[] = [];
    for (const name of ['HoldOne', 'HoldTwo', 'HoldThree', 'HoldFour']) held.push(await push(mallory, name, true));
    const mallorysRunning = () => held.filter((b) => gates.entered.has(b.sha)).length;
    await waitFor('mallory holding a slot on each worker', () => mallorysRunning() >= 2);

    const a = await push(alice, 'Quick', false);
    await waitFor("alice's build to succeed while mallory's are held", async () => (await status(a)) === 'succeeded');
    assert.equal(mallorysRunning(), 2, 'mallory never had more than one build running per worker');
    const states = await Promise.all(held.map(status));
    assert.deepEqual(states.filter((s) => s === 'in-progress').length, 2, states.join());
    assert.deepEqual(states.filter((s) => s === 'queued').length, 2, states.join());

    // Released, mallory's builds all finish: her waiting ones were offered again, not lost.
    gates.releaseAll();
    for (const b of held) await waitFor(`${b.name} to succeed`, async () => (await status(b)) === 'succeeded');
  });
});
