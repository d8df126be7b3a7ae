/**
 * Reading an algorithm's source through the API, for pages that show it (the web UI's
 * Overview and Source tabs) and for the CLI: the recent commits, and the README at the root of
 * a commit. Both come from the real bare repository through the RepositoryHost port.
 */
import { Errors, invalid } from '../errors.js';
import type { Principal } from '../accounts/principal.js';
import type { CommitSummary, SourceFile } from './model.js';
import type { AlgorithmReader, RepositoryHost } from './ports.js';

export const DEFAULT_COMMITS = 20;
export const MAX_COMMITS = 100;
/** A README longer than this is cut here (and marked truncated). */
export const README_MAX_BYTES = 256 * 1024;
/** The names a README goes by at the root of a tree, in order of preference, matched ignoring case. */
export const README_NAMES = ['README.md', 'README.markdown', 'README.txt', 'README'] as const;

export interface Readme extends SourceFile {
  commit: string;
}

/** What SourceService is made from (named, so the composition root reads as a list of parts). */
export interface SourceServiceDeps {
  algorithms: AlgorithmReader;
  repositories: RepositoryHost;
}

export class SourceService {
  private readonly algorithms: AlgorithmReader;
  private readonly repositories: RepositoryHost;

  constructor(deps: SourceServiceDeps) {
    this.algorithms = deps.algorithms;
    this.repositories = deps.repositories;
  }

  /** The newest commits of the default branch: for whoever may fetch the source over Git (and admins). */
  async commits(p: Principal, ownerName: string, name: string, limit: unknown): Promise<CommitSummary[]> {
    const n = commitLimit(limit);
    const algorithm = await this.algorithms.authorizeSourceRead(p, ownerName, name);
    const head = await this.repositories.resolveCommit(algorithm.id, undefined);
    if (!head) return [];
    return this.repositories.log(algorithm.id, head, n);
  }

  /**
   * The README at the root of `ref` (the default branch when unset), as raw text: documentation,
   * so anyone who may read the algorithm may read it. Whoever shows it renders it safely.
   */
  async readme(p: Principal, ownerName: string, name: string, ref: unknown): Promise<Readme> {
    const wanted = sourceRef(ref);
    const algorithm = await this.algorithms.readable(p, ownerName, name);
    const names = { owner: algorithm.ownerName, name: algorithm.name };
    // Characters a ref may hold, in a shape git never gives a ref (`-x`, `a..b`): no such ref.
    if (wanted !== undefined && !COMMIT_SHA.test(wanted) && !REF_NAME.test(wanted)) {
      throw Errors.sourceRefNotFound({ ...names, ref: wanted });
    }
    const commit = await this.repositories.resolveCommit(algorithm.id, wanted);
    if (!commit) throw wanted === undefined ? Errors.readmeNotFound(names) : Errors.sourceRefNotFound({ ...names, ref: wanted });
    const file = await this.repositories.readRootFile(algorithm.id, commit, README_NAMES, README_MAX_BYTES);
    if (!file) throw Errors.readmeNotFound({ ...names, commit });
    return { commit, ...file };
  }
}

function commitLimit(value: unknown): number {
  if (value === undefined || value === '') return DEFAULT_COMMITS;
  const n = typeof value === 'number' ? value : Number(value);
  if (!Number.isInteger(n) || n < 1 || n > MAX_COMMITS) {
    throw Errors.invalidLimit({ limit: String(value), max: MAX_COMMITS });
  }
  return n;
}

/** What a `ref` may be made of (the OpenAPI document states it); its shape is checked by REF_NAME. */
export const REF_CHARACTERS = '^[A-Za-z0-9._/@+-]{1,200}$';
/** `?limit=` of the commit list: 1 to MAX_COMMITS in decimal. */
export const COMMIT_LIMIT_PATTERN = '^0*(?:[1-9][0-9]?|100)$';
/** A full or abbreviated commit SHA. */
const COMMIT_SHA = /^[0-9a-fA-F]{4,64}$/;
/**
 * A branch or tag name as `git check-ref-format` allows it, narrowed to plain characters: no
 * leading `-` (never an option) or `.`, no `..`, `@{`, `//`, control characters, spaces,
 * `~^:?*[\`, and no trailing `/`, `.` or `.lock`.
 */
const REF_NAME = /^(?![-./])(?!.*\.\.)(?!.*\/\/)(?!.*@\{)(?!.*\/\.)(?!.*(?:\.lock|\/|\.)$)[A-Za-z0-9._/@+-]{1,200}$/;

/** Undefined for the default branch; otherwise a checked commit SHA or ref name. */
export function sourceRef(value: unknown): string | undefined {
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string') throw invalid('ref must be a string');
  if (!new RegExp(REF_CHARACTERS).test(value)) {
    throw invalid(
      `ref "${value.slice(0, 200)}" is not a commit SHA or a branch or tag name (1–200 letters, digits, ".", "_", "-", "/", "@", "+")`,
    );
  }
  return value;
}
