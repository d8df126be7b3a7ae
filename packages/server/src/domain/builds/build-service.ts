/**
 * Builds: one per push to the default branch (docs/compatibility.md §9.1 rule 1) or per compile request, run in push
 * order per algorithm, a configurable number at once. A free slot goes to the account (the
 * algorithm's owner) with the fewest builds running on this node, then to the one that started
 * a build least recently, then to the oldest queued build; an account never has more than its
 * limit running, so one tenant's slow builds cannot hold everyone else's back. The database is
 * the durable queue:
 * queued builds survive a restart, and a build interrupted by a restart is retried once and
 * then marked failed, never left in progress. In cluster mode the workers take builds from the
 * work queue in push order, and each keeps the per-account limit for the builds it runs
 * (runDispatched).
 *
 * The service does not run its own loop: the `build.schedule` queue job (`jobs/catalog.ts`)
 * calls `startQueued` at start and whenever the service wakes it (a build was queued or one
 * finished), and stops the service when the node stops.
 */
import crypto from 'node:crypto';
import type { Logger } from '../logger.js';
import { type Clock, isoNow } from '../clock.js';
import { Errors } from '../errors.js';
import type { Page, PageRequest } from '../pagination.js';
import type { Principal } from '../accounts/principal.js';
import type { AlgorithmRecord } from '../algorithms/model.js';
import type { AlgorithmReader, RepositoryHost } from '../algorithms/ports.js';
import { BuildEvents } from './build-events.js';
import { BuildRunner } from './build-runner.js';
import { type Build, isFinished } from './model.js';
import type { Builder, BuildLogStore, BuildStore } from './ports.js';
import type { QueueSignal } from '../work-queue.js';

export interface BuildSettings {
  concurrency: number;
  /** Builds of one account's algorithms running at once on this node; 0 = no limit. */
  perAccount?: number;
  timeoutMs: number;
  /** Where people can follow a build, for the messages shown to pushers. */
  publicUrl: string;
}

export interface PushUpdate {
  old: string;
  new: string;
  ref: string;
}

const DEFAULT_REF = 'refs/heads/main';
const ZERO = /^0+$/;
const MAX_ATTEMPTS = 2;

/** What BuildService is made from (named, so the composition root reads as a list of parts). */
export interface BuildServiceDeps {
  builds: BuildStore;
  logs: BuildLogStore;
  algorithms: AlgorithmReader;
  repositories: RepositoryHost;
  builder: Builder;
  settings: BuildSettings;
  clock: Clock;
  /** Woken when a build is queued or ends: whoever runs the queue then calls startQueued. */
  queue: QueueSignal;
  /**
   * Cluster mode: hands each queued build to the workers as durable work (a worker then calls
   * runDispatched). Unset: this node's `build.schedule` job starts builds from the database.
   */
  dispatch?: BuildDispatch;
  /** Where live build output goes (cluster mode: one that also relays it to the other nodes). */
  events?: BuildEvents;
  log: Logger;
}

/**
 * Cluster mode: how a queued build reaches a worker. Resolves once the work is stored durably,
 * with a note for the build's log when no worker can take it yet (a GPU environment, no GPU worker).
 */
export interface BuildDispatch {
  queued(build: Build): Promise<string | undefined>;
}

/** What a worker did with a dispatched build: `busy` = another build of its algorithm runs first, offer it again later. */
export type DispatchOutcome = 'done' | 'busy' | 'stopped';

export class BuildService {
  readonly events: BuildEvents;
  /** Builds running on this node per account (algorithm owner id). */
  private readonly runningPerAccount = new Map<string, number>();
  /** When each account last had a build started (a sequence number), for round-robin. */
  private readonly lastStarted = new Map<string, number>();
  private starts = 0;
  private stopped = false;

  private readonly builds: BuildStore;
  private readonly logs: BuildLogStore;
  private readonly algorithms: AlgorithmReader;
  private readonly repositories: RepositoryHost;
  private readonly runner: BuildRunner;
  private readonly settings: BuildSettings;
  private readonly clock: Clock;
  /** Woken when a build is queued or ends: whoever runs the queue then calls startQueued. */
  private readonly queue: QueueSignal;
  private readonly dispatch?: BuildDispatch;

  constructor(deps: BuildServiceDeps) {
    this.events = deps.events ?? new BuildEvents();
    this.dispatch = deps.dispatch;
    this.builds = deps.builds;
    this.logs = deps.logs;
    this.algorithms = deps.algorithms;
    this.repositories = deps.repositories;
    this.settings = deps.settings;
    this.clock = deps.clock;
    this.queue = deps.queue;
    this.runner = new BuildRunner({ ...deps, events: this.events, timeoutMs: deps.settings.timeoutMs });
  }

  private lastCreatedAt = 0;

  /** Creation times order builds (push order), so they are made strictly increasing here. */
  private nextCreatedAt(): string {
    const now = Math.max(this.clock().getTime(), this.lastCreatedAt + 1);
    this.lastCreatedAt = now;
    return new Date(now).toISOString();
  }

  /** Called once at start, before the queue runs: recovers builds a previous process left in progress. */
  async recoverInterrupted(): Promise<void> {
    for (const b of await this.builds.listInProgress()) {
      if (b.attempt < MAX_ATTEMPTS) {
        await this.logs.append(b.id, '\n-- the service restarted during this build; it is retried --\n');
        await this.builds.requeue(b.id);
      } else {
        await this.runner.finish(b, 'failed', 'interrupted by a restart twice; push again or POST .../compile to retry', null);
      }
    }
  }

  /**
   * Stops taking builds; running ones are cancelled, awaited, and go back to the queue for the
   * next start. Every build is requeued even when one fails; the first failure is then thrown.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    const ids = await this.runner.stop();
    const failed = (await Promise.allSettled(ids.map((id) => this.builds.requeue(id)))).find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
  }

  /** Queues a build; `note` says why it cannot start yet, when the dispatch knows (cluster mode). */
  async enqueue(view: AlgorithmRecord, commitSha: string, trigger: Build['trigger']): Promise<Build & { note?: string }> {
    const build: Build = {
      id: crypto.randomUUID(),
      algorithmId: view.algorithm.id,
      commitSha,
      environmentName: view.environment.name,
      status: 'queued',
      trigger,
      attempt: 0,
      error: null,
      artifact: null,
      createdAt: this.nextCreatedAt(),
      startedAt: null,
      finishedAt: null,
    };
    await this.builds.insert(build);
    if (!this.dispatch) this.queue.wake();
    else {
      let note: string | undefined;
      try {
        note = await this.dispatch.queued(build);
      } catch (err) {
        // No worker would ever see it: it fails now, saying why, instead of staying queued.
        const reason = `the build could not be handed to the workers (${(err as Error).message}); push again or POST .../compile`;
        await this.runner.finish(build, 'failed', reason, null);
        throw Errors.unavailable(reason);
      }
      if (note) {
        await this.logs.append(build.id, `-- ${note} --\n`);
        return { ...build, note };
      }
    }
    return build;
  }

  /** Push handling: a push to the default branch builds the pushed commit. */
  async pushed(algorithmId: string, updates: PushUpdate[], options: string[], say: (line: string) => void): Promise<void> {
    const update = updates.find((u) => u.ref === DEFAULT_REF && !ZERO.test(u.new));
    if (!update) {
      if (updates.length) say(`algohost: only pushes to ${DEFAULT_REF.slice(11)} are built; nothing to build`);
      return;
    }
    const view = await this.algorithms.byId(algorithmId);
    if (!view) return;
    const build = await this.enqueue(view, update.new, 'push');
    const base = `${this.settings.publicUrl}/v1/algorithms/${view.algorithm.ownerName}/${view.algorithm.name}/builds/${build.id}`;
    say(`algohost: build ${build.id} queued for ${update.new.slice(0, 12)}`);
    if (build.note) say(`algohost: ${build.note}`);
    if (!options.includes('wait')) {
      say(`algohost: follow it with \`algo builds ${view.algorithm.ownerName} ${view.algorithm.name} --follow\`, GET ${base}/logs/stream,`);
      say('algohost: or push with `git push -o wait` to watch the build here');
      return;
    }
    const finished = await this.follow(build.id, (text) => {
      for (const line of text.replace(/\n$/, '').split('\n')) say(line);
    });
    say(`algohost: build ${build.id} ${finished.status}${finished.error ? `: ${finished.error}` : ''}`);
  }

  async compile(p: Principal, owner: string, name: string): Promise<{ view: AlgorithmRecord; build: Build; log: string }> {
    const view = await this.algorithms.forMember(p, owner, name, 'manage_algorithms');
    const head = await this.repositories.head(view.algorithm.id);
    if (!head) throw Errors.nothingToBuild({ owner, name });
    const queued = await this.enqueue(view, head, 'compile');
    const build = await this.follow(queued.id, () => {});
    return { view, build, log: (await this.logs.read(build.id)) ?? '' };
  }

  async list(p: Principal, owner: string, name: string, page: PageRequest): Promise<Page<Build>> {
    const view = await this.algorithms.forMember(p, owner, name);
    return this.builds.listForAlgorithm(view.algorithm.id, page);
  }

  async get(p: Principal, owner: string, name: string, buildId: string): Promise<Build> {
    const view = await this.algorithms.forMember(p, owner, name);
    const build = await this.builds.get(buildId);
    if (!build || build.algorithmId !== view.algorithm.id) {
      throw Errors.buildNotFound({ buildId, owner, name });
    }
    return build;
  }

  /** docs/compatibility.md §3: logs exist (404) only once the build has finished. */
  async logsOf(p: Principal, owner: string, name: string, buildId: string): Promise<string> {
    const build = await this.get(p, owner, name, buildId);
    if (!isFinished(build)) {
      throw Errors.buildLogsNotReady({ buildId, status: build.status });
    }
    return (await this.logs.read(build.id)) ?? '';
  }

  /**
   * Sends the log so far, then live lines until the build finishes; resolves with the finished
   * build. The live buffer and the subscription are taken in the same tick, so no line is lost
   * or repeated.
   */
  async follow(buildId: string, onText: (text: string) => void): Promise<Build> {
    let release!: (b: Build) => void;
    const done = new Promise<Build>((resolve) => (release = resolve));
    const live = this.runner.liveOutput(buildId);
    const unsubscribe = this.events.subscribe(buildId, (e) => (e.type === 'log' ? onText(e.text) : release(e.build)));
    try {
      if (live) {
        onText(live.join(''));
        return await done;
      }
      const current = await this.builds.get(buildId);
      if (!current) throw Errors.buildNotFound({ buildId });
      if (isFinished(current)) {
        onText((await this.logs.read(buildId)) ?? '');
        return current;
      }
      return await done;
    } finally {
      unsubscribe();
    }
  }

  /**
   * Starts queued builds while there are free slots: one build per algorithm at a time, in
   * push order; across accounts, fairly (see the top of this file). Resolves once the builds
   * are started, not finished. One caller at a time (the queue job never overlaps itself).
   */
  async startQueued(): Promise<void> {
    while (!this.stopped && this.runner.runningCount < this.settings.concurrency && (await this.startNext()));
  }

  /**
   * Cluster mode: runs one build a worker took from the work queue, and resolves once it has
   * ended and its outcome is recorded (the worker acknowledges the work only then). A build
   * found in progress was another worker's: when the work came back (`redelivered`, that worker
   * went silent) it is taken over (retried once, as after a restart); otherwise it is a
   * duplicate and left alone.
   */
  async runDispatched(buildId: string, redelivered: boolean): Promise<DispatchOutcome> {
    if (this.stopped) return 'stopped';
    let build = await this.builds.get(buildId);
    if (!build || isFinished(build)) return 'done';
    if (build.status === 'in-progress') {
      if (!redelivered || this.runner.isRunning(build.id)) return 'done';
      if (build.attempt >= MAX_ATTEMPTS) {
        await this.runner.finish(build, 'failed', 'the workers running it stopped twice; push again or POST .../compile to retry', null);
        return 'done';
      }
      await this.logs.append(build.id, '\n-- the worker running this build stopped; it is retried --\n');
      await this.builds.requeue(build.id);
      build = { ...build, status: 'queued' };
    }
    const view = await this.algorithms.byId(build.algorithmId);
    const account = view?.algorithm.ownerId ?? '';
    // The same rule as startNext's on one node: an account at its limit of builds running here
    // leaves the slot to the next work (the message comes back after a pause), so one tenant's
    // slow builds cannot take every worker's slots. Counted before the claim's await, so this
    // worker's other slots see it.
    const running = this.runningPerAccount.get(account) ?? 0;
    if (running >= (this.settings.perAccount || Infinity)) return 'busy';
    this.runningPerAccount.set(account, running + 1);
    if (!(await this.builds.claim(build.id, isoNow(this.clock)))) {
      this.endedFor(account);
      return 'busy';
    }
    await this.run({ ...build, status: 'in-progress', attempt: build.attempt + 1 }, account);
    return this.stopped ? 'stopped' : 'done';
  }

  /** Claims and starts the next build by the fairness rules; false when none may start now. */
  private async startNext(): Promise<boolean> {
    const limit = this.settings.perAccount || Infinity;
    const runningOf = (account: string) => this.runningPerAccount.get(account) ?? 0;
    const accounts = (await this.builds.queuedAccounts())
      .filter((a) => runningOf(a.ownerId) < limit)
      .sort(
        (a, b) =>
          runningOf(a.ownerId) - runningOf(b.ownerId) ||
          (this.lastStarted.get(a.ownerId) ?? 0) - (this.lastStarted.get(b.ownerId) ?? 0) ||
          (a.oldestAt < b.oldestAt ? -1 : a.oldestAt > b.oldestAt ? 1 : 0),
      );
    for (const { ownerId } of accounts) {
      const build = await this.builds.nextQueued(ownerId);
      if (!build || this.stopped) continue;
      if (!(await this.builds.claim(build.id, isoNow(this.clock)))) continue;
      this.runningPerAccount.set(ownerId, runningOf(ownerId) + 1);
      this.lastStarted.set(ownerId, ++this.starts);
      void this.run({ ...build, status: 'in-progress', attempt: build.attempt + 1 }, ownerId);
      return true;
    }
    return false;
  }

  private async run(build: Build, account: string): Promise<void> {
    try {
      await this.runner.run(build);
    } finally {
      this.endedFor(account);
      this.queue.wake();
    }
  }

  /** One build of the account's no longer runs on this node. */
  private endedFor(account: string): void {
    const n = (this.runningPerAccount.get(account) ?? 1) - 1;
    if (n > 0) this.runningPerAccount.set(account, n);
    else this.runningPerAccount.delete(account);
  }
}
