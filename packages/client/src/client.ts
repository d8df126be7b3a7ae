/**
 * AlgohostClient: the whole API in one object, grouped by resource.
 *
 *   const client = new AlgohostClient({ server: 'http://127.0.0.1:8080', apiKey: 'sim…' });
 *   await client.algorithms.create('alice', { name: 'Hello' });
 *   for await (const build of client.builds.all('alice', 'Hello')) console.log(build.status);
 *   const { result } = await client.call('alice/Hello', 'world');
 *
 * Every failure throws AlgohostError {status, code, message}; an algorithm that raised throws
 * AlgorithmError. Paged listings have a `list` (one page) and an `all` (every item, following
 * the marker).
 */
import { AlgohostError, AlgorithmError } from './errors.js';
import { readServerSentEvents } from './sse.js';
import { dataApiPath, joinDataUri, parseAlgorithmRef, splitDataUri } from './refs.js';
import { type ClientOptions, type ProgressListener, type Query, Transport, paginate, seg } from './transport.js';
import type {
  Algorithm,
  AlgorithmInput,
  AlgorithmUpdate,
  AlgorithmVersion,
  ApiKey,
  AsyncCallResponse,
  AsyncRequestStatus,
  Build,
  BuildLogEvent,
  CallInput,
  CallOptions,
  CallResponse,
  ClusterStatus,
  Commit,
  CompileResult,
  CreatedApiKey,
  DataAcl,
  DataDeleteResult,
  DataDirectory,
  DataEntry,
  DataStat,
  Environment,
  Identity,
  EventAssignmentInput,
  EventDelivery,
  EventFlow,
  EventFlowUpdate,
  EventListener,
  SqsAssumeRole,
  InsightsConnection,
  InsightsConnectionInput,
  KafkaCluster,
  KafkaClusterInput,
  KafkaTopic,
  QueueFlowInput,
  KeyInput,
  Language,
  Organization,
  OrganizationInput,
  OrganizationUpdate,
  OrganizationMember,
  OrganizationType,
  Invitation,
  AcceptedInvitation,
  Page,
  PageOptions,
  AuditEntry,
  AuditOptions,
  PublishInput,
  Readme,
  ScmConfig,
  ScmConfigInput,
  ScmConnectionStatus,
  ScmSyncResult,
  ScmTokenStatus,
  SearchOptions,
  Session,
  User,
  UserInput,
  UserUpdate,
  VersionListOptions,
} from './types.js';

const pageQuery = (opts: PageOptions = {}): Query => ({ limit: opts.limit, marker: opts.marker });
const algoPath = (owner: string, name: string) => `/v1/algorithms/${seg(owner)}/${seg(name)}`;

export class AlgohostClient {
  readonly transport: Transport;
  readonly algorithms: AlgorithmsApi;
  readonly versions: VersionsApi;
  readonly builds: BuildsApi;
  readonly environments: EnvironmentsApi;
  readonly users: UsersApi;
  readonly organizations: OrganizationsApi;
  readonly keys: KeysApi;
  readonly data: DataApi;
  readonly events: EventsApi;
  readonly scms: ScmsApi;
  readonly insights: InsightsApi;

  constructor(options: ClientOptions) {
    this.transport = new Transport(options);
    this.algorithms = new AlgorithmsApi(this.transport);
    this.versions = new VersionsApi(this.transport);
    this.builds = new BuildsApi(this.transport);
    this.environments = new EnvironmentsApi(this.transport);
    this.users = new UsersApi(this.transport);
    this.organizations = new OrganizationsApi(this.transport);
    this.keys = new KeysApi(this.transport);
    this.data = new DataApi(this.transport);
    this.events = new EventsApi(this.transport);
    this.scms = new ScmsApi(this.transport);
    this.insights = new InsightsApi(this.transport);
  }

  get server(): string {
    return this.transport.server;
  }

  /** Who this client's credential belongs to, whether it acts as an admin, what it may do, its organizations. */
  whoami(): Promise<Identity> {
    return this.transport.json('GET', '/v1/auth/whoami');
  }

  /** Explore: one page of public algorithms of every owner, newest first, matching `query`. */
  searchAlgorithms(opts: SearchOptions = {}): Promise<Page<Algorithm>> {
    return this.transport.json('GET', '/v1/algorithms', { query: { query: opts.query || undefined, ...pageQuery(opts) } });
  }

  /** Every public algorithm matching `query`, following the marker page after page. */
  searchAllAlgorithms(opts: Omit<SearchOptions, 'marker'> = {}): AsyncGenerator<Algorithm> {
    return paginate((marker) => this.searchAlgorithms({ ...opts, marker }));
  }

  /** The newest commits of the default branch (`limit` 1–100, default 20), for who may fetch the source. */
  algorithmCommits(owner: string, name: string, opts: { limit?: number } = {}): Promise<{ results: Commit[] }> {
    return this.transport.json('GET', `${algoPath(owner, name)}/source/commits`, { query: { limit: opts.limit } });
  }

  /** The README at the root of `ref` (a commit, branch or tag; default: the default branch), raw. */
  algorithmReadme(owner: string, name: string, opts: { ref?: string } = {}): Promise<Readme> {
    return this.transport.json('GET', `${algoPath(owner, name)}/source/readme`, { query: { ref: opts.ref || undefined } });
  }

  /** Cluster health (admins): version, database, blob store, builds, warm runners, calls per minute, uptime. */
  adminStatus(): Promise<ClusterStatus> {
    return this.transport.json('GET', '/v1/admin/status');
  }

  /** One page of the audit log (admins), newest first: who did what to what, with what outcome. */
  adminAudit(opts: AuditOptions = {}): Promise<Page<AuditEntry>> {
    return this.transport.json('GET', '/v1/admin/audit', {
      query: { ...pageQuery(opts), actor: opts.actor || undefined, action: opts.action || undefined },
    });
  }

  /**
   * Calls an algorithm and waits for its result (docs/compatibility.md §2): `algorithm` is `owner/name`,
   * `owner/name/version` (1.2.3, 1.2.*, latest, latestPrivate or a commit SHA). Throws
   * AlgorithmError when the algorithm raised.
   */
  async call(algorithm: string, input: CallInput, options: CallOptions = {}): Promise<CallResponse> {
    const res = await this.sendCall(algorithm, input, options, undefined);
    const body = (await res.json()) as CallResponse & {
      error?: { message?: string; stacktrace?: string; stack_trace?: string; error_type?: string };
    };
    if (body.error) {
      const e = body.error;
      throw new AlgorithmError(
        e.message ?? 'the algorithm failed',
        e.error_type ?? 'AlgorithmError',
        e.stacktrace ?? e.stack_trace,
        body.metadata,
      );
    }
    return body;
  }

  /** Calls with `output=raw`: the bare result bytes, no envelope. */
  async callRaw(algorithm: string, input: CallInput, options: CallOptions = {}): Promise<{ body: Uint8Array; contentType: string }> {
    const res = await this.sendCall(algorithm, input, options, 'raw');
    return { body: await this.transport.bytes(res), contentType: res.headers.get('content-type') ?? 'application/octet-stream' };
  }

  /** Starts a call without waiting (`output=void`); poll it with `request(request_id)`. */
  async callAsync(algorithm: string, input: CallInput, options: CallOptions = {}): Promise<AsyncCallResponse> {
    const res = await this.sendCall(algorithm, input, options, 'void');
    return (await res.json()) as AsyncCallResponse;
  }

  /**
   * The state of an asynchronous call: `GET /v1/algo/requests/{id}`. A completed request that
   * failed is returned as is (its `error` set), not thrown.
   */
  async request(requestId: string): Promise<AsyncRequestStatus> {
    const res = await this.transport.send('GET', `/v1/algo/requests/${seg(requestId)}`);
    return (await res.json()) as AsyncRequestStatus;
  }

  /** Polls an asynchronous call until it completes; returns its envelope or throws AlgorithmError. */
  async waitForRequest(requestId: string, opts: { intervalMs?: number; signal?: AbortSignal } = {}): Promise<CallResponse> {
    for (;;) {
      const state = await this.request(requestId);
      if (state.status !== 'running') {
        if (state.error) {
          const e = state.error;
          throw new AlgorithmError(e.message, e.error_type ?? 'AlgorithmError', e.stacktrace ?? e.stack_trace, state.metadata);
        }
        return { result: state.result, metadata: state.metadata ?? { content_type: 'void', duration: 0 }, request_id: requestId };
      }
      if (opts.signal?.aborted) throw new AlgohostError(0, 'ABORTED', `stopped waiting for ${requestId}`);
      await new Promise((r) => setTimeout(r, opts.intervalMs ?? 500));
    }
  }

  private async sendCall(algorithm: string, input: CallInput, options: CallOptions, output: 'raw' | 'void' | undefined): Promise<Response> {
    const ref = parseAlgorithmRef(algorithm);
    const path = `/v1/algo/${seg(ref.owner)}/${seg(ref.name)}${ref.version ? `/${seg(ref.version)}` : ''}`;
    const { body, contentType } = encodeCallInput(input, options.inputType);
    return this.transport.send('POST', path, {
      query: { timeout: options.timeout, stdout: options.stdout ? 'true' : undefined, output },
      body,
      contentType,
      signal: options.signal,
    });
  }
}

/** docs/compatibility.md §2: the Content-Type decides how the input is read. */
export function encodeCallInput(input: CallInput, type?: 'json' | 'text' | 'binary'): { body: BodyInit; contentType: string } {
  const isBytes = input instanceof Uint8Array || input instanceof ArrayBuffer || (typeof Blob !== 'undefined' && input instanceof Blob);
  const kind = type ?? (isBytes ? 'binary' : typeof input === 'string' ? 'text' : 'json');
  if (kind === 'binary') {
    if (!isBytes) throw new TypeError('binary input must be a Uint8Array, ArrayBuffer or Blob');
    return { body: input as BodyInit, contentType: 'application/octet-stream' };
  }
  if (kind === 'text') {
    if (typeof input !== 'string') throw new TypeError('text input must be a string');
    return { body: input, contentType: 'text/plain' };
  }
  return { body: typeof input === 'string' ? input : JSON.stringify(input ?? null), contentType: 'application/json' };
}

export class AlgorithmsApi {
  constructor(private readonly t: Transport) {}

  create(owner: string, input: AlgorithmInput): Promise<Algorithm> {
    return this.t.json('POST', `/v1/algorithms/${seg(owner)}`, { json: input });
  }
  get(owner: string, name: string): Promise<Algorithm> {
    return this.t.json('GET', algoPath(owner, name));
  }
  list(owner: string, opts?: PageOptions): Promise<Page<Algorithm>> {
    return this.t.json('GET', `/v1/algorithms/${seg(owner)}`, { query: pageQuery(opts) });
  }
  all(owner: string, opts: { limit?: number } = {}): AsyncGenerator<Algorithm> {
    return paginate((marker) => this.list(owner, { ...opts, marker }));
  }
  /** PUT: replaces the given parts (the Python client sends every part, `{}` when unset). */
  update(owner: string, name: string, input: AlgorithmUpdate): Promise<Algorithm> {
    return this.t.json('PUT', algoPath(owner, name), { json: input });
  }
  /** PATCH: changes only the given fields. */
  patch(owner: string, name: string, input: AlgorithmUpdate): Promise<Algorithm> {
    return this.t.json('PATCH', algoPath(owner, name), { json: input });
  }
  async delete(owner: string, name: string): Promise<void> {
    await this.t.send('DELETE', algoPath(owner, name));
  }
  /** Builds the repository head again and waits for the outcome. */
  compile(owner: string, name: string): Promise<CompileResult> {
    return this.t.json('POST', `${algoPath(owner, name)}/compile`, { json: {} });
  }
}

/**
 * Insights (docs/compatibility.md §4): where the metrics algorithms report go, one topic of a
 * connected Kafka cluster (cluster admins). Reports come from inside algorithms, not from here.
 */
export class InsightsApi {
  constructor(private readonly t: Transport) {}

  /** The connection; an ApiError with status 503 (code 8007) when none is configured. */
  connection(): Promise<InsightsConnection> {
    return this.t.json('GET', '/v1/admin/insights-connection');
  }
  /** Only one connection: a second is refused with 409 (code 8008) until the first is removed. */
  connect(input: InsightsConnectionInput): Promise<InsightsConnection> {
    return this.t.json('POST', '/v1/admin/insights-connection', { json: input });
  }
  async disconnect(): Promise<void> {
    await this.t.send('DELETE', '/v1/admin/insights-connection');
  }
}

/**
 * Event Flows (docs/compatibility.md §10): Kafka cluster connections, topics and assignments
 * (cluster admins), an algorithm's flows and deliveries (its owner and members), event listeners.
 */
export class EventsApi {
  constructor(private readonly t: Transport) {}

  connectCluster(input: KafkaClusterInput): Promise<KafkaCluster> {
    return this.t.json('POST', '/v1/admin/event-clusters', { json: input });
  }
  async clusters(): Promise<KafkaCluster[]> {
    return (await this.t.json<{ results: KafkaCluster[] }>('GET', '/v1/admin/event-clusters')).results;
  }
  async disconnectCluster(cluster: string): Promise<void> {
    await this.t.send('DELETE', `/v1/admin/event-clusters/${seg(cluster)}`);
  }
  /** The topics of a connected cluster, asked of the cluster now. */
  async topics(cluster: string): Promise<KafkaTopic[]> {
    return (await this.t.json<{ results: KafkaTopic[] }>('GET', `/v1/admin/event-clusters/${seg(cluster)}/topics`)).results;
  }
  /** Assigns a published algorithm (`owner/name`) to a topic; unpublished ones get 409 (code 8003). */
  assign(cluster: string, input: EventAssignmentInput): Promise<EventFlow> {
    return this.t.json('POST', `/v1/admin/event-clusters/${seg(cluster)}/assignments`, { json: input });
  }
  async assignments(cluster: string): Promise<EventFlow[]> {
    return (await this.t.json<{ results: EventFlow[] }>('GET', `/v1/admin/event-clusters/${seg(cluster)}/assignments`)).results;
  }
  async unassign(cluster: string, flowId: string): Promise<void> {
    await this.t.send('DELETE', `/v1/admin/event-clusters/${seg(cluster)}/assignments/${seg(flowId)}`);
  }
  async flows(owner: string, name: string): Promise<EventFlow[]> {
    return (await this.t.json<{ results: EventFlow[] }>('GET', `${algoPath(owner, name)}/event-flows`)).results;
  }
  /** Subscribes an algorithm to an SQS queue (disabled until enabled). */
  createQueueFlow(owner: string, name: string, input: QueueFlowInput): Promise<EventFlow> {
    return this.t.json('POST', `${algoPath(owner, name)}/event-flows`, { json: input });
  }
  /** Enables or disables a flow, picks its version, sets its timeout. */
  updateFlow(owner: string, name: string, flowId: string, changes: EventFlowUpdate): Promise<EventFlow> {
    return this.t.json('PATCH', `${algoPath(owner, name)}/event-flows/${seg(flowId)}`, { json: changes });
  }
  async deleteFlow(owner: string, name: string, flowId: string): Promise<void> {
    await this.t.send('DELETE', `${algoPath(owner, name)}/event-flows/${seg(flowId)}`);
  }
  /** Deliveries, newest first; `flow` narrows to one flow. */
  deliveries(owner: string, name: string, opts: PageOptions & { flow?: string } = {}): Promise<Page<EventDelivery>> {
    return this.t.json('GET', `${algoPath(owner, name)}/event-deliveries`, { query: { ...pageQuery(opts), flow: opts.flow } });
  }
  /** Spec endpoint 7: the subscriber flows of an account's algorithms (`account` is its id or name). */
  listeners(account: string): Promise<EventListener[]> {
    return this.t.json('GET', `/v1/users/${seg(account)}/event-listeners`);
  }
  /**
   * What an account's SQS flows send when they assume an IAM role: the ExternalId the role's
   * trust policy must require, the SourceIdentity, and a trust policy to paste.
   */
  sqsAssumeRole(account: string): Promise<SqsAssumeRole> {
    return this.t.json('GET', `/v1/users/${seg(account)}/sqs-assume-role`);
  }
}

/** Published versions (docs/compatibility.md §3). */
export class VersionsApi {
  constructor(private readonly t: Transport) {}

  /** Publishes the latest successful build; a missing version_type means minor. */
  publish(owner: string, name: string, input: PublishInput = {}): Promise<AlgorithmVersion> {
    return this.t.json('POST', `${algoPath(owner, name)}/versions`, { json: input });
  }
  list(owner: string, name: string, opts: VersionListOptions = {}): Promise<Page<AlgorithmVersion>> {
    return this.t.json('GET', `${algoPath(owner, name)}/versions`, {
      query: { ...pageQuery(opts), published: opts.published, callable: opts.callable },
    });
  }
  all(owner: string, name: string, opts: Omit<VersionListOptions, 'marker'> = {}): AsyncGenerator<AlgorithmVersion> {
    return paginate((marker) => this.list(owner, name, { ...opts, marker }));
  }
  get(owner: string, name: string, gitHash: string): Promise<AlgorithmVersion> {
    return this.t.json('GET', `${algoPath(owner, name)}/versions/${seg(gitHash)}`);
  }
}

export class BuildsApi {
  constructor(private readonly t: Transport) {}

  /** Builds, newest first. */
  list(owner: string, name: string, opts?: PageOptions): Promise<Page<Build>> {
    return this.t.json('GET', `${algoPath(owner, name)}/builds`, { query: pageQuery(opts) });
  }
  all(owner: string, name: string, opts: { limit?: number } = {}): AsyncGenerator<Build> {
    return paginate((marker) => this.list(owner, name, { ...opts, marker }));
  }
  get(owner: string, name: string, buildId: string): Promise<Build> {
    return this.t.json('GET', `${algoPath(owner, name)}/builds/${seg(buildId)}`);
  }
  /** The log of a finished build (404, code 1011, while it runs). */
  async logs(owner: string, name: string, buildId: string): Promise<string> {
    return (await this.t.json<{ logs: string }>('GET', `${algoPath(owner, name)}/builds/${seg(buildId)}/logs`)).logs;
  }
  /**
   * Follows a build: `log` events with output as it comes (from the start of the build), then
   * one `finished` event with the final build. Ends after `finished` or when the server closes.
   */
  async *follow(owner: string, name: string, buildId: string, opts: { signal?: AbortSignal } = {}): AsyncGenerator<BuildLogEvent> {
    const res = await this.t.send('GET', `${algoPath(owner, name)}/builds/${seg(buildId)}/logs/stream`, {
      headers: { accept: 'text/event-stream' },
      signal: opts.signal,
    });
    if (!res.body) return;
    for await (const ev of readServerSentEvents(res.body)) {
      if (ev.event === 'log') {
        yield { type: 'log', text: (JSON.parse(ev.data) as { text: string }).text };
      } else if (ev.event === 'finished') {
        yield { type: 'finished', build: JSON.parse(ev.data) as Build };
        return;
      }
    }
  }
}

export class EnvironmentsApi {
  constructor(private readonly t: Transport) {}

  languages(): Promise<Language[]> {
    return this.t.json('GET', '/v1/algorithm-environments/edge/languages');
  }
  list(language: string): Promise<Environment[]> {
    return this.t.json('GET', `/v1/algorithm-environments/edge/languages/${seg(language)}/environments`);
  }
  /** The template files of an environment specification: a gzipped tar (no authentication). */
  async template(environmentSpecificationId: string, opts: { onProgress?: ProgressListener } = {}): Promise<Uint8Array> {
    const res = await this.t.send(
      'GET',
      `/v1/algorithm-environments/edge/environment-specifications/${seg(environmentSpecificationId)}/template`,
      { auth: false, headers: { accept: 'application/gzip, application/octet-stream' } },
    );
    return this.t.bytes(res, opts.onProgress);
  }
}

export class UsersApi {
  constructor(private readonly t: Transport) {}

  create(input: UserInput): Promise<User> {
    return this.t.json('POST', '/v1/users', { json: input });
  }
  get(username: string): Promise<User> {
    return this.t.json('GET', `/v1/users/${seg(username)}`);
  }
  list(opts?: PageOptions): Promise<Page<User>> {
    return this.t.json('GET', '/v1/users', { query: pageQuery(opts) });
  }
  all(opts: { limit?: number } = {}): AsyncGenerator<User> {
    return paginate((marker) => this.list({ ...opts, marker }));
  }
  update(username: string, input: UserUpdate): Promise<User> {
    return this.t.json('PUT', `/v1/users/${seg(username)}`, { json: input });
  }
  async delete(username: string): Promise<void> {
    await this.t.send('DELETE', `/v1/users/${seg(username)}`);
  }
  /** Invitations to organizations waiting for the user (the user themself, or an admin). */
  invitations(username: string): Promise<Invitation[]> {
    return this.t.json('GET', `/v1/users/${seg(username)}/invitations`);
  }
  acceptInvitation(username: string, org: string): Promise<AcceptedInvitation> {
    return this.t.json('POST', `/v1/users/${seg(username)}/invitations/${seg(org)}`);
  }
  async declineInvitation(username: string, org: string): Promise<void> {
    await this.t.send('DELETE', `/v1/users/${seg(username)}/invitations/${seg(org)}`);
  }
}

export class OrganizationsApi {
  constructor(private readonly t: Transport) {}

  types(): Promise<OrganizationType[]> {
    return this.t.json('GET', '/v1/organization/types');
  }
  create(input: OrganizationInput): Promise<Organization> {
    return this.t.json('POST', '/v1/organizations', { json: input });
  }
  get(org: string): Promise<Organization> {
    return this.t.json('GET', `/v1/organizations/${seg(org)}`);
  }
  list(opts?: PageOptions): Promise<Page<Organization>> {
    return this.t.json('GET', '/v1/organizations', { query: pageQuery(opts) });
  }
  all(opts: { limit?: number } = {}): AsyncGenerator<Organization> {
    return paginate((marker) => this.list({ ...opts, marker }));
  }
  async update(org: string, input: OrganizationUpdate): Promise<void> {
    await this.t.send('PUT', `/v1/organizations/${seg(org)}`, { json: input });
  }
  async delete(org: string): Promise<void> {
    await this.t.send('DELETE', `/v1/organizations/${seg(org)}`);
  }
  members(org: string): Promise<OrganizationMember[]> {
    return this.t.json('GET', `/v1/organizations/${seg(org)}/members`);
  }
  /**
   * An owner invites a user who is not a member yet (the pending invitation is returned; the user
   * accepts with `users.acceptInvitation`); a member's role changes, and a cluster admin adds,
   * at once (undefined).
   */
  async addMember(org: string, username: string, role?: 'owner' | 'member'): Promise<Invitation | undefined> {
    const res = await this.t.send('PUT', `/v1/organizations/${seg(org)}/members/${seg(username)}`, role ? { json: { role } } : {});
    return res.status === 202 ? ((await res.json()) as Invitation) : undefined;
  }
  invitations(org: string): Promise<Invitation[]> {
    return this.t.json('GET', `/v1/organizations/${seg(org)}/invitations`);
  }
  async withdrawInvitation(org: string, username: string): Promise<void> {
    await this.t.send('DELETE', `/v1/organizations/${seg(org)}/invitations/${seg(username)}`);
  }
  async removeMember(org: string, username: string): Promise<void> {
    await this.t.send('DELETE', `/v1/organizations/${seg(org)}/members/${seg(username)}`);
  }
}

export class KeysApi {
  constructor(private readonly t: Transport) {}

  /** Creates a key; the answer holds the secret (`key`), shown only this once. */
  create(account: string, input: KeyInput = {}): Promise<CreatedApiKey> {
    return this.t.json('POST', `/v1/users/${seg(account)}/keys`, { json: input });
  }
  async list(account: string): Promise<ApiKey[]> {
    return (await this.t.json<{ results: ApiKey[] }>('GET', `/v1/users/${seg(account)}/keys`)).results;
  }
  async revoke(account: string, keyId: string): Promise<void> {
    await this.t.send('DELETE', `/v1/users/${seg(account)}/keys/${seg(keyId)}`);
  }
  /** Signs in with a password; use the token as `bearerToken`. */
  signIn(username: string, password: string): Promise<Session> {
    return this.t.json('POST', '/v1/auth/token', { json: { username, password }, auth: false });
  }
}

/**
 * External source control (spec "SCM configuration", endpoint 1). Authorizing a configuration
 * in a web page: `authorize(id, '/account')`, then send the browser to `authorize_url` (same
 * origin, so the cookie it sets comes back); the provider returns the browser to that page with
 * `scm`, `scm_status` (authorized or error) and `scm_error` in its query.
 */
export class ScmsApi {
  constructor(private readonly t: Transport) {}

  /** Every configuration, the internal SCM first. */
  async list(): Promise<ScmConfig[]> {
    return (await this.t.json<{ results: ScmConfig[] }>('GET', '/v1/scms')).results;
  }
  get(id: string): Promise<ScmConfig> {
    return this.t.json('GET', `/v1/scms/${seg(id)}`);
  }
  /** Endpoint 1: asks the provider whether it accepts this account's token. */
  tokenStatus(id: string): Promise<ScmTokenStatus> {
    return this.t.json('POST', `/v1/scms/${seg(id)}/token/status`);
  }
  /** Starts the OAuth flow for the caller's account; `returnTo` is a path of the server (default /account). */
  authorize(id: string, returnTo?: string): Promise<{ authorize_url: string; expires_at: string }> {
    return this.t.json('POST', `/v1/scms/${seg(id)}/authorize`, { json: returnTo === undefined ? {} : { return_to: returnTo } });
  }
  /** Forgets the caller's tokens (and revokes them at the provider where it can). */
  async revoke(id: string): Promise<void> {
    await this.t.send('DELETE', `/v1/scms/${seg(id)}/token`);
  }
  /** Admins: a new external configuration. */
  create(input: ScmConfigInput): Promise<ScmConfig> {
    return this.t.json('POST', '/v1/admin/scms', { json: input });
  }
  /** Admins: enable or disable, make default, rename, change addresses or the OAuth client. */
  update(id: string, input: ScmConfigInput): Promise<ScmConfig> {
    return this.t.json('PATCH', `/v1/admin/scms/${seg(id)}`, { json: input });
  }
  async delete(id: string): Promise<void> {
    await this.t.send('DELETE', `/v1/admin/scms/${seg(id)}`);
  }
  /** "Sync now": builds what the provider's main holds, if not built yet. */
  sync(owner: string, name: string): Promise<ScmSyncResult> {
    return this.t.json('POST', `${algoPath(owner, name)}/scm/sync`);
  }
  /** Whether the algorithm's source is reachable, and its last webhook delivery. */
  connectionStatus(owner: string, name: string): Promise<ScmConnectionStatus> {
    return this.t.json('GET', `${algoPath(owner, name)}/scm/status`);
  }
}

/** Hosted data (docs/compatibility.md §5): URIs like `data://owner/collection/file` or `data://.my/…`. */
export class DataApi {
  constructor(private readonly t: Transport) {}

  /** One page of a directory listing (`limit`: entries per page, 1–1000, the server's default 50). */
  async list(uri: string, opts: { marker?: string; limit?: number; acl?: boolean } = {}): Promise<DataDirectory> {
    const res = await this.t.send('GET', dataApiPath(uri), {
      query: { marker: opts.marker, limit: opts.limit, acl: opts.acl ? 'true' : undefined },
    });
    if (res.headers.get('x-data-type') === 'file') {
      await res.body?.cancel();
      throw new AlgohostError(400, 'ENOTDIR', `${uri} is a file, not a directory`);
    }
    return (await res.json()) as DataDirectory;
  }

  /** Every folder and file of a directory, across pages (folders first on each page). */
  async *entries(uri: string, opts: { limit?: number } = {}): AsyncGenerator<DataEntry> {
    let marker: string | undefined;
    for (;;) {
      const page = await this.list(uri, { marker, limit: opts.limit });
      for (const f of page.folders ?? []) yield { type: 'folder', ...f };
      for (const f of page.files ?? []) yield { type: 'file', ...f };
      if (!page.marker || page.marker === marker) return;
      marker = page.marker;
    }
  }

  /**
   * What is at `uri` (HEAD): a file with its size and modification time, a directory, or null
   * when nothing is there. Other failures (403, 401…) throw.
   */
  async stat(uri: string): Promise<DataStat | null> {
    let res: Response;
    try {
      res = await this.t.send('HEAD', dataApiPath(uri));
    } catch (err) {
      if (err instanceof AlgohostError && err.status === 404 && !err.endpointMissing) return null;
      throw err;
    }
    if (res.headers.get('x-data-type') === 'directory') return { type: 'directory' };
    const length = res.headers.get('content-length');
    const modified = res.headers.get('last-modified');
    return {
      type: 'file',
      size: length !== null && /^\d+$/.test(length) ? Number(length) : undefined,
      lastModified: modified ? new Date(modified).toISOString() : undefined,
    };
  }

  /** `file`, `directory`, or null when nothing is there (HEAD). */
  async type(uri: string): Promise<'file' | 'directory' | null> {
    return (await this.stat(uri))?.type ?? null;
  }

  async exists(uri: string): Promise<boolean> {
    return (await this.type(uri)) !== null;
  }

  /** The bytes of a file (held in memory: use `stream` for large files). */
  async get(uri: string, opts: { onProgress?: ProgressListener } = {}): Promise<Uint8Array> {
    return this.t.bytes(await this.stream(uri), opts.onProgress);
  }

  /**
   * The file as a Response whose body is read as it arrives (for large files); its
   * Content-Length is the file's size. Throws EISDIR for a directory.
   */
  async stream(uri: string, opts: { signal?: AbortSignal } = {}): Promise<Response> {
    const res = await this.t.send('GET', dataApiPath(uri), { headers: { accept: 'application/octet-stream' }, signal: opts.signal });
    if (res.headers.get('x-data-type') === 'directory') {
      await res.body?.cancel();
      throw new AlgohostError(400, 'EISDIR', `${uri} is a directory, not a file`);
    }
    return res;
  }

  async getText(uri: string): Promise<string> {
    return new TextDecoder().decode(await this.get(uri));
  }

  /**
   * Stores a file (replacing it); answers with its URI. A ReadableStream body is sent as it is
   * produced, never held whole; give its `size` when known, so that the server can refuse an
   * upload past the quota before it starts and can tell a cut-off upload from a complete one
   * (Node's fetch sends it as Content-Length; browsers send streams only over HTTP/2).
   */
  async put(
    uri: string,
    content: Uint8Array | string | Blob | ReadableStream<Uint8Array>,
    opts: { contentType?: string; size?: number; signal?: AbortSignal } = {},
  ): Promise<{ result: string }> {
    const streamed = typeof ReadableStream !== 'undefined' && content instanceof ReadableStream;
    return this.t.json('PUT', dataApiPath(uri), {
      body: content as BodyInit,
      contentType: opts.contentType ?? (typeof content === 'string' ? 'text/plain' : 'application/octet-stream'),
      headers: streamed && opts.size !== undefined ? { 'content-length': String(opts.size) } : undefined,
      signal: opts.signal,
    });
  }

  /** Creates a collection or folder (POST on its parent with its name). */
  async mkdir(uri: string, opts: { acl?: DataAcl } = {}): Promise<void> {
    const { parent, name } = splitDataUri(uri);
    if (!name) throw new TypeError(`${uri} has no name to create`);
    await this.t.send('POST', dataApiPath(parent), { json: { name, ...(opts.acl ? { acl: opts.acl } : {}) } });
  }

  /** Changes who may read a collection: [] private, ["algo://.my/*"] my algorithms, ["user://*"] public. */
  async setAcl(uri: string, acl: DataAcl): Promise<void> {
    await this.t.send('PATCH', dataApiPath(uri), { json: { acl } });
  }

  /** Deletes a file, or a folder (`force` for a non-empty one). */
  delete(uri: string, opts: { force?: boolean } = {}): Promise<DataDeleteResult> {
    return this.t.json('DELETE', dataApiPath(uri), { query: { force: opts.force ? 'true' : undefined } });
  }

  /** `data://a/b` + `c` → `data://a/b/c`. */
  join(uri: string, name: string): string {
    return joinDataUri(uri, name);
  }
}
