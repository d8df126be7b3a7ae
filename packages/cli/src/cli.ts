/** The `algo` executable: `node --import tsx packages/cli/src/cli.ts …` (bin/algo.js does the same). */
import { describeError } from './errors.js';
import { main } from './main.js';

// `algo cat … | head` closes stdout early: that is not a failure.
process.stdout.on('error', (err: NodeJS.ErrnoException) => process.exit(err.code === 'EPIPE' ? 0 : 1));
const lastResort = (err: unknown) => {
  process.stderr.write(`algo: ${describeError(err)}\n`);
  process.exit(1);
};
process.on('uncaughtException', lastResort);
process.on('unhandledRejection', lastResort);

const argv = process.argv.slice(2);
const code = await main(argv);
// Let stdout drain (it may be a pipe) before exiting; idle keep-alive sockets would otherwise
// keep the process up for seconds.
process.stdout.write('', () => process.exit(code));
