import type { Page, PageRequest } from '../pagination.js';
import type { Environment } from '../catalog/model.js';
import type { Build } from './model.js';

export interface BuildStore {
  insert(build: Build): Promise<void>;
  get(id: string): Promise<Build | undefined>;
  /** Newest first. */
  listForAlgorithm(algorithmId: string, page: PageRequest): Promise<Page<Build>>;
  latestSucceeded(algorithmId: string): Promise<Build | undefined>;
  /** The newest successful build of a commit. */
  findSucceeded(algorithmId: string, commitSha: string): Promise<Build | undefined>;
  /** A successful build of the algorithm that made this artifact (cluster workers check what a call names). */
  findSucceededArtifact(algorithmId: string, artifact: string): Promise<Build | undefined>;
  /**
   * The accounts (algorithm owners; '' for builds of deleted algorithms) with queued builds,
   * each with the creation time of its oldest queued build.
   */
  queuedAccounts(): Promise<{ ownerId: string; oldestAt: string }[]>;
  /**
   * The account's oldest queued build that may start now: the first queued build of its
   * algorithm (push order), with no build of that algorithm in progress.
   */
  nextQueued(ownerId: string): Promise<Build | undefined>;
  listInProgress(): Promise<Build[]>;
  /** How many builds wait in the queue and how many run, in the whole cluster. */
  countActive(): Promise<{ queued: number; running: number }>;
  /**
   * Moves a queued build to in-progress unless another build of the same algorithm is in
   * progress; returns false when it lost the race. This keeps one algorithm's builds in order.
   */
  claim(id: string, startedAt: string): Promise<boolean>;
  finish(
    id: string,
    result: { status: 'succeeded' | 'failed'; error: string | null; artifact: string | null; finishedAt: string },
  ): Promise<void>;
  requeue(id: string): Promise<void>;
}

/** Build logs: appended while running, read whole once finished. */
export interface BuildLogStore {
  append(buildId: string, text: string): Promise<void>;
  read(buildId: string): Promise<string | undefined>;
}

export interface BuildRequest {
  build: Build;
  /** The owning account: download caches are kept per owner unless shared cluster-wide. */
  ownerId: string;
  environment: Environment;
  repositoryPath: string;
}

/** Turns a commit into an artifact, sandboxed. Throws BuildFailure with a reason for the log. */
export interface Builder {
  build(req: BuildRequest, log: (text: string) => void, signal: AbortSignal): Promise<{ artifact: string }>;
}

export class BuildFailure extends Error {}
