export type BuildStatus = 'queued' | 'in-progress' | 'succeeded' | 'failed';

export interface Build {
  id: string;
  algorithmId: string;
  commitSha: string;
  environmentName: string;
  status: BuildStatus;
  /** push: a push to algohost's Git server or a provider's webhook; sync: "sync now" fetched it; compile: built again by hand. */
  trigger: 'push' | 'sync' | 'compile';
  /** How many times a worker has started it (a restart mid-build retries it once). */
  attempt: number;
  error: string | null;
  artifact: string | null;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
}

export const isFinished = (b: Build) => b.status === 'succeeded' || b.status === 'failed';
