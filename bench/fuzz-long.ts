/**
 * The long schema-fuzzing run: what packages/server/test/api/schema-fuzz.test.ts does in `npm test`
 * (every schemathesis check against the server's own /v1/openapi.json, as the owner of a built,
 * published algorithm, a collection and an async result from test/support/world.ts), but with a
 * random seed, many examples per operation and a time budget, so each run explores new inputs.
 * The seed is printed first: rerun a failure with the same seed to reproduce it.
 * Run: node --import tsx bench/fuzz-long.ts [examples=200] [seconds=600] [seed=random]
 * Exit status: schemathesis's (0 when nothing failed).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import { runSchemathesis, schemathesisInstalled } from '../packages/server/test/support/schemathesis.js';
import { makeTempDir, startTestServer } from '../packages/server/test/support/server.js';
import { seedWorld } from '../packages/server/test/support/world.js';

const EXAMPLES = Number(process.argv[2] ?? 200);
const SECONDS = Number(process.argv[3] ?? 600);
const SEED = process.argv[4] === undefined ? crypto.randomInt(1, 2 ** 31) : Number(process.argv[4]);

if (!schemathesisInstalled()) {
  console.error('schemathesis is missing: run bash scripts/install-test-deps.sh');
  process.exit(2);
}
console.log(`fuzz-long: seed ${SEED}, ${EXAMPLES} examples per operation, at most ${SECONDS} s`);
const srv = await startTestServer();
const reports = await makeTempDir('algohost-fuzz-long-');
let code = 1;
try {
  const world = await seedWorld(srv);
  const result = await runSchemathesis(world, {
    seed: SEED,
    maxExamples: EXAMPLES,
    maxTime: SECONDS,
    reportDir: reports,
    onOutput: (chunk) => process.stdout.write(chunk),
  });
  code = result.code;
  console.log(`\nfuzz-long: seed ${SEED}: ${code === 0 ? 'no failure' : `failures (exit ${code}); reports in ${reports}`}`);
} finally {
  await srv.stop();
  if (code === 0) await fs.promises.rm(reports, { recursive: true, force: true });
}
process.exit(code);
