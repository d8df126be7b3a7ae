/**
 * Schema fuzzing: schemathesis (scripts/install-test-deps.sh installs it) generates requests from
 * the server's own /v1/openapi.json and runs every check against a real server: no 5xx, answers
 * as documented, requests the document calls valid accepted and invalid ones refused, 405 with
 * Allow for other methods, authentication enforced, created resources found, deleted ones gone.
 * Requests go as alice, who owns a built and published algorithm, a collection and an async
 * call's result (support/world.ts), with a fixed seed and a bounded number of examples per
 * operation; bench/fuzz-long.ts runs longer with a random seed.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { runSchemathesis, schemathesisInstalled } from '../support/schemathesis.js';
import { makeTempDir, startTestServer, type TestServer } from '../support/server.js';
import { seedWorld, type World } from '../support/world.js';
import fs from 'node:fs';

const SEED = 17;
const EXAMPLES = 10;

describe('schema fuzzing (schemathesis)', () => {
  let srv: TestServer;
  let world: World;
  let reports: string;

  before(async () => {
    assert.ok(schemathesisInstalled(), 'schemathesis is missing: run bash scripts/install-test-deps.sh (npm test does)');
    srv = await startTestServer();
    world = await seedWorld(srv);
    reports = await makeTempDir('algohost-fuzz-');
  });
  after(async () => {
    await srv?.stop();
    if (reports) await fs.promises.rm(reports, { recursive: true, force: true });
  });

  test(`every operation, every check, seed ${SEED}: no failure`, async () => {
    const result = await runSchemathesis(world, { seed: SEED, maxExamples: EXAMPLES, reportDir: reports });
    const summary = result.output.slice(result.output.lastIndexOf('SUMMARY'));
    assert.equal(result.code, 0, `schemathesis found failures:\n${result.output.slice(-20000)}`);
    assert.match(summary, /Tested: (\d+)/);
    assert.match(summary, /(\d+) generated, \1 passed/, summary);
  });
});
