/**
 * One build step in the sandbox: its mounts, its network (only through a channel of the egress
 * proxy), its limits, and what its failure says.
 */
import fs from 'node:fs';
import { BuildFailure } from '../../domain/builds/ports.js';
import { INSIDE, type BuildStep, type LanguageAdapter } from '../languages/adapter.js';
import { type Mount, type Outcome, type Supervisor } from '../sandbox/supervisor.js';
import { egressProxyEnv, type EgressProxy } from '../sandbox/egress-proxy.js';
import { tooLarge, watchSize } from './artifact-size.js';

const OUTPUT_LIMIT = 20 * 1024 * 1024;
/** Processes and threads of one build step. */
const BUILD_PIDS = 512;

export class BuildSteps {
  constructor(
    private readonly supervisor: Supervisor,
    private readonly settings: { memoryBytes: number; egress: EgressProxy; maxArtifactBytes: number },
    /** Where builds are made (the file system whose free space diskFull() reads). */
    private readonly workDir: string,
  ) {}

  /**
   * Runs one step. With a size budget, the directories it writes are measured while it runs
   * and it is stopped once the artifact would pass the limit.
   */
  async run(
    step: BuildStep,
    adapter: LanguageAdapter,
    mounts: Mount[],
    log: (t: string) => void,
    buildSignal: AbortSignal,
    budget?: { stage: string; dirs: string[]; fixedBytes: number },
  ): Promise<void> {
    if (buildSignal.aborted) throw new BuildFailure('cancelled');
    const stop = new AbortController();
    const onAbort = () => stop.abort();
    buildSignal.addEventListener('abort', onAbort);
    const watch = budget && watchSize(budget.dirs, budget.fixedBytes, this.settings.maxArtifactBytes, () => stop.abort());
    try {
      await this.runStep(step, adapter, mounts, log, stop.signal);
    } catch (err) {
      const over = watch?.over();
      if (over !== undefined) throw new BuildFailure(tooLarge(budget!.stage, over, this.settings.maxArtifactBytes));
      throw err;
    } finally {
      watch?.stop();
      buildSignal.removeEventListener('abort', onAbort);
    }
  }

  private async runStep(
    step: BuildStep,
    adapter: LanguageAdapter,
    mounts: Mount[],
    log: (t: string) => void,
    signal: AbortSignal,
  ): Promise<void> {
    if (signal.aborted) throw new BuildFailure('cancelled');
    log(`$ ${step.title}: ${step.argv.join(' ')}\n`);
    // A networked step gets its own namespace too; its only way out is a channel of the egress proxy.
    const egress = step.network ? await this.settings.egress.open(log) : undefined;
    let outcome: Outcome;
    try {
      outcome = await this.supervisor.run(
        {
          argv: step.argv,
          env: { HOME: '/tmp', LANG: 'C.UTF-8', ...adapter.env(), ...step.env, ...(egress ? egressProxyEnv() : {}) },
          cwd: INSIDE.src,
          mounts,
          network: egress ? 'registries' : 'none',
          egressSocket: egress?.socket,
          limits: { memoryBytes: this.settings.memoryBytes, pids: BUILD_PIDS },
          wallTimeMs: 24 * 60 * 60 * 1000, // the build's own time limit aborts through `signal`
          outputLimitBytes: OUTPUT_LIMIT,
        },
        log,
        signal,
      );
    } finally {
      await egress?.close();
    }
    if (outcome.kind === 'exited' && outcome.code === 0) return;
    throw new BuildFailure(`${await this.diskFull()}${step.title} failed: ${describe(outcome)}`);
  }

  /**
   * The cause to name first when a step failed because the file system of the build
   * directories is full (tools say it in their own words, `tar` as "Wrote only 7168 of 10240
   * bytes"): checked right after the failure, before the work directory is removed.
   */
  async diskFull(): Promise<string> {
    const st = await fs.promises.statfs(this.workDir).catch(() => undefined);
    if (!st || st.bavail * st.bsize >= DISK_FULL_BYTES) return '';
    return "the server's disk is full (no space left on device where builds are made); ask the operator to free space, then push again or rebuild. ";
  }
}

/** Free space under which a failed step is blamed on the full disk. */
const DISK_FULL_BYTES = 1024 * 1024;

export function describe(o: Outcome): string {
  if (o.kind === 'exited') return `exit code ${o.code}`;
  switch (o.reason) {
    case 'memory':
      return 'out of memory';
    case 'output_limit':
      return `printed more than ${OUTPUT_LIMIT / 1024 / 1024} MB`;
    case 'timeout':
      return 'timed out';
    case 'cancelled':
      return 'cancelled';
    default:
      return `killed by ${o.signal ?? 'a signal'}`;
  }
}
