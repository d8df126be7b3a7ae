/** Domain objects → the JSON shapes of the API (docs/compatibility.md §9.5, §3 and §6). */
import type { AuditEntry } from '../domain/audit/audit-service.js';
import type { Account, ApiKey, Invitation } from '../domain/accounts/model.js';
import type { AlgorithmView } from '../domain/algorithm-objects/algorithm-service.js';
import type { AlgorithmSource } from '../domain/scm/ports.js';
import type { ScmConfigView, ScmTokenStatus, SourceDelivery } from '../domain/scm/model.js';
import type { CommitSummary } from '../domain/algorithms/model.js';
import type { Readme } from '../domain/algorithms/source-service.js';
import type { Identity } from '../domain/accounts/principal.js';
import type { ClusterStatus } from '../domain/cluster/status-service.js';
import type { Environment, LanguageSpec } from '../domain/catalog/model.js';
import type { Page } from '../domain/pagination.js';
import type { Build } from '../domain/builds/model.js';
import type { Version } from '../domain/versions/model.js';
import type { VersionView } from '../domain/versions/version-service.js';

export interface Links {
  readonly publicUrl: string;
}

const opt = <T>(v: T | null | undefined): T | undefined => (v === null ? undefined : v);

/**
 * The User of the interface specification (docs/compatibility.md §9.5) with all its fields
 * every time: a field that was never set is "" (the specification types each as a string), so a
 * client reading `fullname` or `company_role` never meets a missing key. `company_name` is ours.
 */
export function userJson(a: Account, l: Links) {
  return {
    id: a.id,
    username: a.name,
    email: a.email ?? '',
    fullname: a.fullname ?? '',
    company_name: a.companyName ?? '',
    company_role: a.companyRole ?? '',
    self_link: `${l.publicUrl}/v1/users/${a.name}`,
    resource_type: 'user' as const,
  };
}

export function organizationJson(a: Account, l: Links) {
  const o = a.organization!;
  return {
    id: a.id,
    org_name: a.name,
    org_label: o.label,
    org_contact_name: opt(o.contactName),
    org_email: opt(a.email),
    org_url: opt(o.url),
    type_id: o.typeId,
    self_link: `${l.publicUrl}/v1/organizations/${a.name}`,
    resource_type: 'organization' as const,
  };
}

export function invitationJson(i: Invitation) {
  return {
    org_name: i.organization.name,
    username: i.user.name,
    role: i.role,
    invited_by: i.invitedBy?.name ?? null,
    created_at: i.createdAt,
  };
}

export function keyJson(k: ApiKey) {
  return {
    id: k.id,
    kind: k.kind,
    capabilities: k.capabilities,
    prefix: k.prefix,
    description: opt(k.description),
    created_at: k.createdAt,
  };
}

export function languageJson(l: LanguageSpec) {
  return {
    name: l.name,
    display_name: l.display_name,
    configuration: JSON.stringify({ display_name: l.display_name, req_files: l.req_files, artifacts: l.artifacts }),
  };
}

export function environmentJson(e: Environment) {
  return {
    id: e.id,
    name: e.name,
    environment_specification_id: e.specification_id,
    display_name: e.display_name,
    description: e.description,
    // Spec: ISO 8601 with fractional seconds and no zone designator (the value is UTC).
    created_at: e.createdAt.replace(/Z$/, ''),
    language: languageJson(e.languageSpec),
    machine_type: e.machine_type,
    runtime: e.runtime,
  };
}

export function algorithmJson({ algorithm: a, environment: env, latestVersion, latestBuild, source }: AlgorithmView, l: Links) {
  return {
    id: a.id,
    name: a.name,
    owner: a.ownerName,
    details: { label: opt(a.details.label), summary: opt(a.details.summary), tagline: opt(a.details.tagline) },
    settings: {
      algorithm_callability: a.settings.algorithmCallability,
      source_visibility: a.settings.sourceVisibility,
      language: env.languageSpec.legacy_language,
      environment: env.machine_type.toLowerCase(),
      package_set: env.name,
      algorithm_environment: env.id,
      license: a.settings.license,
      royalty_microcredits: a.settings.royaltyMicrocredits,
      network_access: a.settings.networkAccess,
      pipeline_enabled: a.settings.pipelineEnabled,
      insights_enabled: a.settings.insightsEnabled,
    },
    version_info: latestVersion ? versionInfoJson(latestVersion) : latestBuild ? { git_hash: latestBuild.commitSha } : undefined,
    build: latestBuild ? buildJson(latestBuild) : undefined,
    source: source ? sourceJson(source) : undefined,
    git_url: `${l.publicUrl}/git/${a.ownerName}/${a.name}.git`,
    created_at: a.createdAt,
    updated_at: a.updatedAt,
    self_link: `${l.publicUrl}/v1/algorithms/${a.ownerName}/${a.name}`,
    resource_type: 'algorithm' as const,
  };
}

export function versionInfoJson(v: Version) {
  return {
    semantic_version: v.semanticVersion,
    git_hash: v.commitSha,
    version_uuid: v.id,
    release_notes: opt(v.releaseNotes),
    sample_input: opt(v.sampleInput),
    sample_output: opt(v.sampleOutput),
    published_at: v.publishedAt,
  };
}

/**
 * One entry of the versions list (docs/compatibility.md §3): the algorithm object as of that version, with
 * the version's own callability and insights setting. An unpublished build has only a git hash.
 */
export function versionJson({ view, version, build }: VersionView, l: Links) {
  const base = algorithmJson({ algorithm: view.algorithm, environment: view.environment }, l);
  return {
    ...base,
    settings: {
      ...base.settings,
      algorithm_callability: version?.algorithmCallability ?? 'private',
      insights_enabled: version?.insightsEnabled ?? view.algorithm.settings.insightsEnabled,
    },
    version_info: version ? versionInfoJson(version) : { git_hash: build.commitSha },
    build: buildJson(build),
    git_url: version
      ? `${l.publicUrl}/git/${view.algorithm.ownerName}/${view.algorithm.name}/${version.semanticVersion}.git`
      : base.git_url,
    self_link: `${base.self_link}/versions/${build.commitSha}`,
  };
}

export function buildJson(b: Build) {
  return {
    build_id: b.id,
    commit_sha: b.commitSha,
    status: b.status,
    trigger: b.trigger,
    environment: b.environmentName,
    error: b.error ?? undefined,
    created_at: b.createdAt,
    started_at: b.startedAt,
    finished_at: b.finishedAt,
    resource_type: 'build' as const,
  };
}

/** Spec "SCM configuration": the client id under both names the spec's table gives it; never the secret. */
export function scmConfigJson(c: ScmConfigView) {
  return {
    id: c.id,
    name: c.name,
    provider: c.provider,
    default: c.isDefault,
    enabled: c.enabled,
    scm: c.oauthClientId === undefined ? undefined : { client_id: c.oauthClientId },
    oauth: c.oauthClientId === undefined ? undefined : { client_id: c.oauthClientId },
    urls: { web: c.urls.web, api: c.urls.api, ssh: c.urls.ssh },
  };
}

/** Spec "SCM token status", exactly. */
export function tokenStatusJson(s: ScmTokenStatus) {
  return {
    scm_username: s.scmUsername,
    authorization_status: s.authorizationStatus,
    scm_organizations: s.organizations.map((o) => ({ scm_org_username: o.name, access_level: o.accessLevel })),
  };
}

/** Spec "Source" (response side), plus the web address and the last webhook delivery the UI shows. */
export function sourceJson(s: AlgorithmSource) {
  return {
    repository_name: s.repositoryName,
    repository_owner: s.repositoryOwner,
    scm: scmConfigJson(s.scm),
    repository_https_url: s.httpsUrl,
    repository_ssh_url: s.sshUrl,
    repository_web_url: s.webUrl,
    last_delivery: s.lastDelivery ? deliveryJson(s.lastDelivery) : undefined,
  };
}

export function deliveryJson(d: SourceDelivery) {
  return { at: d.at, via: d.via, commit_sha: d.commitSha, result: d.result };
}

export function identityJson(i: Identity) {
  return {
    username: i.username,
    admin: i.admin,
    credential: i.credential,
    capabilities: i.capabilities,
    organizations: i.organizations?.map((o) => ({ name: o.name, role: o.role })),
    email: i.profile?.email,
    fullname: i.profile?.fullname,
    company_name: i.profile?.companyName,
    company_role: i.profile?.companyRole,
  };
}

export function commitJson(c: CommitSummary) {
  return { sha: c.sha, author_name: c.authorName, message: c.message, committed_at: c.committedAt };
}

export function readmeJson(r: Readme) {
  return { commit: r.commit, path: r.path, content: r.content, truncated: r.truncated ? true : undefined };
}

export function clusterStatusJson(s: ClusterStatus) {
  return {
    version: s.version,
    database: s.database,
    blob_store: s.blobStore,
    builds: { queued: s.builds.queued, running: s.builds.running },
    runners: { warm: s.runners.warm },
    calls_per_minute: s.callsPerMinute,
    uptime_seconds: s.uptimeSeconds,
  };
}

/** docs/compatibility.md §1: `{marker, next_link, results}`; both null on the last page. */
export function pageJson<T, R>(page: Page<T>, toJson: (item: T) => R, selfUrl: string, limit: number) {
  const next = page.nextMarker;
  let nextLink: string | null = null;
  if (next) {
    const url = new URL(selfUrl);
    url.searchParams.set('limit', String(limit));
    url.searchParams.set('marker', next);
    nextLink = url.toString();
  }
  return { marker: next, next_link: nextLink, results: page.items.map(toJson) };
}

export function auditEntryJson(e: AuditEntry) {
  return {
    id: e.id,
    at: e.at,
    actor: e.actor,
    credential: e.credential,
    action: e.action,
    target: e.target,
    status: e.status,
    address: e.address,
    details: e.details,
  };
}
