/**
 * Runs one `algo` invocation and returns its exit code: 0 on success; on failure one line on
 * stderr ("algo: …", never a stack trace) and 1, or 2 for a usage error (bad flag, missing
 * argument, unknown command).
 */
import { CommanderError } from 'commander';
import { runState } from './commands/common.js';
import { CliError, describeError, oneLine } from './errors.js';
import { closePrompts } from './lib/prompt.js';
import { buildProgram } from './program.js';

export async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  if (argv.length === 0) {
    program.outputHelp();
    return 0;
  }
  try {
    await program.parseAsync(argv, { from: 'user' });
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version end here too, with exit code 0 and their text already printed.
      if (err.exitCode === 0 || err.code === 'commander.help' || err.code === 'commander.helpDisplayed') return err.exitCode;
      process.stderr.write(`algo: ${oneLine(err.message.replace(/^error:\s*/, ''))} (see "algo --help")\n`);
      return 2;
    }
    process.stderr.write(`algo: ${describeError(err, { profile: runState.profile })}\n`);
    return err instanceof CliError ? err.exitCode : 1;
  } finally {
    closePrompts();
  }
}
