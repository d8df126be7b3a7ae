/**
 * Garbage-collector settings for the server process, decided from the machine it runs on.
 *
 * V8 scavenges the young generation with helper threads by default. On a machine with two CPUs
 * or fewer, the server shares them with its runners and the clients it serves, so a helper
 * thread is rarely scheduled at once and the main thread waits for it: a scavenge took a median
 * of 1.25 ms under warm calls at a steady rate, and 0.9 ms done by the main thread alone
 * (docs/performance.md, rule 9). Every call arriving meanwhile waits, so these pauses show in p99.
 * The JVM makes the same choice on small machines (it picks its serial collector below two CPUs).
 *
 * An operator's own choice wins: a `--parallel-scavenge` or `--no-parallel-scavenge` on Node's
 * command line is left as it is (Node refuses V8 flags like these in NODE_OPTIONS).
 */

export interface GcTuningInput {
  /** os.availableParallelism(): the CPUs this process may run on. */
  cpus: number;
  /** process.execArgv, joined: where an operator's own V8 flags would be. */
  nodeFlags: string;
}

/** The V8 flags to set for this machine (none on a machine with more than two CPUs). */
export function gcFlagsFor({ cpus, nodeFlags }: GcTuningInput): string[] {
  if (cpus > 2 || /--(no-)?parallel[-_]scavenge(?=[\s=]|$)/.test(nodeFlags)) return [];
  return ['--no-parallel-scavenge'];
}
