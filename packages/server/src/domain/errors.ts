/**
 * The error catalog: every error a client can see is defined here once, with its kind, its
 * numeric code and its message template. Domain errors name a kind; only the HTTP edge
 * (api/errors.ts) maps kinds to status codes, for the REST API and for Git alike.
 *
 * `code` is the numeric error code of the original platform's API (docs/compatibility.md §1),
 * which existing clients read, so it travels with the error from where it is raised. Codes
 * never change; several definitions may share one (the platform answers most bad requests
 * with 2015 whatever was wrong).
 *
 * Raise an error by calling its definition: `throw Errors.algorithmNotFound({ owner, name })`.
 * Definitions whose wording differs at every site (validation, forbidden…) take the message.
 */
export type ErrorKind =
  | 'not_found'
  | 'conflict'
  | 'invalid'
  /** Well-formed, but names something this cluster does not have (an environment id). */
  | 'unprocessable'
  | 'forbidden'
  | 'unauthenticated'
  | 'limit'
  | 'too_large'
  | 'unsupported_media_type'
  | 'unavailable'
  /** Another service the request needed (an SCM provider) failed: 502. */
  | 'upstream'
  | 'internal';

/** The numeric codes, one name each. Only the catalog below uses them. */
export const ErrorCodes = {
  algorithmNotFound: 1001,
  algorithmExists: 1002,
  nothingToPublish: 1007,
  buildNotFound: 1010,
  buildLogsNotFound: 1011,
  // Ours: the platform has no endpoints reading an algorithm's source through the API.
  readmeNotFound: 1012,
  sourceRefNotFound: 1013,
  notAuthorized: 2001,
  invalidApiKey: 2002,
  malformedJson: 2013,
  invalidRequest: 2015,
  userNotFound: 3000,
  usernameTaken: 3003,
  emailTaken: 3004,
  organizationNotFound: 3100,
  organizationExists: 3101,
  // Ours: the platform has no invitations (docs/compatibility.md §6 adds members directly).
  invitationNotFound: 3102,
  unknownLanguage: 4001,
  internal: 5001,
  invalidMarker: 5002,
  invalidLimit: 5003,
  validation: 6001,
  // Hosted data: the platform's own codes are not known (docs/compatibility.md §5 names none); clients read
  // the status and X-Error-Message.
  dataNotFound: 7001,
  dataExists: 7002,
  dataQuota: 7003,
  // Event Flows: the platform's own codes are not known (the specification names none).
  eventClusterNotFound: 8001,
  eventFlowNotFound: 8002,
  algorithmNotPublished: 8003,
  eventFlowExists: 8004,
  brokerUnreachable: 8005,
  topicNotFound: 8006,
  // External SCM: the platform's own codes are not known (the spec states no error codes).
  scmConfigNotFound: 9001,
  scmConfigDisabled: 9002,
  scmNotAuthorized: 9003,
  scmOwnerNotAllowed: 9004,
  scmRepositoryExists: 9005,
  scmWebhookRefused: 9006,
  scmWebhookReplayed: 9007,
  scmOAuthFailed: 9008,
  scmSourceElsewhere: 9009,
  scmProviderFailed: 9010,
  scmConfigInUse: 9011,
  scmSourceNotFound: 9012,
  scmSourceTooLarge: 9013,
  insightsNotConfigured: 8007,
  insightsConnectionExists: 8008,
  insightsNotEnabled: 8009,
} as const;

/** What an error may carry besides its message: only what the edge turns into headers. */
export interface ErrorDetails {
  /** Sent as Retry-After: when calling again may succeed. */
  retryAfterSeconds?: number;
}

/** One catalog entry: call it with its parameters to get the error to throw. */
export interface ErrorDef<P> {
  (params: P, details?: ErrorDetails): DomainError;
  readonly kind: ErrorKind;
  readonly code: number;
  readonly id: string;
}

export class DomainError extends Error {
  constructor(
    readonly kind: ErrorKind,
    readonly code: number,
    message: string,
    readonly details?: ErrorDetails,
    /** The catalog entry this error was raised from. */
    readonly id?: string,
  ) {
    super(message);
    this.name = 'DomainError';
  }

  /** Whether this error was raised from `def`. */
  is(def: ErrorDef<never>): boolean {
    return this.id === def.id;
  }
}

function def<P>(kind: ErrorKind, code: number, template: (params: P) => string): ErrorDef<P> {
  const entry = Object.assign((params: P, details?: ErrorDetails) => new DomainError(kind, code, template(params), details, entry.id), {
    kind,
    code,
    id: '',
  });
  return entry;
}

/** A definition whose message is written at the site that raises it. */
const said = (kind: ErrorKind, code: number) => def<string>(kind, code, (message) => message);

const C = ErrorCodes;

export const Errors = {
  // Algorithms, builds, versions (1xxx).
  algorithmNotFound: def('not_found', C.algorithmNotFound, (p: { owner: string; name: string }) => {
    return `No such algorithm: algorithm algo://${p.owner}/${p.name} not found`;
  }),
  /** An algorithm address (`algo://owner/name[/version]`) that names nothing callable; `detail` is appended as written. */
  algorithmAddressNotFound: def('not_found', C.algorithmNotFound, (p: { address: string; detail?: string }) => {
    return `algorithm ${p.address} not found${p.detail ?? ''}`;
  }),
  versionNotPublished: def('not_found', C.algorithmNotFound, (p: { version: string; owner: string; name: string }) => {
    return `version ${p.version} of ${p.owner}/${p.name} is not published`;
  }),
  algorithmExists: def('conflict', C.algorithmExists, (p: { owner: string; name: string }) => {
    return `algorithm ${p.owner}/${p.name} already exists; it was left unchanged`;
  }),
  noBuildToPublish: def('conflict', C.nothingToPublish, (p: { owner: string; name: string }) => {
    return `${p.owner}/${p.name} has no successful build to publish; push a commit and publish once its build has succeeded`;
  }),
  buildAlreadyPublished: def('conflict', C.nothingToPublish, (p: { owner: string; name: string; commit: string; version: string }) => {
    return `the latest successful build of ${p.owner}/${p.name} (commit ${p.commit.slice(0, 12)}) is already published as ${p.version}; push a change to publish a new version`;
  }),
  /** Two publishes of one build raced; the loser retries (version-service). */
  versionPublishRace: def('conflict', C.nothingToPublish, (p: { version: string; buildId: string }) => {
    return `version ${p.version} or build ${p.buildId} is already published`;
  }),
  nothingToBuild: def('invalid', C.invalidRequest, (p: { owner: string; name: string }) => {
    return `${p.owner}/${p.name} has no commits on main to build`;
  }),
  buildNotFound: def('not_found', C.buildNotFound, (p: { buildId: string; owner?: string; name?: string }) => {
    return `build ${p.buildId}${p.owner ? ` of ${p.owner}/${p.name}` : ''} not found`;
  }),
  readmeNotFound: def('not_found', C.readmeNotFound, (p: { owner: string; name: string; commit?: string }) => {
    return p.commit
      ? `${p.owner}/${p.name} has no README at the root of commit ${p.commit.slice(0, 12)} (looked for README.md, README.markdown, README.txt and README, in any letter case)`
      : `${p.owner}/${p.name} has no commits yet, so no README`;
  }),
  sourceRefNotFound: def('not_found', C.sourceRefNotFound, (p: { owner: string; name: string; ref: string }) => {
    return `no commit, branch or tag "${p.ref}" in the repository of ${p.owner}/${p.name}`;
  }),
  buildLogsNotReady: def('not_found', C.buildLogsNotFound, (p: { buildId: string; status: string }) => {
    return `build ${p.buildId} is ${p.status}; its logs are available once it finishes (follow it live at .../logs/stream)`;
  }),

  // Authentication and authorization, requests (2xxx).
  forbidden: said('forbidden', C.notAuthorized),
  authorizationRequired: said('unauthenticated', C.notAuthorized),
  unauthenticated: said('unauthenticated', C.invalidApiKey),
  gitUserNotKeyOwner: def('unauthenticated', C.invalidApiKey, (p: { user: string }) => {
    return `the user name "${p.user}" is not the owner of this API key`;
  }),
  malformedJson: said('invalid', C.malformedJson),
  badRequest: said('invalid', C.invalidRequest),
  keyNotFound: def('not_found', C.invalidRequest, (p: { keyId: string; account: string }) => {
    return `no key with id "${p.keyId}" belongs to "${p.account}"`;
  }),
  environmentSpecNotFound: def('not_found', C.invalidRequest, (p: { id: string }) => `no environment specification "${p.id}"`),
  asyncRequestNotFound: def('not_found', C.invalidRequest, (p: { id: string; keptMinutes: number }) => {
    return `no async request ${p.id} of yours (results are kept for ${p.keptMinutes} minutes)`;
  }),
  tooManyCallsInFlight: def('limit', C.invalidRequest, (p: { account: string; max: number }) => {
    return `too many calls in flight for ${p.account}: at most ${p.max} at once`;
  }),
  /** A credential or an address past its request-rate limit (api/rate-limits.ts). */
  tooManyRequests: def('limit', C.invalidRequest, (p: { who: string; limit: number; windowSeconds: number }) => {
    return `too many requests from ${p.who}: at most ${p.limit} per ${p.windowSeconds} s; retry after the Retry-After seconds`;
  }),
  /** Sign-ins refused for a while after repeated wrong passwords (domain/accounts/sign-in-throttle.ts). */
  signInThrottled: def('limit', C.invalidRequest, (p: { seconds: number }) => {
    return `too many failed sign-ins; try again in ${p.seconds} s`;
  }),
  /** A call input over the cap; `bytes` when its size is known. */
  inputTooLarge: def('too_large', C.invalidRequest, (p: { limit: number; bytes?: number }) => {
    return `input${p.bytes === undefined ? '' : ` of ${p.bytes} bytes`} exceeds the limit of 10 MiB (${p.limit} bytes)`;
  }),
  unsupportedInputType: def('unsupported_media_type', C.invalidRequest, (p: { type: string }) => {
    return `unsupported Content-Type "${p.type}": use application/json, text/plain or application/octet-stream`;
  }),
  uploadInterrupted: def('invalid', C.invalidRequest, (p: { reason?: string }) => {
    return `the upload was interrupted before its end${p.reason ? ` (${p.reason})` : ''}`;
  }),
  /** A limit of the node (runners, input budget) that frees up by itself: refused with Retry-After. */
  busy: said('limit', C.invalidRequest),
  /** The node cannot serve this now (no room, environment gone); 503. */
  unavailable: said('unavailable', C.internal),
  internal: said('internal', C.internal),

  // Accounts and organizations (3xxx).
  userNotFound: def('not_found', C.userNotFound, (p: { name: string }) => `user "${p.name}" not found`),
  accountNotFound: def('not_found', C.userNotFound, (p: { name: string }) => `account "${p.name}" not found`),
  ownerNotFound: def('not_found', C.userNotFound, (p: { name: string }) => `no user or organization named "${p.name}"`),
  notAMember: def('not_found', C.userNotFound, (p: { user: string; org: string }) => {
    return `user "${p.user}" is not a member of organization "${p.org}"`;
  }),
  usernameTaken: def('conflict', C.usernameTaken, (p: { name: string }) => `username "${p.name}" is already taken`),
  /** The store's check: a name is taken in any letter case, by a user or an organization. */
  nameTaken: def('conflict', C.usernameTaken, (p: { name: string }) => `the name "${p.name}" is already taken`),
  emailTaken: def('conflict', C.emailTaken, (p: { email: string }) => `email "${p.email}" is already in use`),
  organizationNotFound: def('not_found', C.organizationNotFound, (p: { name: string }) => `organization "${p.name}" not found`),
  organizationExists: def('conflict', C.organizationExists, (p: { name: string }) => {
    return `the name "${p.name}" is already taken by a user or organization`;
  }),
  invitationNotFound: def('not_found', C.invitationNotFound, (p: { org: string; user: string }) => {
    return `organization "${p.org}" has no pending invitation for "${p.user}"`;
  }),
  noInvitationTo: def('not_found', C.invitationNotFound, (p: { user: string; org: string }) => {
    return `${p.user} has no pending invitation to organization "${p.org}"`;
  }),

  // Catalog (4xxx).
  unknownLanguage: def('not_found', C.unknownLanguage, (p: { language: string }) => {
    return `unknown language "${p.language}"; see GET /v1/algorithm-environments/edge/languages`;
  }),
  // A body naming what this cluster does not have: 422, not 400, since no schema can list a
  // cluster's environments (their ids differ between clusters), so the request is well formed.
  unknownLanguageSetting: def('unprocessable', C.unknownLanguage, (p: { language: string }) => `unknown language "${p.language}"`),
  environmentNotFound: said('unprocessable', C.unknownLanguage),
  /** What a request asks conflicts with the present state of the resource. */
  stateConflict: said('conflict', C.validation),

  // Paging, validation (5xxx, 6xxx).
  invalidMarker: def('invalid', C.invalidMarker, (p: { marker?: string }) => {
    return `invalid marker${p.marker === undefined ? '' : ` "${p.marker}"`}: pass the marker of a previous page unchanged`;
  }),
  invalidLimit: def('invalid', C.invalidLimit, (p: { limit: string; max: number }) => {
    return `invalid limit "${p.limit}": use an integer from 1 to ${p.max}`;
  }),
  validation: said('invalid', C.validation),

  // Hosted data (7xxx).
  dataNotFound: said('not_found', C.dataNotFound),
  dataExists: said('conflict', C.dataExists),
  dataQuotaExceeded: def('too_large', C.dataQuota, (p: { quota: number; used: number; left: number; size?: number }) => {
    return `data quota exceeded: the account may store ${p.quota} bytes (ALGOHOST_DATA_QUOTA) and uses ${p.used}; this upload${
      p.size === undefined ? '' : ` of ${p.size} bytes`
    } needs more than the ${p.left} bytes left`;
  }),

  // Event Flows (8xxx).
  eventClusterNotFound: def('not_found', C.eventClusterNotFound, (p: { cluster: string }) => {
    return `no Kafka cluster connection "${p.cluster}"; see GET /v1/admin/event-clusters`;
  }),
  eventClusterExists: def(
    'conflict',
    C.eventFlowExists,
    (p: { name: string }) => `a Kafka cluster connection named "${p.name}" already exists`,
  ),
  eventFlowNotFound: def('not_found', C.eventFlowNotFound, (p: { flow: string; owner?: string; name?: string }) => {
    return `no event flow ${p.flow}${p.owner ? ` on ${p.owner}/${p.name}` : ''}`;
  }),
  /** Errors row 4 of the specification: only published algorithms join a topic. */
  algorithmNotPublished: def('conflict', C.algorithmNotPublished, (p: { owner: string; name: string }) => {
    return `${p.owner}/${p.name} has no published version: publish a version first (POST /v1/algorithms/${p.owner}/${p.name}/versions), then add it to the topic`;
  }),
  eventFlowExists: def('conflict', C.eventFlowExists, (p: { what: string }) => `${p.what} already exists`),
  /** `cluster` as describeCluster words it (name, id, bootstrap servers); `reason` per broker address. */
  brokerUnreachable: def('unavailable', C.brokerUnreachable, (p: { cluster: string; reason: string }) => {
    return `the Kafka cluster ${p.cluster} could not be used: ${p.reason}`;
  }),
  topicNotFound: def('not_found', C.topicNotFound, (p: { topic: string; cluster: string }) => {
    return `the Kafka cluster "${p.cluster}" has no topic "${p.topic}": create it there first (algohost does not create a tenant's topics, only "${p.topic}.dlq"); GET /v1/admin/event-clusters/${p.cluster}/topics lists what it has`;
  }),

  // External SCM (9xxx).
  scmConfigNotFound: def('not_found', C.scmConfigNotFound, (p: { id: string }) => {
    return `no SCM configuration "${p.id}"; GET /v1/scms lists them`;
  }),
  scmConfigDisabled: def('conflict', C.scmConfigDisabled, (p: { id: string; name: string }) => {
    return `SCM configuration "${p.id}" (${p.name}) is disabled: it cannot back new algorithms; a cluster admin may enable it`;
  }),
  /** The account never authorized the configuration, revoked it, or the provider no longer accepts its token. */
  scmNotAuthorized: def('forbidden', C.scmNotAuthorized, (p: { id: string; name: string; why: string }) => {
    return `SCM configuration "${p.id}" (${p.name}) is not authorized for this account: ${p.why}. Authorize it in the web UI (Account, Settings tab, Source Code Management), making sure it is this configuration, then check POST /v1/scms/${p.id}/token/status`;
  }),
  /** A provider answered 401 to a token (adapters raise it; services turn it into scmNotAuthorized or `unauthorized`). */
  scmTokenRejected: def('forbidden', C.scmNotAuthorized, (p: { provider: string }) => {
    return `${p.provider} no longer accepts the stored token`;
  }),
  scmOwnerNotAllowed: def('forbidden', C.scmOwnerNotAllowed, (p: { owner: string; username: string; organizations: string[] }) => {
    const orgs = p.organizations.length ? `, or one of the organizations where you are MEMBER (${p.organizations.join(', ')})` : '';
    return `source.repository_owner "${p.owner}" must be your account at the provider ("${p.username}")${orgs}`;
  }),
  scmRepositoryExists: def('conflict', C.scmRepositoryExists, (p: { owner: string; name: string; provider: string }) => {
    return `the repository ${p.owner}/${p.name} already exists at ${p.provider}; choose another source.repository_name (nothing was created)`;
  }),
  scmWebhookRefused: said('unauthenticated', C.scmWebhookRefused),
  scmWebhookInvalid: said('invalid', C.scmWebhookRefused),
  scmWebhookReplayed: def('conflict', C.scmWebhookReplayed, (p: { deliveryId: string }) => {
    return `webhook delivery ${p.deliveryId} was received before; a replayed delivery is refused`;
  }),
  /** A fetch from the provider over the push, repository or account size limit: nothing was kept. */
  scmSourceTooLarge: def('conflict', C.scmSourceTooLarge, (p: { reason: string; branch: string; head: string | undefined }) => {
    const stays = p.head ? `main here stays at ${p.head.slice(0, 12)}` : 'main here stays as it was';
    return `fetching ${p.branch} from the provider was refused: ${p.reason}. Nothing was kept and nothing was built; ${stays}. Make the repository smaller at the provider (or ask an admin for larger limits), then push or sync again`;
  }),
  scmOAuthFailed: said('invalid', C.scmOAuthFailed),
  /** The callback's state names no flow in progress (never started, used already, or expired and swept). */
  scmOAuthStateUnknown: def('not_found', C.scmOAuthFailed, (_p: Record<string, never>) => {
    return 'unknown or already used authorization state; start the authorization again from the web UI (Account, Settings tab, Source Code Management)';
  }),
  /** The callback came to a browser without the cookie of the one that started the flow. */
  scmOAuthOtherBrowser: def('forbidden', C.scmOAuthFailed, (_p: Record<string, never>) => {
    return 'this authorization was started in another browser (or its cookie is gone); start it again from the web UI (Account, Settings tab, Source Code Management)';
  }),
  scmNotExternal: def('conflict', C.scmSourceNotFound, (p: { owner: string; name: string }) => {
    return `${p.owner}/${p.name} keeps its source in the internal SCM: push to its Git URL instead`;
  }),
  scmSourceElsewhere: def('forbidden', C.scmSourceElsewhere, (p: { owner: string; name: string; url: string }) => {
    return `the source of ${p.owner}/${p.name} lives at ${p.url}: push there (algohost builds what the provider's webhook announces)`;
  }),
  scmProviderFailed: said('upstream', C.scmProviderFailed),
  scmSourceNotFound: def(
    'not_found',
    C.scmSourceNotFound,
    (p: { id: string }) => `no algorithm ${p.id} whose source lives at an external SCM`,
  ),
  scmConfigInUse: def('conflict', C.scmConfigInUse, (p: { id: string; count: number }) => {
    return `SCM configuration "${p.id}" backs ${p.count} algorithm(s); disable it instead, or delete those algorithms first`;
  }),
  // Insights (8007-8009).
  insightsNotConfigured: def('unavailable', C.insightsNotConfigured, (_p: Record<string, never>) => {
    return 'no broker connection is configured for Insights: a cluster admin sets one (POST /v1/admin/insights-connection)';
  }),
  /** Reading or removing the connection when there is none: the resource is missing (same code as for a report). */
  insightsConnectionMissing: def('not_found', C.insightsNotConfigured, (_p: Record<string, never>) => {
    return 'no broker connection is configured for Insights: a cluster admin sets one (POST /v1/admin/insights-connection)';
  }),
  /** Spec Limits 1: Insights supports only one connection to an external broker. */
  insightsConnectionExists: def('conflict', C.insightsConnectionExists, (p: { cluster: string; topic: string }) => {
    return `Insights already sends to ${p.cluster}/${p.topic}, and supports only one broker connection: delete it first (DELETE /v1/admin/insights-connection)`;
  }),
  insightsReportTooLarge: def('too_large', C.validation, (p: { bytes: number; limit: number }) => {
    return `an Insights report of ${p.bytes} bytes exceeds the limit of 25 KB (${p.limit} bytes): send fewer or smaller metrics`;
  }),
  insightsNotEnabled: def('forbidden', C.insightsNotEnabled, (_p: Record<string, never>) => {
    return 'no running call of a version with insights_enabled holds this token: reports come from inside such a call (header X-Algohost-Insights-Token, which the in-sandbox client sends)';
  }),
} satisfies Record<string, ErrorDef<never>>;

for (const [id, entry] of Object.entries(Errors)) (entry as { id: string }).id = id;

/** Shorthands for the definitions raised with a message written at the site. */
export const invalid = (message: string) => Errors.validation(message);
export const forbidden = (message: string) => Errors.forbidden(message);
export const unauthenticated = (message: string) => Errors.unauthenticated(message);
