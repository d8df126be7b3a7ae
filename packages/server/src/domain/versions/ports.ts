import type { Page, PageRequest } from '../pagination.js';
import type { Version } from './model.js';

export interface VersionStore {
  /**
   * Throws DomainError conflict (1007) when the number or the build is already published:
   * the unique constraints decide between two publishes racing each other.
   */
  insert(version: Version): Promise<void>;
  /** All published versions of an algorithm, highest number first (a handful per algorithm). */
  listAll(algorithmId: string): Promise<Version[]>;
  /** Highest number first, paged; `callability` filters when given. */
  list(algorithmId: string, opts: { callability?: 'private' | 'public'; page: PageRequest }): Promise<Page<Version>>;
  findByBuild(algorithmId: string, buildId: string): Promise<Version | undefined>;
  /** The highest version published from a commit. */
  findByCommit(algorithmId: string, commitSha: string): Promise<Version | undefined>;
  latest(algorithmId: string): Promise<Version | undefined>;
}
