import type { Page, PageRequest } from '../pagination.js';
import type { TarEntry } from '../../lib/tar.js';
import type { Principal } from '../accounts/principal.js';
import type { Algorithm, AlgorithmInput, AlgorithmRecord, CommitSummary, SourceFile } from './model.js';

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

/**
 * An algorithm as the areas built on it read one (builds, versions, SCM, the source pages): its
 * record and environment, behind the owner's access rules. AlgorithmService
 * (domain/algorithm-objects) implements it; these areas depend on this port rather than on the
 * service, because the algorithm object the service composes shows their versions, builds and
 * external source.
 */
export interface AlgorithmReader {
  /** An algorithm the caller may see (404 otherwise). */
  get(p: Principal, ownerName: string, name: string): Promise<AlgorithmRecord>;
  /** An algorithm of an owner the caller is a member of (with `capability`, one it may manage). */
  forMember(p: Principal, ownerName: string, name: string, capability?: 'manage_algorithms'): Promise<AlgorithmRecord>;
  byId(id: string): Promise<AlgorithmRecord | undefined>;
  /** An algorithm whose source the caller may read through the API. */
  authorizeSourceRead(p: Principal, ownerName: string, name: string): Promise<Algorithm>;
  /** An algorithm the caller may call or read (404 otherwise). */
  readable(p: Principal, ownerName: string, name: string): Promise<Algorithm>;
  /** Changes the details or settings, as PATCH does. */
  update(p: Principal, ownerName: string, name: string, input: AlgorithmInput): Promise<AlgorithmRecord>;
}
