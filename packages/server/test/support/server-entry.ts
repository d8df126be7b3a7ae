/**
 * What a test runs to start the server as a process of its own: the compiled server in
 * packages/server/dist (what `npm start` runs) when scripts/run-tests.sh compiled it for the run
 * (ALGOHOST_TEST_SERVER_DIST names its start.js), else the TypeScript sources through tsx, as for
 * a file run alone with `node --import tsx --test`. The compiled server starts on about half the
 * CPU (tsx resolves and transforms every module through its loader hooks), and a run of the
 * suite starts a few hundred nodes.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const SOURCE = fileURLToPath(new URL('../../src/main/start.ts', import.meta.url));

/** Node's arguments that start the server (before the server's own arguments). */
export function serverEntryArgs(): string[] {
  const compiled = process.env.ALGOHOST_TEST_SERVER_DIST;
  return compiled ? ['--enable-source-maps', path.resolve(compiled)] : ['--import', 'tsx', SOURCE];
}
