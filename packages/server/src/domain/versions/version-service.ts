/**
 * Publishing (docs/compatibility.md §3, docs/compatibility.md §9.1 rule 2 and §9.6): a publish freezes the latest successful
 * build under the next semantic version number, tags its commit and makes a read-only clone
 * address for it. Calls and Git resolve version names here.
 */
import crypto from 'node:crypto';
import { type Clock, isoNow } from '../clock.js';
import { DomainError, Errors, invalid } from '../errors.js';
import { isAdmin, type Principal } from '../accounts/principal.js';
import type { OwnerAccess } from '../accounts/access.js';
import type { AccountStore } from '../accounts/ports.js';
import type { Algorithm, AlgorithmRecord } from '../algorithms/model.js';
import type { AlgorithmReader, RepositoryHost } from '../algorithms/ports.js';
import type { Build } from '../builds/model.js';
import type { BuildStore } from '../builds/ports.js';
import { encodeMarker, type Page, type PageRequest } from '../pagination.js';
import { optionalText } from '../text.js';
import type { Version } from './model.js';
import type { VersionStore } from './ports.js';
import {
  bump,
  compareSemVer,
  formatSemVer,
  inRange,
  parseExact,
  parseVersionQuery,
  parseVersionType,
  type VersionQuery,
} from './semver.js';
import { type ChangeNotifier, ignoreChanges } from '../changes.js';

/** The body of POST .../versions (docs/compatibility.md §3); every part optional, an empty body allowed. */
export interface PublishInput {
  details?: Record<string, unknown> | null;
  settings?: Record<string, unknown> | null;
  version_info?: Record<string, unknown> | null;
}

/** One entry of the versions list: a published version, or (members only) a build not yet published. */
export interface VersionView {
  view: AlgorithmRecord;
  version?: Version;
  build: Build;
}

/** What a call runs: the artifact of a build, and the version it was published as, if any. */
export interface CallTarget {
  artifact: string;
  environmentName: string;
  semanticVersion?: string;
  /** Whether the published version lets its calls report Insights (never for an unpublished build). */
  insightsEnabled: boolean;
}

const MAX_SAMPLE_CHARS = 64 * 1024;

/** What VersionService is made from (named, so the composition root reads as a list of parts). */
export interface VersionServiceDeps {
  versions: VersionStore;
  builds: BuildStore;
  algorithms: AlgorithmReader;
  accounts: AccountStore;
  access: OwnerAccess;
  repositories: RepositoryHost;
  clock: Clock;
  /** Told after every publish (`version_published`). */
  changes?: ChangeNotifier;
}

export class VersionService {
  private readonly changes: ChangeNotifier;

  private readonly versions: VersionStore;
  private readonly builds: BuildStore;
  private readonly algorithms: AlgorithmReader;
  private readonly accounts: AccountStore;
  private readonly access: OwnerAccess;
  private readonly repositories: RepositoryHost;
  private readonly clock: Clock;

  constructor(deps: VersionServiceDeps) {
    this.versions = deps.versions;
    this.builds = deps.builds;
    this.algorithms = deps.algorithms;
    this.accounts = deps.accounts;
    this.access = deps.access;
    this.repositories = deps.repositories;
    this.clock = deps.clock;
    this.changes = deps.changes ?? ignoreChanges;
  }

  async publish(p: Principal, ownerName: string, name: string, input: PublishInput): Promise<VersionView> {
    const { algorithm } = await this.algorithms.forMember(p, ownerName, name, 'manage_algorithms');
    const request = parsePublishInput(input, algorithm);
    const build = await this.builds.latestSucceeded(algorithm.id);
    if (!build?.artifact) {
      throw Errors.noBuildToPublish({ owner: ownerName, name });
    }
    const fingerprint = fingerprintOf(p, build, request);

    for (let attempt = 0; ; attempt++) {
      const already = await this.versions.findByBuild(algorithm.id, build.id);
      if (already) {
        // The Python client retries a failed publish once: the same request gets the same version.
        if (already.requestFingerprint === fingerprint) return this.versionView(p, ownerName, name, already, build);
        throw Errors.buildAlreadyPublished({ owner: ownerName, name, commit: build.commitSha, version: already.semanticVersion });
      }
      const next = bump(await this.versions.latest(algorithm.id), request.type);
      const version: Version = {
        ...next,
        id: crypto.randomUUID(),
        algorithmId: algorithm.id,
        buildId: build.id,
        commitSha: build.commitSha,
        environmentName: build.environmentName,
        artifact: build.artifact,
        semanticVersion: formatSemVer(next),
        algorithmCallability: request.callability,
        insightsEnabled: request.insightsEnabled,
        releaseNotes: request.releaseNotes,
        sampleInput: request.sampleInput,
        sampleOutput: request.sampleOutput,
        requestFingerprint: fingerprint,
        publishedBy: p.account.id,
        publishedAt: isoNow(this.clock),
      };
      try {
        await this.versions.insert(version);
      } catch (err) {
        // A concurrent publish took the number or the build: look again (at most twice).
        if (err instanceof DomainError && err.is(Errors.versionPublishRace) && attempt < 2) continue;
        throw err;
      }
      // Publishing a public version makes the algorithm public (visible, and its public versions
      // callable by everyone). A private version never hides the public ones published before;
      // making the whole algorithm private again is a settings change of its own.
      const changes: Record<string, unknown> = {};
      if (input.details) changes.details = input.details;
      if (request.callability === 'public' && algorithm.settings.algorithmCallability !== 'public') {
        changes.settings = { algorithm_callability: 'public' };
      }
      if (Object.keys(changes).length > 0) await this.algorithms.update(p, ownerName, name, changes);
      await this.repositories.publishVersion(algorithm.id, version.semanticVersion, version.commitSha);
      this.changes.publish({ kind: 'version_published', algorithmId: algorithm.id });
      return this.versionView(p, ownerName, name, version, build);
    }
  }

  /**
   * Published versions, highest first (`published` absent or true); `published=false` lists
   * successful builds not yet published (members only). Non-members see public versions only.
   */
  async list(
    p: Principal,
    ownerName: string,
    name: string,
    opts: { published?: boolean; callable?: boolean; page: PageRequest },
  ): Promise<Page<VersionView>> {
    const view = await this.algorithms.get(p, ownerName, name);
    const member = await this.isMember(p, view.algorithm);
    if (opts.published === false) {
      if (!member || opts.callable === true) return { items: [], nextMarker: null };
      return this.unpublishedBuilds(view, opts.page);
    }
    let callability: 'private' | 'public' | undefined = opts.callable === undefined ? undefined : opts.callable ? 'public' : 'private';
    if (!member) {
      if (callability === 'private') return { items: [], nextMarker: null };
      callability = 'public';
    }
    const page = await this.versions.list(view.algorithm.id, { callability, page: opts.page });
    const items: VersionView[] = [];
    for (const version of page.items) items.push({ view, version, build: await this.buildOf(version) });
    return { items, nextMarker: page.nextMarker };
  }

  /** A version by the commit it was built from: the published one, or for members a successful build. */
  async get(p: Principal, ownerName: string, name: string, gitHash: string): Promise<VersionView> {
    const view = await this.algorithms.get(p, ownerName, name);
    const member = await this.isMember(p, view.algorithm);
    const missing = () => Errors.algorithmAddressNotFound({ address: `algo://${ownerName}/${name}/${gitHash}` });
    if (!/^[0-9a-f]{40}$/.test(gitHash)) {
      throw Errors.badRequest(`"${gitHash}" is not a git hash: use the full 40-character commit SHA`);
    }
    const version = await this.versions.findByCommit(view.algorithm.id, gitHash);
    if (version && (member || version.algorithmCallability === 'public')) return { view, version, build: await this.buildOf(version) };
    if (!member) throw missing();
    const build = await this.builds.findSucceeded(view.algorithm.id, gitHash);
    if (!build) throw missing();
    return { view, build };
  }

  /**
   * The build a call runs (docs/compatibility.md §2). `member` callers (owner, organization members, admins)
   * may name private versions and commits; everyone else reaches public versions only.
   */
  async resolveCall(algorithm: Algorithm, ownerName: string, member: boolean, versionText: string | undefined): Promise<CallTarget> {
    const query = parseVersionQuery(versionText);
    const address = `algo://${ownerName}/${algorithm.name}${versionText ? `/${versionText}` : ''}`;
    if (query.kind === 'commit') {
      if (!member) {
        throw Errors.forbidden(`calling ${address} by commit is for its owner and organization members; call a published version`);
      }
      const build = await this.builds.findSucceeded(algorithm.id, query.sha);
      if (!build?.artifact) {
        throw Errors.algorithmAddressNotFound({ address, detail: ': no successful build of that commit' });
      }
      const published = await this.versions.findByBuild(algorithm.id, build.id);
      return {
        artifact: build.artifact,
        environmentName: build.environmentName,
        semanticVersion: published?.semanticVersion,
        insightsEnabled: published?.insightsEnabled ?? false,
      };
    }
    const all = await this.versions.listAll(algorithm.id);
    const chosen = pick(all, query, member);
    if (!chosen) {
      const hint =
        all.length === 0
          ? `it has no published version${member ? `; its owner can call a built commit: algo://${ownerName}/${algorithm.name}/<commit sha>` : ''}`
          : query.kind === 'latest' && member
            ? 'it has no public version; call latestPrivate or an exact version'
            : 'no published version matches';
      throw Errors.algorithmAddressNotFound({ address, detail: `: ${hint}` });
    }
    return {
      artifact: chosen.artifact,
      environmentName: chosen.environmentName,
      semanticVersion: chosen.semanticVersion,
      insightsEnabled: chosen.insightsEnabled,
    };
  }

  /**
   * The bare repository serving exactly one published version (docs/compatibility.md §9.3,
   * `{algo_version}`): major.minor.patch only; non-members reach public versions only.
   */
  async repositoryForVersion(p: Principal, algorithm: Algorithm, versionText: string): Promise<string> {
    const semver = parseExact(versionText);
    const missing = () => Errors.versionNotPublished({ version: versionText, owner: algorithm.ownerName, name: algorithm.name });
    if (!semver) throw missing();
    const version = (await this.versions.listAll(algorithm.id)).find((v) => compareSemVer(v, semver) === 0);
    if (!version) throw missing();
    if (version.algorithmCallability !== 'public' && !(await this.isMember(p, algorithm))) throw missing();
    return this.repositories.versionRepository(algorithm.id, version.semanticVersion, version.commitSha);
  }

  /** The latest published version of an algorithm, for the algorithm object. */
  latestOf(algorithmId: string): Promise<Version | undefined> {
    return this.versions.latest(algorithmId);
  }

  private async unpublishedBuilds(view: AlgorithmRecord, request: PageRequest): Promise<Page<VersionView>> {
    // Successful builds without a version, newest first; pages follow the build list's markers.
    const items: VersionView[] = [];
    let after = request.after;
    for (;;) {
      const page = await this.builds.listForAlgorithm(view.algorithm.id, { limit: request.limit, after });
      for (const build of page.items) {
        if (build.status !== 'succeeded' || (await this.versions.findByBuild(view.algorithm.id, build.id))) continue;
        items.push({ view, build });
        if (items.length === request.limit) return { items, nextMarker: encodeMarker(`${build.createdAt}|${build.id}`) };
      }
      if (!page.nextMarker) return { items, nextMarker: null };
      after = `${page.items.at(-1)!.createdAt}|${page.items.at(-1)!.id}`;
    }
  }

  private async buildOf(version: Version): Promise<Build> {
    const build = await this.builds.get(version.buildId);
    if (build) return build;
    // Builds are never deleted apart from their algorithm; describe the build from the version.
    return {
      id: version.buildId,
      algorithmId: version.algorithmId,
      commitSha: version.commitSha,
      environmentName: version.environmentName,
      status: 'succeeded',
      trigger: 'push',
      attempt: 1,
      error: null,
      artifact: version.artifact,
      createdAt: version.publishedAt,
      startedAt: null,
      finishedAt: null,
    };
  }

  private async isMember(p: Principal, algorithm: Algorithm): Promise<boolean> {
    if (isAdmin(p)) return true;
    const owner = await this.accounts.findById(algorithm.ownerId);
    return owner !== undefined && (await this.access.isMemberOrSelf(p, owner));
  }

  private async versionView(p: Principal, ownerName: string, name: string, version: Version, build: Build): Promise<VersionView> {
    return { view: await this.algorithms.get(p, ownerName, name), version, build };
  }
}

/** The newest published version a query names, among `all` (highest first). */
function pick(all: Version[], query: VersionQuery, member: boolean): Version | undefined {
  switch (query.kind) {
    case 'latest':
      return all.find((v) => v.algorithmCallability === 'public');
    case 'latestPrivate':
      // docs/compatibility.md §2: the newest of any callability; private ones only for members.
      return all.find((v) => member || v.algorithmCallability === 'public');
    case 'exact':
      return all.find((v) => compareSemVer(v, query.version) === 0 && (member || v.algorithmCallability === 'public'));
    case 'range':
      // Partial versions never resolve to private versions, not even for members.
      return all.find((v) => inRange(v, query) && v.algorithmCallability === 'public');
    case 'commit':
      return undefined;
  }
}

interface ParsedPublish {
  type: ReturnType<typeof parseVersionType>;
  releaseNotes: string | null;
  sampleInput: string | null;
  sampleOutput: string | null;
  callability: 'private' | 'public';
  insightsEnabled: boolean;
}

function parsePublishInput(input: PublishInput, algorithm: Algorithm): ParsedPublish {
  const info = objectOrEmpty('version_info', input.version_info);
  const settings = objectOrEmpty('settings', input.settings);
  const callability = settings.algorithm_callability ?? algorithm.settings.algorithmCallability;
  if (callability !== 'private' && callability !== 'public') {
    throw invalid(`settings.algorithm_callability must be private or public; got ${JSON.stringify(callability)}`);
  }
  const insights = settings.insights_enabled ?? algorithm.settings.insightsEnabled;
  if (typeof insights !== 'boolean') throw invalid('settings.insights_enabled must be true or false');
  return {
    type: parseVersionType(info.version_type ?? info.type),
    releaseNotes: optionalText('version_info.release_notes', info.release_notes, MAX_SAMPLE_CHARS) ?? null,
    sampleInput: sample('version_info.sample_input', info.sample_input),
    sampleOutput: sample('version_info.sample_output', info.sample_output),
    callability,
    insightsEnabled: insights,
  };
}

function objectOrEmpty(field: string, value: unknown): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw invalid(`${field} must be an object`);
  return value as Record<string, unknown>;
}

/** Samples are shown as text; a JSON value sent instead of a string is kept as its JSON text. */
function sample(field: string, value: unknown): string | null {
  if (value === undefined || value === null) return null;
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return optionalText(field, text, MAX_SAMPLE_CHARS) ?? null;
}

function fingerprintOf(p: Principal, build: Build, request: ParsedPublish): string {
  return crypto
    .createHash('sha256')
    .update(JSON.stringify([p.account.id, build.id, request]))
    .digest('hex');
}
