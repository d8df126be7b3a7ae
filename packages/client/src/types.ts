/**
 * The shapes the client speaks. Everything the server documents comes from the generated
 * OpenAPI types (src/generated/openapi.ts); only what no schema states is written by hand from
 * docs/compatibility.md: options the client turns into query strings, and what hosted data says in
 * headers rather than bodies (checked against a real server by the client's tests).
 */
import type { components, operations } from './generated/openapi.js';

type Schemas = components['schemas'];

/** The JSON request body of an operation. */
export type RequestBody<O extends keyof operations> = operations[O] extends {
  requestBody?: { content: { 'application/json': infer B } };
}
  ? B
  : never;

/** The JSON body of an operation's 200 answer. */
export type ResponseBody<O extends keyof operations> = operations[O] extends {
  responses: { 200: { content: { 'application/json': infer B } } };
}
  ? B
  : never;

export type User = Schemas['User'];
export type Organization = Schemas['Organization'];
export type ApiKey = Schemas['ApiKey'];
export type Language = Schemas['Language'];
export type Environment = Schemas['Environment'];
export type Algorithm = Schemas['Algorithm'];
export type Build = Schemas['Build'];
export type ErrorBody = Schemas['Error'];
/** `GET /v1/auth/whoami`: who the credential belongs to, what it may do, the account's organizations. */
export type Identity = Schemas['Identity'];
/** One commit of `GET …/source/commits`. */
export type Commit = Schemas['Commit'];
/** `GET …/source/readme`: raw text; render it safely. */
export type Readme = Schemas['Readme'];
/** `GET /v1/admin/status`. */
export type ClusterStatus = Schemas['ClusterStatus'];
/** Spec "SCM configuration": the internal SCM or an external one (the OAuth client secret is never shown). */
export type ScmConfig = Schemas['ScmConfig'];
/** Endpoint 1, `POST /v1/scms/{id}/token/status`. */
export type ScmTokenStatus = Schemas['ScmTokenStatus'];
/** Spec "Source": where an externally hosted algorithm keeps its source. */
export type AlgorithmSource = Schemas['AlgorithmSource'];
export type ScmConfigInput = RequestBody<'scm.create'>;
/** `POST …/scm/sync` and webhook answers: the build queued, or why there is none. */
export type ScmSyncResult = ResponseBody<'scm.sync'>;
export type ScmConnectionStatus = ResponseBody<'scm.connectionStatus'>;

export type UserInput = RequestBody<'user.create'>;
export type UserUpdate = RequestBody<'user.update'>;
export type OrganizationInput = RequestBody<'organization.create'>;
export type OrganizationUpdate = RequestBody<'organization.update'>;
export type Capability = NonNullable<KeyInput['capabilities']>[number];
export type OrganizationType = ResponseBody<'organization.types'>[number];
export type OrganizationMember = ResponseBody<'organization.members.list'>[number];
/** A pending invitation to an organization: the user becomes a member only by accepting it. */
export type Invitation = Schemas['Invitation'];
export type AcceptedInvitation = ResponseBody<'user.invitations.accept'>;
export type KeyInput = RequestBody<'key.create'>;
export type CreatedApiKey = ResponseBody<'key.create'>;
export type Session = ResponseBody<'session.create'>;
export type AlgorithmInput = RequestBody<'algorithm.create'>;
export type AlgorithmUpdate = RequestBody<'algorithm.update'>;
export type CompileResult = ResponseBody<'algorithm.compile'>;

/** Event Flows (docs/compatibility.md §10). */
export type KafkaCluster = Schemas['KafkaCluster'];
export type KafkaClusterInput = RequestBody<'eventCluster.create'>;
export type KafkaTopic = ResponseBody<'eventCluster.topics'>['results'][number];
export type EventFlow = Schemas['EventFlow'];
export type EventAssignmentInput = RequestBody<'eventAssignment.create'>;
export type QueueFlowInput = RequestBody<'eventFlow.create'>;
export type EventFlowUpdate = RequestBody<'eventFlow.update'>;
export type EventDelivery = Schemas['EventDelivery'];
export type EventListener = Schemas['EventListener'];
export type SqsAssumeRole = Schemas['SqsAssumeRole'];
export type AuditEntry = Schemas['AuditEntry'];

/** Insights (docs/compatibility.md §4): the one broker connection they go to. */
export type InsightsConnection = ResponseBody<'insightsConnection.get'>;
export type InsightsConnectionInput = RequestBody<'insightsConnection.create'>;

/** docs/compatibility.md §1: every listing that pages. */
export interface Page<T> {
  marker: string | null;
  next_link: string | null;
  results: T[];
}

export interface PageOptions {
  limit?: number;
  marker?: string;
}

/** The audit log: only one account's actions, only one action or a dotted prefix of them (`key`). */
export interface AuditOptions extends PageOptions {
  actor?: string;
  action?: string;
}

/** Explore: `query` is found in the owner, name, label or summary, ignoring case (at most 100 characters). */
export interface SearchOptions extends PageOptions {
  query?: string;
}

/** One event of the build log stream (`GET …/builds/{id}/logs/stream`). */
export type BuildLogEvent = { type: 'log'; text: string } | { type: 'finished'; build: Build };

// ---- Versions (docs/compatibility.md §3) ----

export type PublishInput = NonNullable<RequestBody<'version.publish'>>;

/** What a publish increments (`revision` is the same as `patch`). */
export type VersionType = Exclude<NonNullable<NonNullable<PublishInput['version_info']>['version_type']>, ''>;

/**
 * A published version (or, for members, a build not yet published): the algorithm object as of
 * that version, with its version_info and build always present.
 */
export type AlgorithmVersion = Algorithm & {
  version_info: NonNullable<Algorithm['version_info']>;
  build: NonNullable<Algorithm['build']>;
};

export interface VersionListOptions extends PageOptions {
  published?: boolean;
  callable?: boolean;
}

// ---- Calls (docs/compatibility.md §2) ----

export type CallMetadata = Schemas['CallMetadata'];
export type ContentType = CallMetadata['content_type'];

/**
 * The envelope of a successful call; a binary `result` is a base64 string. One waited for
 * (`waitForRequest`) carries its request's id.
 */
export type CallResponse = Schemas['CallResult'] & { request_id?: string };

/** `output=void`: the call was accepted and runs on. */
export type AsyncCallResponse = Extract<ResponseBody<'algorithm.call'>, { async: true }>;

export interface CallOptions {
  /** Seconds (default 300, at most 3000). */
  timeout?: number;
  /** Ask for the algorithm's stdout in metadata.stdout (owner and members only). */
  stdout?: boolean;
  /**
   * How to send the input. Default: Uint8Array/ArrayBuffer/Blob → binary, string → text,
   * anything else → JSON. `json` with a string sends the string as JSON text, unparsed.
   */
  inputType?: 'json' | 'text' | 'binary';
  signal?: AbortSignal;
}

/** `GET /v1/algo/requests/{id}`: `running`, then `completed` with the envelope of a sync call. */
export type AsyncRequestStatus = Schemas['AsyncCallStatus'];

/** An input the call API takes: a JSON value, a string, or bytes. */
export type CallInput = unknown;

// ---- Hosted data (docs/compatibility.md §5) ----

export type DataFolder = Schemas['DataFolder'];
export type DataFile = Schemas['DataFile'];
/** Who may read a collection: [] private, ["algo://.my/*"] its owner's algorithms, ["user://*"] anyone. */
export type DataAcl = Schemas['DataAcl'];
/** One page of a directory listing. */
export type DataDirectory = Schemas['DataDirectory'];

export type DataEntry = ({ type: 'folder' } & DataFolder) | ({ type: 'file' } & DataFile);

/** What a HEAD says about a data path (its headers: no schema states them). */
export type DataStat = { type: 'directory' } | { type: 'file'; size?: number; lastModified?: string };

export type DataDeleteResult = Schemas['DataDeleteResult'];
