/**
 * The algorithm object: creating, listing, searching, changing and deleting algorithms, and
 * showing each with its newest version and build and where its source lives. It sits above
 * domain/algorithms (the records, their stores and repositories) and the areas built on them
 * (builds, versions, SCM), which read algorithms through the AlgorithmReader port it implements.
 */
import crypto from 'node:crypto';
import { type Clock, isoNow } from '../clock.js';
import { DomainError, Errors, forbidden, invalid } from '../errors.js';
import { assertName, MAX_ALGORITHM_NAME } from '../names.js';
import type { Page, PageRequest } from '../pagination.js';
import { isAdmin, refuseCallKey, requireCapability, type Principal } from '../accounts/principal.js';
import type { OwnerAccess } from '../accounts/access.js';
import type { Account } from '../accounts/model.js';
import type { AccountStore } from '../accounts/ports.js';
import { optionalText } from '../text.js';
import type { Catalog } from '../catalog/catalog.js';
import {
  type Algorithm,
  type AlgorithmInput,
  type AlgorithmRecord,
  type AlgorithmSettings,
  CALLABILITIES,
  LICENSES,
  NETWORK_ACCESS,
  SOURCE_VISIBILITIES,
} from '../algorithms/model.js';
import type { AlgorithmReader, AlgorithmStore, RepositoryHost } from '../algorithms/ports.js';
import type { Build } from '../builds/model.js';
import type { BuildStore } from '../builds/ports.js';
import type { Version } from '../versions/model.js';
import type { VersionStore } from '../versions/ports.js';
import { INTERNAL_SCM_ID } from '../scm/model.js';
import { type ChangeNotifier, ignoreChanges } from '../changes.js';
import type { AlgorithmSource, ExternalSourcePlan, ExternalSourcing } from '../scm/ports.js';

export interface AlgorithmDefaults {
  environmentName: string;
  networkAccess: 'isolated' | 'full';
}

/** The algorithm object: the record, with what the areas built on it add. */
export interface AlgorithmView extends AlgorithmRecord {
  /** The newest published version and the newest build, shown in the algorithm object. */
  latestVersion?: Version;
  latestBuild?: Build;
  /** Where the source lives when that is an external SCM. */
  source?: AlgorithmSource;
}

/** Where the algorithm object's version_info and build come from. */
export interface AlgorithmStatusSource {
  versions: Pick<VersionStore, 'latest'>;
  builds: Pick<BuildStore, 'listForAlgorithm'>;
}

/** What AlgorithmService is made from (named, so the composition root reads as a list of parts). */
export interface AlgorithmServiceDeps {
  algorithms: AlgorithmStore;
  accounts: AccountStore;
  access: OwnerAccess;
  catalog: Catalog;
  repositories: RepositoryHost;
  defaults: AlgorithmDefaults;
  clock: Clock;
  status?: AlgorithmStatusSource;
  /** External SCM hosting (domain/scm); without it, `source.scm` can name only the internal SCM. */
  external?: ExternalSourcing;
  /** Told after settings change or an algorithm goes (`algorithm_changed`). */
  changes?: ChangeNotifier;
}

export class AlgorithmService implements AlgorithmReader {
  private readonly changes: ChangeNotifier;

  private readonly algorithms: AlgorithmStore;
  private readonly accounts: AccountStore;
  private readonly access: OwnerAccess;
  private readonly catalog: Catalog;
  private readonly repositories: RepositoryHost;
  private readonly defaults: AlgorithmDefaults;
  private readonly clock: Clock;
  private readonly status?: AlgorithmStatusSource;
  private readonly external?: ExternalSourcing;

  constructor(deps: AlgorithmServiceDeps) {
    this.algorithms = deps.algorithms;
    this.accounts = deps.accounts;
    this.access = deps.access;
    this.catalog = deps.catalog;
    this.repositories = deps.repositories;
    this.defaults = deps.defaults;
    this.clock = deps.clock;
    this.status = deps.status;
    this.external = deps.external;
    this.changes = deps.changes ?? ignoreChanges;
  }

  private changed(algorithmId: string): void {
    this.changes.publish({ kind: 'algorithm_changed', algorithmId });
  }

  async create(p: Principal, ownerName: string, input: AlgorithmInput): Promise<AlgorithmView> {
    requireCapability(p, 'manage_algorithms');
    const owner = await this.requireOwner(ownerName);
    if (!(await this.access.canManage(p, owner))) {
      throw forbidden(`you may create algorithms only for yourself or an organization you belong to, not for "${owner.name}"`);
    }
    const name = assertName('name', input.name, MAX_ALGORITHM_NAME);
    const s = input.settings ?? {};
    const source = input.source ?? {};
    if (typeof source !== 'object' || Array.isArray(source)) throw invalid('source must be an object');
    const external = source.scm !== undefined && source.scm !== null && source.scm !== INTERNAL_SCM_ID;
    if (external && !this.external) throw Errors.scmConfigNotFound({ id: String(source.scm) });
    if (s.username !== undefined && (typeof s.username !== 'string' || s.username.toLowerCase() !== owner.name.toLowerCase())) {
      throw invalid(`settings.username "${String(s.username)}" does not match the owner "${owner.name}" in the path`);
    }
    const environment = this.catalog.resolveForCreate(
      {
        algorithmEnvironment: optionalText('settings.algorithm_environment', s.algorithm_environment),
        language: optionalText('settings.language', s.language),
        hardware: optionalText('settings.environment', s.environment),
      },
      this.defaults.environmentName,
    );
    const now = isoNow(this.clock);
    const algorithm: Algorithm = {
      id: crypto.randomUUID(),
      ownerId: owner.id,
      ownerName: owner.name,
      name,
      details: { label: null, summary: null, tagline: null },
      settings: {
        algorithmCallability: 'private',
        sourceVisibility: 'closed',
        license: 'apl',
        royaltyMicrocredits: 0,
        networkAccess: this.defaults.networkAccess,
        pipelineEnabled: false,
        insightsEnabled: false,
        environmentName: environment.name,
      },
      createdAt: now,
      updatedAt: now,
    };
    applyChanges(algorithm, input, false);
    // An algorithm of that name makes any check at the provider moot: said first.
    if (await this.algorithms.find(owner.id, name)) throw Errors.algorithmExists({ owner: owner.name, name });
    // Every prerequisite of an external source is checked (asking the provider) before anything is made.
    const plan: ExternalSourcePlan | undefined = external ? await this.external!.plan(p, source) : undefined;
    // Inserting first makes a racing create of the same name fail before anything else is touched.
    await this.algorithms.insert(algorithm);
    let repositoryMade = false;
    try {
      const files = this.catalog.renderTemplate(environment, { algoName: name, owner: owner.name });
      await this.repositories.create(
        algorithm.id,
        files,
        plan?.commitMessage ?? `Create ${owner.name}/${name} from the ${environment.name} template`,
      );
      repositoryMade = true;
      const hosted = plan && (await plan.establish(algorithm));
      return { algorithm, environment, source: hosted };
    } catch (err) {
      if (repositoryMade) await this.repositories.delete(algorithm.id);
      await this.algorithms.delete(algorithm.id);
      throw err;
    }
  }

  async get(p: Principal, ownerName: string, name: string): Promise<AlgorithmView> {
    const { algorithm } = await this.requireVisible(p, ownerName, name);
    return this.describe(algorithm);
  }

  async list(p: Principal, ownerName: string, page: PageRequest): Promise<Page<AlgorithmView>> {
    const owner = await this.requireOwner(ownerName);
    const includePrivate = await this.access.canManage(p, owner);
    const result = await this.algorithms.listByOwner(owner.id, { includePrivate, page });
    const items: AlgorithmView[] = [];
    for (const a of result.items) items.push(await this.describe(a));
    return { items, nextMarker: result.nextMarker };
  }

  /**
   * Explore: public algorithms of every owner, newest first, whose owner, name, label or summary
   * contains `query` (ignoring case). Any credential may search, as any may read a public algorithm.
   */
  async search(_p: Principal, query: unknown, page: PageRequest): Promise<Page<AlgorithmView>> {
    const text = optionalText('query', query, MAX_SEARCH_QUERY)?.trim() ?? '';
    const result = await this.algorithms.searchPublic(text, page);
    const items: AlgorithmView[] = [];
    for (const a of result.items) items.push(await this.describe(a));
    return { items, nextMarker: result.nextMarker };
  }

  /** PUT and PATCH both merge: the Python client sends empty objects for what it leaves alone. */
  async update(p: Principal, ownerName: string, name: string, input: AlgorithmInput): Promise<AlgorithmView> {
    const { algorithm } = await this.requireManaged(p, ownerName, name);
    if (input.name !== undefined && input.name !== algorithm.name) throw invalid('an algorithm cannot be renamed');
    applyChanges(algorithm, input, true, this.catalog);
    algorithm.updatedAt = isoNow(this.clock);
    await this.algorithms.update(algorithm);
    this.changed(algorithm.id);
    return this.describe(algorithm);
  }

  async delete(p: Principal, ownerName: string, name: string): Promise<void> {
    const { algorithm } = await this.requireManaged(p, ownerName, name);
    await this.algorithms.delete(algorithm.id);
    await this.repositories.delete(algorithm.id);
    this.changed(algorithm.id);
  }

  /**
   * Git access (docs/compatibility.md §9.3): standard keys only, never an algorithm call's key. Pushing
   * and reading a member's source need the manage_algorithms capability and the owner or a
   * member of the owning organization; reading also works for public algorithms with open
   * source. Unknown and invisible algorithms are the same 404, so names do not leak.
   */
  async authorizeSource(p: Principal, ownerName: string, name: string, mode: 'read' | 'write'): Promise<Algorithm> {
    if (p.via === 'admin_key') throw forbidden('admin keys cannot be used for Git; use a standard API key of the account');
    refuseCallKey(p, 'Git access');
    const owner = await this.accounts.findByName(ownerName);
    const algorithm = owner && (await this.algorithms.find(owner.id, name));
    if (!owner || !algorithm) throw noSuchAlgorithm(ownerName, name);
    if (await this.access.isMemberOrSelf(p, owner)) {
      requireCapability(p, 'manage_algorithms');
      if (mode === 'write') {
        // Its repository here mirrors the provider's: a push here would be overwritten by the next one there.
        const source = await this.external?.sourceOf(algorithm.id);
        if (source) throw Errors.scmSourceElsewhere({ owner: owner.name, name: algorithm.name, url: source.webUrl });
      }
      return algorithm;
    }
    const openSource = algorithm.settings.algorithmCallability === 'public' && algorithm.settings.sourceVisibility === 'open';
    if (!openSource) throw noSuchAlgorithm(ownerName, name);
    if (mode === 'write') throw forbidden(`no write access to ${owner.name}/${algorithm.name}`);
    return algorithm;
  }

  /**
   * Reading source through the API (the commit list): whoever may fetch it over Git, and cluster
   * admins, who read every algorithm's builds and logs already (Git refuses admin keys only
   * because a Git credential is an account's own standard key). A public algorithm whose source
   * is closed is a 403 that says so: its existence is no secret.
   */
  async authorizeSourceRead(p: Principal, ownerName: string, name: string): Promise<Algorithm> {
    if (isAdmin(p)) return (await this.requireVisible(p, ownerName, name)).algorithm;
    try {
      return await this.authorizeSource(p, ownerName, name, 'read');
    } catch (err) {
      if (!(err instanceof DomainError && err.is(Errors.algorithmNotFound))) throw err;
      const owner = await this.accounts.findByName(ownerName);
      const algorithm = owner && (await this.algorithms.find(owner.id, name));
      if (algorithm?.settings.algorithmCallability === 'public') {
        throw forbidden(`the source of ${algorithm.ownerName}/${algorithm.name} is closed: only its owner and members may read it`);
      }
      throw err;
    }
  }

  /** An algorithm the caller may read (public, or theirs to manage); others get the same 404. */
  async readable(p: Principal, ownerName: string, name: string): Promise<Algorithm> {
    return (await this.requireVisible(p, ownerName, name)).algorithm;
  }

  /** For what only the owner and members see (builds, logs): others get the same 404. */
  async forMember(p: Principal, ownerName: string, name: string, capability?: 'manage_algorithms'): Promise<AlgorithmView> {
    if (capability) requireCapability(p, capability);
    const owner = await this.accounts.findByName(ownerName);
    const algorithm = owner && (await this.algorithms.find(owner.id, name));
    if (!owner || !algorithm || !(await this.access.canManage(p, owner))) throw noSuchAlgorithm(ownerName, name);
    return this.view(algorithm);
  }

  /** The algorithm behind an id, for background work (builds) that has no caller. */
  async byId(id: string): Promise<AlgorithmView | undefined> {
    const algorithm = await this.algorithms.findById(id);
    return algorithm && this.view(algorithm);
  }

  /** Removes everything an account owns; runs before the account itself is deleted. */
  async deleteAllOf(owner: Account): Promise<void> {
    for (const algorithm of await this.algorithms.listAllByOwner(owner.id)) {
      await this.algorithms.delete(algorithm.id);
      await this.repositories.delete(algorithm.id);
      this.changed(algorithm.id);
    }
  }

  /** The view with the latest version and build, for responses that show the algorithm object. */
  private async describe(algorithm: Algorithm): Promise<AlgorithmView> {
    const view = this.view(algorithm);
    const source = await this.external?.sourceOf(algorithm.id);
    if (!this.status) return { ...view, source };
    const [latestVersion, builds] = await Promise.all([
      this.status.versions.latest(algorithm.id),
      this.status.builds.listForAlgorithm(algorithm.id, { limit: 1, after: undefined }),
    ]);
    return { ...view, latestVersion, latestBuild: builds.items[0], source };
  }

  private view(algorithm: Algorithm): AlgorithmView {
    const environment = this.catalog.environmentByName(algorithm.settings.environmentName);
    if (!environment)
      throw new Error(`algorithm ${algorithm.id} uses environment ${algorithm.settings.environmentName}, which left the catalog`);
    return { algorithm, environment };
  }

  private async requireOwner(ownerName: string): Promise<Account> {
    const owner = await this.accounts.findByName(ownerName);
    if (!owner) throw Errors.ownerNotFound({ name: ownerName });
    return owner;
  }

  /** Private algorithms are invisible (404) to those who may not manage them. */
  private async requireVisible(p: Principal, ownerName: string, name: string): Promise<{ algorithm: Algorithm; owner: Account }> {
    const owner = await this.accounts.findByName(ownerName);
    const algorithm = owner && (await this.algorithms.find(owner.id, name));
    if (!owner || !algorithm) throw noSuchAlgorithm(ownerName, name);
    if (algorithm.settings.algorithmCallability !== 'public' && !(await this.access.canManage(p, owner))) {
      throw noSuchAlgorithm(ownerName, name);
    }
    return { algorithm, owner };
  }

  private async requireManaged(p: Principal, ownerName: string, name: string): Promise<{ algorithm: Algorithm; owner: Account }> {
    requireCapability(p, 'manage_algorithms');
    const found = await this.requireVisible(p, ownerName, name);
    if (!(await this.access.canManage(p, found.owner))) {
      throw forbidden(`you may not change ${found.owner.name}/${found.algorithm.name}`);
    }
    return found;
  }
}

export const noSuchAlgorithm = (owner: string, name: string) => Errors.algorithmNotFound({ owner, name });

function applyChanges(a: Algorithm, input: AlgorithmInput, isUpdate: boolean, catalog?: Catalog): void {
  const d = input.details ?? {};
  if (typeof d !== 'object' || Array.isArray(d)) throw invalid('details must be an object');
  a.details.label = optionalText('details.label', d.label) ?? a.details.label;
  a.details.summary = optionalText('details.summary', d.summary, 5000) ?? a.details.summary;
  a.details.tagline = optionalText('details.tagline', d.tagline) ?? a.details.tagline;
  const s = input.settings ?? {};
  if (typeof s !== 'object' || Array.isArray(s)) throw invalid('settings must be an object');
  const next: AlgorithmSettings = { ...a.settings };
  next.algorithmCallability = oneOf('settings.algorithm_callability', s.algorithm_callability, CALLABILITIES) ?? next.algorithmCallability;
  next.sourceVisibility = oneOf('settings.source_visibility', s.source_visibility, SOURCE_VISIBILITIES) ?? next.sourceVisibility;
  next.license = oneOf('settings.license', s.license, LICENSES) ?? next.license;
  next.networkAccess = oneOf('settings.network_access', s.network_access, NETWORK_ACCESS) ?? next.networkAccess;
  next.pipelineEnabled = bool('settings.pipeline_enabled', s.pipeline_enabled) ?? next.pipelineEnabled;
  next.insightsEnabled = bool('settings.insights_enabled', s.insights_enabled) ?? next.insightsEnabled;
  if (s.royalty_microcredits !== undefined && s.royalty_microcredits !== null) {
    const royalty = s.royalty_microcredits as number;
    if (!Number.isInteger(royalty) || royalty < 0 || royalty > MAX_ROYALTY_MICROCREDITS) {
      throw invalid(`settings.royalty_microcredits must be an integer from 0 to ${MAX_ROYALTY_MICROCREDITS}`);
    }
    next.royaltyMicrocredits = royalty;
  }
  if (isUpdate && catalog && s.algorithm_environment !== undefined) {
    const env = catalog.resolveForCreate(
      { algorithmEnvironment: optionalText('settings.algorithm_environment', s.algorithm_environment) },
      next.environmentName,
    );
    const current = catalog.environmentByName(next.environmentName);
    if (current && env.language !== current.language) {
      throw Errors.stateConflict(
        `settings.algorithm_environment must stay within language ${current.language}; create a new algorithm to change language`,
      );
    }
    next.environmentName = env.name;
  }
  // The legacy form's language cannot change either; refuse a different one rather than ignore it.
  if (isUpdate && catalog && s.language !== undefined && s.language !== null) {
    const language = optionalText('settings.language', s.language);
    const wanted = catalog.resolveForCreate({ language }, next.environmentName);
    const current = catalog.environmentByName(next.environmentName);
    if (current && wanted.language !== current.language) {
      throw Errors.stateConflict(
        `settings.language "${language}" is not the language of this algorithm (${current.language}); create a new algorithm to change language`,
      );
    }
  }
  // docs/compatibility.md §3: closed source is allowed only under the apl license. A request saying
  // both is refused by its schema (400); one that changes only one of them against the present
  // (or default) other conflicts with that state.
  if (next.sourceVisibility === 'closed' && next.license !== 'apl') {
    throw Errors.stateConflict(
      `settings.source_visibility "closed" requires license "apl"; with license "${next.license}" the source must be "open"`,
    );
  }
  a.settings = next;
}

/** The longest Explore search text, in characters. */
export const MAX_SEARCH_QUERY = 100;

/** The largest royalty both databases store exactly (a 32-bit integer column). */
const MAX_ROYALTY_MICROCREDITS = 2_147_483_647;

function oneOf<T extends string>(field: string, value: unknown, allowed: readonly T[]): T | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    throw invalid(`${field} must be one of ${allowed.join(', ')}; got ${JSON.stringify(value)}`);
  }
  return value as T;
}

function bool(field: string, value: unknown): boolean | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') throw invalid(`${field} must be true or false`);
  return value;
}
