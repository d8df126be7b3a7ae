/**
 * The authorization matrix's one table (authorization-matrix.test.ts runs it): for every
 * operation of /v1/openapi.json, the request that reaches a real resource of the world
 * (test/support/world.ts, owned by the organization acme: alice is its owner, bob a member,
 * carol a stranger) and the outcome expected for each kind of caller.
 *
 * Outcomes are exact classes: '2xx', 401 (no valid credential), 403 (a credential that may not),
 * 404 (a resource the caller may not know exists). An operation of the document missing here
 * fails the test: add a row. Rows start from a rule (`rule.*`) and override cells explicitly.
 */
import type { Capability } from '../../src/domain/accounts/model.js';

export const CALLERS = [
  'anonymous',
  'wrong_key',
  'revoked_key',
  'expired_jwt',
  'lacking_capability',
  'other_user',
  'org_member',
  'owner',
  'admin',
] as const;
export type Caller = (typeof CALLERS)[number];
export type Outcome = '2xx' | 400 | 401 | 403 | 404 | 409 | 503;
export type Expectations = Record<Caller, Outcome>;

/** One request of a row: `path` is the whole path with its query; `body` is JSON unless `raw`. */
export interface MatrixRequest {
  path: string;
  body?: unknown;
  raw?: string;
}

/** What a row's request may use: the world, and fresh resources for requests that consume theirs. */
export interface MatrixContext {
  /** The world's names (support/world.ts), plus what the matrix adds beside it. */
  owner: string;
  org: string;
  alice: string;
  algorithm: string;
  buildId: string;
  commit: string;
  version: string;
  collection: string;
  file: string;
  asyncRequestId: string;
  language: string;
  environmentSpecificationId: string;
  environmentId: string;
  /**
   * An event cluster (admin-made; its broker does not exist, so no assignment can be made: the
   * matrix has no Kafka) and a flow of the algorithm (an SQS subscriber).
   */
  eventCluster: string;
  eventFlow: string;
  /** An external SCM configuration (admin-made; its provider does not exist) and the algorithm's id. */
  scmConfig: string;
  algorithmId: string;
  /** Pushes a change (and waits for its build) if the latest build is already published. */
  unpublishedBuild(): Promise<void>;
  /** A name never used before (for things a request creates). */
  unique(prefix: string): string;
  /** Fresh resources, made as their owner for one cell (a delete consumes its target). */
  freshUser(): Promise<string>;
  /** A user invited to acme by alice, not yet answering. */
  freshInvitee(): Promise<string>;
  /** An organization owned by a fresh user, which has invited alice. */
  freshInvitingOrg(): Promise<string>;
  /** A member of acme (invited by alice, accepted). */
  freshMember(): Promise<string>;
  freshOrg(): Promise<string>;
  freshAlicesKey(): Promise<string>;
  freshAlgorithm(): Promise<string>;
  freshFile(): Promise<string>;
  freshEventCluster(): Promise<string>;
  freshEventFlow(): Promise<string>;
  freshScmConfig(): Promise<string>;
}

export interface Row {
  /** The capability a "key lacking the capability" lacks (alice's key without just this one). */
  capability: Capability;
  request(c: MatrixContext): MatrixRequest | Promise<MatrixRequest>;
  expect: Expectations;
}

/** No credential, or one that does not authenticate: 401 whatever the operation. */
const UNAUTHENTICATED = { anonymous: 401, wrong_key: 401, revoked_key: 401, expired_jwt: 401 } as const;

type Granted = Omit<Expectations, keyof typeof UNAUTHENTICATED>;

/** The usual shapes of a row's authenticated columns; a row overrides cells by spreading. */
const rule = {
  /** Anyone signed in (catalog-like reads). */
  anyone: (): Granted => ({ lacking_capability: '2xx', other_user: '2xx', org_member: '2xx', owner: '2xx', admin: '2xx' }),
  /** Cluster administration: admins only. */
  adminOnly: (): Granted => ({ lacking_capability: 403, other_user: 403, org_member: 403, owner: 403, admin: '2xx' }),
  /**
   * Managing what acme owns: its owners, members and admins. To anyone else the thing does not
   * exist (404), even a public algorithm: its builds, flows and settings are not theirs to see.
   */
  acme: (): Granted => ({ lacking_capability: 403, other_user: 404, org_member: '2xx', owner: '2xx', admin: '2xx' }),
  /** Reading what acme owns: as `acme`, but reading needs no capability beyond the credential (a restricted key reads). */
  acmeReads: (): Granted => ({ lacking_capability: '2xx', other_user: 404, org_member: '2xx', owner: '2xx', admin: '2xx' }),
  /** Alice's own account (keys, profile, invitations): alice and admins. */
  alices: (): Granted => ({ lacking_capability: 403, other_user: 403, org_member: 403, owner: '2xx', admin: '2xx' }),
  /** What only acme's owners (alice) and admins do: organization administration. */
  acmeOwners: (): Granted => ({ lacking_capability: 403, other_user: 403, org_member: 403, owner: '2xx', admin: '2xx' }),
};

const row = (capability: Capability, request: Row['request'], granted: Granted): Row => ({
  capability,
  request,
  expect: { ...UNAUTHENTICATED, ...granted },
});

const MANAGE: Capability = 'manage_algorithms';

const q = encodeURIComponent;

export const TABLE: Record<string, Row> = {
  // Users: admins manage accounts; a user reads and edits only herself.
  'user.create': row(
    MANAGE,
    (c) => ({ path: '/v1/users', body: { username: c.unique('u'), email: `${c.unique('u')}@example.test` } }),
    rule.adminOnly(),
  ),
  'user.list': row(MANAGE, () => ({ path: '/v1/users' }), rule.adminOnly()),
  // Looking a user up is an admin's; alice reads herself through auth.whoami.
  'user.get': row(MANAGE, (c) => ({ path: `/v1/users/${c.alice}` }), rule.adminOnly()),
  'user.update': row(MANAGE, (c) => ({ path: `/v1/users/${c.alice}`, body: { fullname: 'Alice A' } }), rule.alices()),
  'user.delete': row(MANAGE, async (c) => ({ path: `/v1/users/${await c.freshUser()}` }), rule.adminOnly()),

  // API keys and sessions.
  'key.create': row(MANAGE, (c) => ({ path: `/v1/users/${c.alice}/keys`, body: { description: 'matrix' } }), rule.alices()),
  'key.list': row(MANAGE, (c) => ({ path: `/v1/users/${c.alice}/keys` }), rule.alices()),
  'key.revoke': row(MANAGE, async (c) => ({ path: `/v1/users/${c.alice}/keys/${await c.freshAlicesKey()}` }), rule.alices()),
  // Signing in needs no credential: whatever the header says, the password decides.
  'session.create': {
    capability: MANAGE,
    request: (c) => ({ path: '/v1/auth/token', body: { username: c.alice, password: 'alice has a long password' } }),
    expect: {
      anonymous: '2xx',
      wrong_key: '2xx',
      revoked_key: '2xx',
      expired_jwt: '2xx',
      lacking_capability: '2xx',
      other_user: '2xx',
      org_member: '2xx',
      owner: '2xx',
      admin: '2xx',
    },
  },
  'auth.whoami': row(MANAGE, () => ({ path: '/v1/auth/whoami' }), rule.anyone()),

  // Organizations.
  'organization.types': row(MANAGE, () => ({ path: '/v1/organization/types' }), rule.anyone()),
  'organization.create': row(MANAGE, (c) => ({ path: '/v1/organizations', body: { org_name: c.unique('o') } }), {
    ...rule.anyone(),
    lacking_capability: 403,
  }),
  'organization.list': row(MANAGE, () => ({ path: '/v1/organizations' }), rule.adminOnly()),
  'organization.get': row(MANAGE, (c) => ({ path: `/v1/organizations/${c.org}` }), { ...rule.acmeReads(), other_user: 403 }),
  'organization.update': row(MANAGE, (c) => ({ path: `/v1/organizations/${c.org}`, body: { org_label: 'Acme' } }), rule.acmeOwners()),
  'organization.delete': row(MANAGE, async (c) => ({ path: `/v1/organizations/${await c.freshOrg()}` }), rule.acmeOwners()),
  'organization.members.list': row(MANAGE, (c) => ({ path: `/v1/organizations/${c.org}/members` }), {
    ...rule.acmeReads(),
    other_user: 403,
  }),
  'organization.members.add': row(
    MANAGE,
    async (c) => ({ path: `/v1/organizations/${c.org}/members/${await c.freshUser()}` }),
    rule.acmeOwners(),
  ),
  'organization.members.remove': row(
    MANAGE,
    async (c) => ({ path: `/v1/organizations/${c.org}/members/${await c.freshMember()}` }),
    rule.acmeOwners(),
  ),
  'organization.invitations.list': row(MANAGE, (c) => ({ path: `/v1/organizations/${c.org}/invitations` }), rule.acmeOwners()),
  'organization.invitations.withdraw': row(
    MANAGE,
    async (c) => ({ path: `/v1/organizations/${c.org}/invitations/${await c.freshInvitee()}` }),
    rule.acmeOwners(),
  ),
  'user.invitations.list': row(MANAGE, (c) => ({ path: `/v1/users/${c.alice}/invitations` }), {
    ...rule.alices(),
    lacking_capability: '2xx',
  }),
  // Only the invited user accepts; an admin may decline for her but never join her to anything.
  'user.invitations.accept': row(MANAGE, async (c) => ({ path: `/v1/users/${c.alice}/invitations/${await c.freshInvitingOrg()}` }), {
    ...rule.alices(),
    admin: 403,
  }),
  'user.invitations.decline': row(
    MANAGE,
    async (c) => ({ path: `/v1/users/${c.alice}/invitations/${await c.freshInvitingOrg()}` }),
    rule.alices(),
  ),

  // Environments: the catalog is for anyone signed in; a template is public (`git clone` of a template needs no key).
  'language.list': row(MANAGE, () => ({ path: '/v1/algorithm-environments/edge/languages' }), rule.anyone()),
  'environment.list': row(MANAGE, (c) => ({ path: `/v1/algorithm-environments/edge/languages/${c.language}/environments` }), rule.anyone()),
  'environment.template': {
    capability: MANAGE,
    request: (c) => ({ path: `/v1/algorithm-environments/edge/environment-specifications/${c.environmentSpecificationId}/template` }),
    expect: {
      anonymous: '2xx',
      wrong_key: '2xx',
      revoked_key: '2xx',
      expired_jwt: '2xx',
      lacking_capability: '2xx',
      other_user: '2xx',
      org_member: '2xx',
      owner: '2xx',
      admin: '2xx',
    },
  },

  // Algorithms. Hello is public: a stranger sees it (403 for changing it, its README is
  // documentation anyone who sees it reads) but not its source's history (closed source).
  'algorithm.search': row(MANAGE, () => ({ path: '/v1/algorithms?q=hello' }), rule.anyone()),
  'algorithm.create': row(
    MANAGE,
    (c) => ({ path: `/v1/algorithms/${c.owner}`, body: { name: c.unique('A'), settings: { algorithm_environment: c.environmentId } } }),
    { ...rule.acme(), other_user: 403 },
  ),
  'algorithm.list': row(MANAGE, (c) => ({ path: `/v1/algorithms/${c.owner}` }), rule.anyone()),
  'algorithm.get': row(MANAGE, (c) => ({ path: `/v1/algorithms/${c.owner}/${c.algorithm}` }), rule.anyone()),
  'algorithm.update': row(
    MANAGE,
    (c) => ({ path: `/v1/algorithms/${c.owner}/${c.algorithm}`, body: { details: { summary: 'says hello' } } }),
    { ...rule.acme(), other_user: 403 },
  ),
  'algorithm.patch': row(
    MANAGE,
    (c) => ({ path: `/v1/algorithms/${c.owner}/${c.algorithm}`, body: { details: { summary: 'says hello' } } }),
    { ...rule.acme(), other_user: 403 },
  ),
  'algorithm.delete': row(MANAGE, async (c) => ({ path: `/v1/algorithms/${c.owner}/${await c.freshAlgorithm()}` }), rule.acme()),
  'algorithm.source.commits': row(MANAGE, (c) => ({ path: `/v1/algorithms/${c.owner}/${c.algorithm}/source/commits` }), {
    ...rule.acme(),
    other_user: 403,
  }),
  'algorithm.source.readme': row(MANAGE, (c) => ({ path: `/v1/algorithms/${c.owner}/${c.algorithm}/source/readme` }), {
    ...rule.acmeReads(),
    other_user: '2xx',
  }),

  // Builds and versions.
  'build.list': row(MANAGE, (c) => ({ path: `/v1/algorithms/${c.owner}/${c.algorithm}/builds` }), rule.acmeReads()),
  'build.get': row(MANAGE, (c) => ({ path: `/v1/algorithms/${c.owner}/${c.algorithm}/builds/${c.buildId}` }), rule.acmeReads()),
  'build.logs': row(MANAGE, (c) => ({ path: `/v1/algorithms/${c.owner}/${c.algorithm}/builds/${c.buildId}/logs` }), rule.acmeReads()),
  'build.logs.stream': row(
    MANAGE,
    (c) => ({ path: `/v1/algorithms/${c.owner}/${c.algorithm}/builds/${c.buildId}/logs/stream` }),
    rule.acmeReads(),
  ),
  'algorithm.compile': row(MANAGE, (c) => ({ path: `/v1/algorithms/${c.owner}/${c.algorithm}/compile` }), rule.acme()),
  'version.publish': row(
    MANAGE,
    async (c) => {
      await c.unpublishedBuild();
      return { path: `/v1/algorithms/${c.owner}/${c.algorithm}/versions`, body: { version_info: { version_type: 'revision' } } };
    },
    rule.acme(),
  ),
  'version.list': row(MANAGE, (c) => ({ path: `/v1/algorithms/${c.owner}/${c.algorithm}/versions` }), rule.anyone()),
  'version.publishSingular': row(
    MANAGE,
    async (c) => {
      await c.unpublishedBuild();
      return { path: `/v1/algorithms/${c.owner}/${c.algorithm}/version`, body: { version_info: { version_type: 'revision' } } };
    },
    rule.acme(),
  ),
  'version.get': row(MANAGE, (c) => ({ path: `/v1/algorithms/${c.owner}/${c.algorithm}/versions/${c.commit}` }), rule.anyone()),

  // Cluster administration.
  'admin.status': row(MANAGE, () => ({ path: '/v1/admin/status' }), rule.adminOnly()),
  'admin.audit.list': row(MANAGE, () => ({ path: '/v1/admin/audit?action=key' }), rule.adminOnly()),
  'eventCluster.create': row(
    MANAGE,
    (c) => ({ path: '/v1/admin/event-clusters', body: { name: c.unique('k'), bootstrap_servers: ['127.0.0.1:9'] } }),
    rule.adminOnly(),
  ),
  'eventCluster.list': row(MANAGE, () => ({ path: '/v1/admin/event-clusters' }), rule.adminOnly()),
  'eventCluster.get': row(MANAGE, (c) => ({ path: `/v1/admin/event-clusters/${c.eventCluster}` }), rule.adminOnly()),
  'eventCluster.delete': row(MANAGE, async (c) => ({ path: `/v1/admin/event-clusters/${await c.freshEventCluster()}` }), rule.adminOnly()),
  // The cluster's broker does not exist: an admin is told the broker is unreachable (503).
  'eventCluster.topics': row(MANAGE, (c) => ({ path: `/v1/admin/event-clusters/${c.eventCluster}/topics` }), {
    ...rule.adminOnly(),
    admin: 503,
  }),
  // An assignment needs the topic from the broker: an admin is told it is unreachable (503).
  'eventAssignment.create': row(
    MANAGE,
    (c) => ({
      path: `/v1/admin/event-clusters/${c.eventCluster}/assignments`,
      body: { algorithm: `${c.owner}/${c.algorithm}`, topic: c.unique('t'), role: 'publisher' },
    }),
    { ...rule.adminOnly(), admin: 503 },
  ),
  'eventAssignment.list': row(MANAGE, (c) => ({ path: `/v1/admin/event-clusters/${c.eventCluster}/assignments` }), rule.adminOnly()),
  // No assignment can exist (no broker): the admins' answer is 404, everyone else is refused before the lookup.
  'eventAssignment.delete': row(
    MANAGE,
    (c) => ({ path: `/v1/admin/event-clusters/${c.eventCluster}/assignments/00000000-0000-4000-8000-000000000000` }),
    { ...rule.adminOnly(), admin: 404 },
  ),

  // Event flows of the algorithm: its owner's side.
  'eventFlow.list': row(MANAGE, (c) => ({ path: `/v1/algorithms/${c.owner}/${c.algorithm}/event-flows` }), rule.acmeReads()),
  'eventFlow.create': row(
    MANAGE,
    (c) => ({
      path: `/v1/algorithms/${c.owner}/${c.algorithm}/event-flows`,
      body: {
        source_type: 'sqs',
        source_uri: `https://sqs.us-east-1.amazonaws.com/123456789012/${c.unique('q')}`,
        credentials: { role_arn: 'arn:aws:iam::123456789012:role/matrix' },
      },
    }),
    rule.acme(),
  ),
  'eventFlow.get': row(MANAGE, (c) => ({ path: `/v1/algorithms/${c.owner}/${c.algorithm}/event-flows/${c.eventFlow}` }), rule.acmeReads()),
  'eventFlow.update': row(
    MANAGE,
    (c) => ({ path: `/v1/algorithms/${c.owner}/${c.algorithm}/event-flows/${c.eventFlow}`, body: { enabled: false } }),
    rule.acme(),
  ),
  'eventFlow.delete': row(
    MANAGE,
    async (c) => ({ path: `/v1/algorithms/${c.owner}/${c.algorithm}/event-flows/${await c.freshEventFlow()}` }),
    rule.acme(),
  ),
  'eventDelivery.list': row(MANAGE, (c) => ({ path: `/v1/algorithms/${c.owner}/${c.algorithm}/event-deliveries` }), rule.acmeReads()),
  // Another account's listeners: that account is not found for them.
  'eventListener.list': row(MANAGE, (c) => ({ path: `/v1/users/${c.alice}/event-listeners` }), {
    ...rule.alices(),
    lacking_capability: '2xx',
    other_user: 404,
    org_member: 404,
  }),
  // Another account's ExternalId: as its listeners, that account is not found for them.
  'eventFlow.assumeRole': row(MANAGE, (c) => ({ path: `/v1/users/${c.alice}/sqs-assume-role` }), {
    ...rule.alices(),
    lacking_capability: '2xx',
    other_user: 404,
    org_member: 404,
  }),

  // Calls: Hello is public, so anyone signed in may call it; a result is its caller's (alice's).
  'algorithm.call': row('call_algorithms', (c) => ({ path: `/v1/algo/${c.owner}/${c.algorithm}/${c.version}`, raw: 'matrix' }), {
    ...rule.anyone(),
    lacking_capability: 403,
  }),
  // A result is its caller's alone (alice's): not even an admin reads it; for anyone else it does not exist.
  'algorithm.call.result': row('call_algorithms', (c) => ({ path: `/v1/algo/requests/${c.asyncRequestId}` }), {
    lacking_capability: '2xx',
    other_user: 404,
    org_member: 404,
    owner: '2xx',
    admin: 404,
  }),

  // Hosted data: the collection's ACL lets acme's algorithms read; people read through membership;
  // to anyone else a private collection does not exist (making one in acme's space: 403).
  'data.get': row('read_data', (c) => ({ path: `/v1/data/${c.owner}/${c.collection}/${q(c.file)}` }), rule.acme()),
  'data.create': row('write_data', (c) => ({ path: `/v1/data/${c.owner}`, body: { name: c.unique('c') } }), {
    ...rule.acme(),
    other_user: 403,
  }),
  'data.update': row(
    'write_data',
    (c) => ({ path: `/v1/data/${c.owner}/${c.collection}`, body: { acl: { read: ['algo://.my/*'] } } }),
    rule.acme(),
  ),
  'data.delete': row('write_data', async (c) => ({ path: `/v1/data/${c.owner}/${c.collection}/${await c.freshFile()}` }), rule.acme()),
  'data.put': row('write_data', (c) => ({ path: `/v1/data/${c.owner}/${c.collection}/${c.unique('f')}.txt`, raw: 'matrix' }), rule.acme()),

  // External source control: configurations are read by anyone signed in and made by admins;
  // an authorization is the caller's own, so every signed-in caller acts on their own.
  'scm.list': row(MANAGE, () => ({ path: '/v1/scms' }), rule.anyone()),
  'scm.get': row(MANAGE, (c) => ({ path: `/v1/scms/${c.scmConfig}` }), rule.anyone()),
  'scm.create': row(
    MANAGE,
    (c) => ({
      path: '/v1/admin/scms',
      body: {
        name: c.unique('scm'),
        provider: 'gitea',
        urls: { web: 'http://127.0.0.1:9' },
        oauth: { client_id: 'c', client_secret: 's' },
      },
    }),
    rule.adminOnly(),
  ),
  'scm.update': row(MANAGE, (c) => ({ path: `/v1/admin/scms/${c.scmConfig}`, body: { enabled: true } }), rule.adminOnly()),
  'scm.delete': row(MANAGE, async (c) => ({ path: `/v1/admin/scms/${await c.freshScmConfig()}` }), rule.adminOnly()),
  'scm.tokenStatus': row(MANAGE, (c) => ({ path: `/v1/scms/${c.scmConfig}/token/status` }), rule.anyone()),
  // Starting or revoking an authorization hands a provider account to this one: a restricted key may not.
  'scm.authorize': row(MANAGE, (c) => ({ path: `/v1/scms/${c.scmConfig}/authorize`, body: { return_to: '/account' } }), {
    ...rule.anyone(),
    lacking_capability: 403,
  }),
  // Nobody has authorized the matrix's configuration (there is no forge to consent at): revoking
  // what the caller never authorized is a 400 that says so.
  'scm.revoke': row(MANAGE, (c) => ({ path: `/v1/scms/${c.scmConfig}/token` }), {
    lacking_capability: 403,
    other_user: 400,
    org_member: 400,
    owner: 400,
    admin: 400,
  }),
  // The provider's redirect back: the state decides (an unknown one is 404 whoever sends it).
  'scm.oauthCallback': {
    capability: MANAGE,
    request: () => ({ path: '/v1/scms/oauth/callback?state=never-issued&code=x' }),
    expect: {
      anonymous: 404,
      wrong_key: 404,
      revoked_key: 404,
      expired_jwt: 404,
      lacking_capability: 404,
      other_user: 404,
      org_member: 404,
      owner: 404,
      admin: 404,
    },
  },
  // Hello's source is this service's own: syncing or asking its provider is a conflict for
  // those who may manage it; to anyone else the management route's algorithm does not exist.
  'scm.sync': row(MANAGE, (c) => ({ path: `/v1/algorithms/${c.owner}/${c.algorithm}/scm/sync` }), {
    ...rule.acme(),
    org_member: 409,
    owner: 409,
    admin: 409,
  }),
  // Hello's source is this service's own, always reachable.
  'scm.connectionStatus': row(MANAGE, (c) => ({ path: `/v1/algorithms/${c.owner}/${c.algorithm}/scm/status` }), rule.acmeReads()),
  // A webhook authenticates by its signature, not by a credential: Hello has no webhook (404).
  'scm.webhook': {
    capability: MANAGE,
    request: (c) => ({ path: `/v1/scm/webhooks/${c.algorithmId}`, raw: '{}' }),
    expect: {
      anonymous: 404,
      wrong_key: 404,
      revoked_key: 404,
      expired_jwt: 404,
      lacking_capability: 404,
      other_user: 404,
      org_member: 404,
      owner: 404,
      admin: 404,
    },
  },

  // Insights: the connection is cluster administration. The matrix's cluster has no broker: an
  // admin is told the topic cannot be checked (503); there is no connection to read or delete (404).
  'insightsConnection.create': row(
    MANAGE,
    (c) => ({ path: '/v1/admin/insights-connection', body: { cluster: c.eventCluster, topic: 'insights' } }),
    {
      ...rule.adminOnly(),
      admin: 503,
    },
  ),
  'insightsConnection.get': row(MANAGE, () => ({ path: '/v1/admin/insights-connection' }), { ...rule.adminOnly(), admin: 404 }),
  'insightsConnection.delete': row(MANAGE, () => ({ path: '/v1/admin/insights-connection' }), { ...rule.adminOnly(), admin: 404 }),
  // A report authenticates by the running call's Insights token, not by a credential: none here (403).
  'insights.report': {
    capability: MANAGE,
    request: () => ({ path: '/v1/insights', body: [{ insight_key: 'k', insight_value: 1 }] }),
    expect: {
      anonymous: 403,
      wrong_key: 403,
      revoked_key: 403,
      expired_jwt: 403,
      lacking_capability: 403,
      other_user: 403,
      org_member: 403,
      owner: 403,
      admin: 403,
    },
  },
};
