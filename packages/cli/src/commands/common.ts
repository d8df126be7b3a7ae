/** What every command shares: `--profile`, `--json`, argument parsing helpers. */
import { type Command, InvalidArgumentError } from 'commander';
import { AlgohostError, parseAlgorithmRef, type AlgorithmRef } from '@algohost/client';
import { Context, type CommonOptions } from '../context.js';
import { DEFAULT_PROFILE } from '../config.js';
import { CliError } from '../errors.js';

/** The profile of the command being run, for error messages. */
export const runState = { profile: DEFAULT_PROFILE };

export function withProfile(cmd: Command): Command {
  return cmd.option('--profile <name>', `profile of ~/.algorithmia/config to use (default: "${DEFAULT_PROFILE}")`);
}

export function withJson(cmd: Command): Command {
  return cmd.option('--json', 'print JSON (for scripts)');
}

/** The options of a command merged with its parents' (`algo keys --profile x list`). */
export function optionsOf<T extends object = CommonOptions>(cmd: Command): T & { profile?: string } {
  const opts = cmd.optsWithGlobals<T & { profile?: string }>();
  runState.profile = opts.profile || DEFAULT_PROFILE;
  return opts;
}

export function contextOf(cmd: Command): Context {
  return Context.from({ profile: optionsOf(cmd).profile });
}

export function parseAlgorithm(arg: string): AlgorithmRef {
  try {
    return parseAlgorithmRef(arg);
  } catch (err) {
    throw new CliError((err as Error).message);
  }
}

/** `<owner>/<name>` or `<owner> <name>`. */
export function ownerAndName(first: string, second: string | undefined): { owner: string; name: string } {
  if (second !== undefined) return { owner: first, name: second };
  const ref = parseAlgorithm(first);
  if (ref.version) throw new CliError(`"${first}" names a version; give owner/name`);
  return ref;
}

export function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError('expected a positive whole number');
  return n;
}

export function oneOf(...values: string[]) {
  return (value: string): string => {
    if (!values.includes(value)) throw new InvalidArgumentError(`expected one of ${values.join(', ')}`);
    return value;
  };
}

/**
 * Runs a request of a feature another server or cluster may lack (an older algohost, another
 * implementation of the API) and says so plainly when it answers 404 "no such endpoint".
 */
export async function needsFeature<T>(feature: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof AlgohostError && err.endpointMissing) {
      const { method, url } = err.details;
      const where = url ? `${method ?? 'GET'} ${new URL(url).pathname}` : 'the request';
      throw new CliError(`this server does not support ${feature} yet: ${where} answered 404 "no such endpoint"`);
    }
    throw err;
  }
}
