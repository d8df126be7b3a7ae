/**
 * Runs one build on this node: its time limit, its output (stored, sent live to followers and
 * kept for those who join late) and its outcome. BuildService decides which build runs when;
 * this runs it and records how it ended.
 */
import type { Logger } from '../logger.js';
import { type Clock, isoNow } from '../clock.js';
import type { AlgorithmReader, RepositoryHost } from '../algorithms/ports.js';
import type { BuildEvents } from './build-events.js';
import type { Build } from './model.js';
import { BuildFailure, type Builder, type BuildLogStore, type BuildStore } from './ports.js';

/** What BuildRunner is made from. */
export interface BuildRunnerDeps {
  builds: BuildStore;
  logs: BuildLogStore;
  algorithms: Pick<AlgorithmReader, 'byId'>;
  repositories: Pick<RepositoryHost, 'pathOf'>;
  builder: Builder;
  events: BuildEvents;
  timeoutMs: number;
  clock: Clock;
  log: Logger;
}

export class BuildRunner {
  private readonly running = new Map<string, AbortController>();
  /** Output of builds running on this node, for followers who join late. */
  private readonly live = new Map<string, string[]>();
  private stopping = false;
  /** Resolves stop() once the last running build has ended. */
  private allEnded: (() => void) | undefined;

  constructor(private readonly deps: BuildRunnerDeps) {}

  get runningCount(): number {
    return this.running.size;
  }

  isRunning(buildId: string): boolean {
    return this.running.has(buildId);
  }

  /** What a build running here has written so far; undefined when it does not run here. */
  liveOutput(buildId: string): readonly string[] | undefined {
    return this.live.get(buildId);
  }

  /**
   * Cancels every running build and resolves once all have ended, with their ids: they are left
   * in progress, for the caller to queue again.
   */
  async stop(): Promise<string[]> {
    this.stopping = true;
    const ids = [...this.running.keys()];
    const ended = this.running.size ? new Promise<void>((resolve) => (this.allEnded = resolve)) : undefined;
    for (const c of this.running.values()) c.abort();
    await ended;
    return ids;
  }

  /** Runs a claimed build to its end and records the outcome (unless stop() cancelled it). */
  async run(build: Build): Promise<void> {
    const { deps } = this;
    const controller = new AbortController();
    this.running.set(build.id, controller);
    const timer = setTimeout(() => controller.abort(new Error('timeout')), deps.timeoutMs);
    const buffer: string[] = [];
    this.live.set(build.id, buffer);
    let pending = Promise.resolve();
    const log = (text: string) => {
      buffer.push(text);
      deps.events.emit(build.id, { type: 'log', text });
      pending = pending
        .then(() => deps.logs.append(build.id, text))
        .catch((err: unknown) => deps.log.warn({ err, buildId: build.id }, 'a build log line could not be stored'));
    };
    try {
      const view = await deps.algorithms.byId(build.algorithmId);
      if (!view) throw new BuildFailure('the algorithm was deleted');
      const environment = view.environment;
      log(`Building ${view.algorithm.ownerName}/${view.algorithm.name} at ${build.commitSha} for environment ${environment.name}\n`);
      const { artifact } = await deps.builder.build(
        { build, ownerId: view.algorithm.ownerId, environment, repositoryPath: deps.repositories.pathOf(build.algorithmId) },
        log,
        controller.signal,
      );
      await pending;
      if (this.stopping && controller.signal.aborted) return;
      await this.finish(build, 'succeeded', null, artifact);
    } catch (err) {
      await pending;
      if (this.stopping) return; // queued again by whoever stopped it
      const timedOut = controller.signal.aborted;
      const reason = timedOut
        ? `the build exceeded its time limit of ${Math.round(deps.timeoutMs / 1000)} s`
        : err instanceof BuildFailure
          ? err.message
          : `internal error: ${(err as Error).message}`;
      await this.finish(build, 'failed', reason, null);
    } finally {
      clearTimeout(timer);
      this.running.delete(build.id);
      this.live.delete(build.id);
      if (!this.running.size) this.allEnded?.();
    }
  }

  /** Records how a build ended: its last log line, its state, and the news to its followers. */
  async finish(build: Build, status: 'succeeded' | 'failed', error: string | null, artifact: string | null): Promise<void> {
    const { deps } = this;
    const finishedAt = isoNow(deps.clock);
    const line = status === 'succeeded' ? 'Build succeeded\n' : `Build failed: ${error}\n`;
    this.live.get(build.id)?.push(line);
    deps.events.emit(build.id, { type: 'log', text: line });
    await deps.logs.append(build.id, line);
    await deps.builds.finish(build.id, { status, error, artifact, finishedAt });
    // Drop the live buffer before announcing the end: a follower arriving now reads the store.
    this.live.delete(build.id);
    const finished: Build = { ...build, status, error, artifact, finishedAt };
    deps.events.emit(build.id, { type: 'finished', build: finished });
  }
}
