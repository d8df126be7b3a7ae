/**
 * Runs schemathesis (installed by scripts/install-test-deps.sh into the test cache, $ALGOHOST_TEST_CACHE) against
 * a running server's /v1/openapi.json, as alice of the given world, with schema-fuzz.toml.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { client } from './http.js';
import type { World } from './world.js';

export const SCHEMATHESIS = path.join(process.env.ALGOHOST_TEST_CACHE ?? '/var/cache/algohost-test', 'schemathesis/bin/schemathesis');
const CONFIG = fileURLToPath(new URL('../api/schema-fuzz.toml', import.meta.url));

export interface FuzzOptions {
  seed?: number;
  /** Examples per operation and phase. */
  maxExamples: number;
  /** Seconds for the whole run (fuzzing and stateful phases repeat until it is spent). */
  maxTime?: number;
  /** Where the JUnit report goes. */
  reportDir: string;
  /** Passed on: where the output goes as it comes (the bench shows it). */
  onOutput?: (chunk: string) => void;
}

export interface FuzzResult {
  code: number;
  output: string;
}

export function schemathesisInstalled(): boolean {
  return fs.existsSync(SCHEMATHESIS);
}

/** Runs every check of every phase; resolves with schemathesis's exit code and output. */
export async function runSchemathesis(world: World, opts: FuzzOptions): Promise<FuzzResult> {
  const session = await client(world.url).post('/v1/auth/token', { body: { username: world.alice.name, password: world.alicePassword } });
  if (session.status !== 200) throw new Error(`signing alice in: ${session.text}`);
  const env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    LANG: 'C.UTF-8',
    // No telemetry and no progress animation in a test log.
    SCHEMATHESIS_TELEMETRY: 'false',
    NO_COLOR: '1',
    FUZZ_AUTHORIZATION: `Bearer ${session.body.token as string}`,
    FUZZ_OTHER_AUTHORIZATION: `Simple ${world.carol.key}`,
    FUZZ_USER: world.alice.name,
    FUZZ_OWNER: world.owner,
    FUZZ_ORG: world.org,
    FUZZ_ALGORITHM: world.algorithm,
    FUZZ_BUILD_ID: world.buildId,
    FUZZ_COMMIT: world.commit,
    FUZZ_VERSION: world.version,
    FUZZ_COLLECTION: world.collection,
    FUZZ_REQUEST_ID: world.asyncRequestId,
    FUZZ_LANGUAGE: world.language,
    FUZZ_SPECIFICATION_ID: world.environmentSpecificationId,
  };
  const args = [
    '--config-file',
    CONFIG,
    'run',
    `${world.url}/v1/openapi.json`,
    '--checks',
    'all',
    '--max-examples',
    String(opts.maxExamples),
    ...(opts.seed === undefined ? [] : ['--seed', String(opts.seed)]),
    ...(opts.maxTime === undefined ? [] : ['--max-time', String(opts.maxTime)]),
    '--workers',
    '1',
    '--generation-database',
    'none',
    '--no-color',
    '--report',
    'junit,har',
    '--report-dir',
    opts.reportDir,
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(SCHEMATHESIS, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const take = (chunk: Buffer) => {
      const text = chunk.toString();
      output += text;
      opts.onOutput?.(text);
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? 1, output }));
  });
}
