import type { Page, PageRequest } from '../pagination.js';
import type { TarEntry } from '../../lib/tar.js';
import type { Principal } from '../accounts/principal.js';
import type { ScmConfigView, SourceDelivery } from '../scm/model.js';
import type { Algorithm, CommitSummary, SourceFile } from './model.js';

export interface AlgorithmStore {
  /** Throws DomainError conflict (1002) when the owner already has an algorithm of that name. */
  insert(algorithm: Algorithm): Promise<void>;
  find(ownerId: string, name: string): Promise<Algorithm | undefined>;
  findById(id: string): Promise<Algorithm | undefined>;
  listByOwner(ownerId: string, opts: { includePrivate: boolean; page: PageRequest }): Promise<Page<Algorithm>>;
  listAllByOwner(ownerId: string): Promise<Algorithm[]>;
  /**
   * Public algorithms, newest first, whose owner, name, label or summary contains `query`
   * (ignoring case; every public algorithm when it is empty).
   */
  searchPublic(query: string, page: PageRequest): Promise<Page<Algorithm>>;
  update(algorithm: Algorithm): Promise<void>;
  delete(id: string): Promise<void>;
}

/** Where algorithm source lives: bare Git repositories keyed by algorithm id. */
export interface RepositoryHost {
  /** Creates the repository with one commit holding `files`; all or nothing. Returns the commit. */
  create(algorithmId: string, files: TarEntry[], message: string): Promise<string>;
  delete(algorithmId: string): Promise<void>;
  /** The commit the default branch points at, or undefined for an empty repository. */
  head(algorithmId: string): Promise<string | undefined>;
  pathOf(algorithmId: string): string;
  /** Tags a published version's commit (`v1.2.3`) and makes its read-only repository; idempotent. */
  publishVersion(algorithmId: string, version: string, commitSha: string): Promise<void>;
  /** The bare repository that serves exactly one published version, made again if missing. */
  versionRepository(algorithmId: string, version: string, commitSha: string): Promise<string>;
  /**
   * The commit a checked ref (a commit SHA, a branch or tag name; the default branch when
   * undefined) names, or undefined when it names none. `ref` is never taken as an option.
   */
  resolveCommit(algorithmId: string, ref: string | undefined): Promise<string | undefined>;
  /** The newest `limit` commits reachable from `commitSha`, newest first. */
  log(algorithmId: string, commitSha: string, limit: number): Promise<CommitSummary[]>;
  /**
   * The first file at the root of the commit's tree whose name, ignoring case, is one of
   * `names` (in that order of preference), reading at most `maxBytes` of it; undefined when none is.
   */
  readRootFile(algorithmId: string, commitSha: string, names: readonly string[], maxBytes: number): Promise<SourceFile | undefined>;
}

/** Where an externally hosted algorithm's source lives, as the algorithm object shows it (`source`). */
export interface AlgorithmSource {
  repositoryName: string;
  repositoryOwner: string;
  httpsUrl: string;
  sshUrl: string;
  webUrl: string;
  scm: ScmConfigView;
  lastDelivery: SourceDelivery | null;
}

/** A checked plan to host a new algorithm's source at a provider; nothing exists there yet. */
export interface ExternalSourcePlan {
  /** The first commit's message (source.initial_commit_message). */
  commitMessage: string;
  /**
   * Once the algorithm's own repository holds the template commit: creates the repository at
   * the provider, pushes that commit, registers the webhook and records the source. On failure
   * it removes what it made at the provider (or says in the error what is left there).
   */
  establish(algorithm: Algorithm): Promise<AlgorithmSource>;
}

/** External SCM hosting, as algorithm creation and reads need it (domain/scm implements it). */
export interface ExternalSourcing {
  /** Checks a create request's `source` (configuration, authorization, owner, name) before anything is made. */
  plan(p: Principal, source: Record<string, unknown>): Promise<ExternalSourcePlan>;
  sourceOf(algorithmId: string): Promise<AlgorithmSource | undefined>;
}
