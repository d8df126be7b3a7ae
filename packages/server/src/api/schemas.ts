/**
 * Response and request schemas shared by routes. They feed validation, serialization and the
 * OpenAPI document; request schemas check types only, the domain checks values and rules.
 */
import { Type, type TProperties, type TSchema } from 'typebox';
import { ORGANIZATION_TYPES } from '../domain/accounts/model.js';
import { CALLABILITIES, LICENSES, NETWORK_ACCESS, SOURCE_VISIBILITIES } from '../domain/algorithms/model.js';
import { LIMIT_PATTERN, MARKER_PATTERN, MAX_MARKER_LENGTH } from '../domain/pagination.js';
import { MAX_ACCOUNT_NAME, MAX_ALGORITHM_NAME, NAME_PATTERN } from '../domain/names.js';

export const ErrorBody = Type.Object(
  { error: Type.Object({ code: Type.Integer(), message: Type.String() }) },
  { $id: 'Error', description: 'Every failure: a numeric code (docs/compatibility.md §1) and a message.' },
);

/** The error answers of a route; every route may also answer 429 (api/rate-limits.ts). */
export const errorResponses = (...statuses: number[]) =>
  Object.fromEntries([...new Set([...statuses, 429])].map((s) => [s, Type.Ref('Error')])) as Record<number, TSchema>;

/** The usual failures of an authenticated route. */
export const AUTH_ERRORS = [400, 401, 403] as const;

export const Paged = <T extends TSchema>(item: T) =>
  Type.Object({
    marker: Type.Union([Type.String(), Type.Null()]),
    next_link: Type.Union([Type.String(), Type.Null()]),
    results: Type.Array(item),
  });

/** `?limit=`: refused (5003) unless 1–1000. */
export const LimitQuery = (what = 'Page size') =>
  Type.Optional(Type.String({ pattern: LIMIT_PATTERN, description: `${what}, 1–1000 (default 50); 5003 otherwise.` }));

/** `?marker=`: any base64url string is a position; other characters are refused (5002). */
export const MarkerQuery = Type.Optional(
  Type.String({
    pattern: MARKER_PATTERN,
    maxLength: MAX_MARKER_LENGTH,
    description: 'The marker of the previous page, unchanged (base64url; 5002 otherwise).',
  }),
);

/**
 * A query string: the parameters named, nothing else (a misspelt `?limt=` is a 400 naming it,
 * not a silently ignored wish).
 */
export const Query = <T extends TProperties>(properties: T) => Type.Object(properties, { additionalProperties: false });

export const PageQuery = Query({ limit: LimitQuery(), marker: MarkerQuery });

export const Str = Type.String();
export const OptStr = Type.Optional(Type.String());

/**
 * What the domain accepts as free text (domain/text.ts: at most `max` characters, no NUL); null
 * or absent leaves the field as it is.
 */
export const Text = (max = 500, description?: string) =>
  Type.Optional(Type.Union([Type.String({ maxLength: max, pattern: NO_NUL, ...(description ? { description } : {}) }), Type.Null()]));
const NO_NUL = '^[^\\u0000]*$';
/** Repository and owner names at a provider (domain/scm/external-source-service.ts has the same rules). */
const REPOSITORY_NAME = '^(?!\\.+$)(?!.*\\.[gG][iI][tT]$)[A-Za-z0-9_.-]{1,100}$';
const REPOSITORY_OWNER = '^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$';

/** Names of users, organizations and algorithms (docs/compatibility.md §1, domain/names.ts). */
export const Name = (max: number, description?: string) =>
  Type.String({ pattern: NAME_PATTERN.source, maxLength: max, ...(description ? { description } : {}) });

/** The e-mail addresses the domain accepts: something@something, no spaces or NUL. */
const EMAIL = '^[^\\s@\\u0000]+@[^\\s@\\u0000]+$';
const Email = (description?: string) => Type.String({ pattern: EMAIL, maxLength: 500, ...(description ? { description } : {}) });

/** `?flag=` booleans (api/query.ts): true/false in any case, 1/0; empty is "not given". */
export const QueryBoolean = (description: string) =>
  Type.Optional(Type.String({ pattern: '^(?:[Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee]|1|0)?$', description }));

export const User = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    username: Str,
    email: Type.String({ description: 'The e-mail address; "" when none was given.' }),
    fullname: Type.String({ description: '"" when none was given.' }),
    company_name: Type.String({ description: '"" when none was given.' }),
    company_role: Type.String({ description: '"" when none was given.' }),
    self_link: Str,
    resource_type: Type.Literal('user'),
  },
  { $id: 'User', description: 'Every field is always present (docs/compatibility.md §9.5).' },
);

const userProfile = {
  fullname: Text(),
  company_name: Text(),
  company_role: Text(),
};

const Password = Type.String({ minLength: 8, description: 'At least 8 characters.' });

export const UserCreateInput = Type.Object({
  username: Name(MAX_ACCOUNT_NAME, 'must start with a letter and contain only letters, digits and underscores; unique regardless of case'),
  email: Email('Unique.'),
  ...userProfile,
  password: Type.Optional(Password),
});

export const UserUpdateInput = Type.Object(
  {
    email: Type.Optional(Type.Union([Email(), Type.Null()])),
    ...userProfile,
    password: Type.Optional(Password),
    current_password: Type.Optional(
      Type.String({
        description: "Needed with password (403 without it or when wrong), except when an admin sets another account's password.",
      }),
    ),
  },
  { description: 'Omitted or null fields are kept. A username may be sent only as the current one: names never change.' },
);

export const Organization = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    org_name: Str,
    org_label: Str,
    org_contact_name: OptStr,
    org_email: OptStr,
    org_url: OptStr,
    type_id: Str,
    self_link: Str,
    resource_type: Type.Literal('organization'),
  },
  { $id: 'Organization' },
);

export const Invitation = Type.Object(
  {
    org_name: Str,
    username: Str,
    role: Type.Union([Type.Literal('owner'), Type.Literal('member')]),
    invited_by: Type.Union([Type.String(), Type.Null()], { description: 'The owner (or organization) who invited; null once deleted.' }),
    created_at: Str,
  },
  {
    $id: 'Invitation',
    description: 'A pending invitation to an organization: the user becomes a member only by accepting it.',
  },
);

const organizationProfile = {
  org_label: Text(500, 'Display name (default: org_name).'),
  org_contact_name: Text(),
  org_email: Type.Optional(Type.Union([Email(), Type.Null()])),
  org_url: Text(),
  type_id: Type.Optional(
    Type.Union(
      [
        Type.Union(ORGANIZATION_TYPES.map((t) => Type.Literal(t.id))),
        Type.Union(ORGANIZATION_TYPES.map((t) => Type.Literal(t.name))),
        Type.Null(),
      ],
      { description: 'An id or a name from GET /v1/organization/types (default basic).' },
    ),
  ),
};

export const OrganizationCreateInput = Type.Object({
  org_name: Name(MAX_ACCOUNT_NAME, 'A letter, then letters, digits and underscores; unique among users and organizations.'),
  ...organizationProfile,
});

export const OrganizationUpdateInput = Type.Object(organizationProfile, {
  description: 'Omitted or null fields are kept. An org_name may be sent only as the current one: names never change.',
});

export const Capability = Type.Union([
  Type.Literal('manage_algorithms'),
  Type.Literal('call_algorithms'),
  Type.Literal('read_data'),
  Type.Literal('write_data'),
]);

const apiKeyFields = {
  id: Type.String({ format: 'uuid' }),
  kind: Type.Union([Type.Literal('standard'), Type.Literal('admin')]),
  capabilities: Type.Array(Capability),
  prefix: Type.String({ description: 'The first characters of the key, to recognise it.' }),
  description: OptStr,
  created_at: Str,
};

export const ApiKey = Type.Object(apiKeyFields, { $id: 'ApiKey' });

export const CreatedApiKey = Type.Object({
  ...apiKeyFields,
  key: Type.String({ description: 'The secret (sim + 25 characters); shown only in this response.' }),
});

export const Language = Type.Object(
  {
    name: Str,
    display_name: Str,
    configuration: Type.String({ description: 'JSON document: {display_name, req_files, artifacts}.' }),
  },
  { $id: 'Language' },
);

export const Environment = Type.Object(
  {
    id: Type.String({ format: 'uuid', description: 'Unique per cluster; use as settings.algorithm_environment.' }),
    name: Str,
    environment_specification_id: Type.String({ format: 'uuid', description: 'Names the template (endpoint 5).' }),
    display_name: Str,
    description: Str,
    created_at: Type.String({ description: 'ISO 8601 with fractional seconds, no zone designator.' }),
    language: Type.Ref('Language'),
    machine_type: Type.Union([Type.Literal('CPU'), Type.Literal('GPU')]),
    runtime: Type.Object({ name: Str, version: Str }),
  },
  { $id: 'Environment' },
);

const Details = Type.Object({ label: OptStr, summary: OptStr, tagline: OptStr });

export const VersionInfo = Type.Object(
  {
    semantic_version: Type.Optional(Type.String({ description: 'major.minor.patch; absent for a build not yet published.' })),
    git_hash: Str,
    version_uuid: OptStr,
    release_notes: OptStr,
    sample_input: OptStr,
    sample_output: OptStr,
    published_at: OptStr,
  },
  { $id: 'VersionInfo' },
);

export const Algorithm = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    name: Str,
    owner: Str,
    details: Details,
    settings: Type.Object({
      algorithm_callability: Str,
      source_visibility: Str,
      language: OptStr,
      environment: OptStr,
      package_set: OptStr,
      algorithm_environment: Type.String({ format: 'uuid' }),
      license: Str,
      royalty_microcredits: Type.Integer(),
      network_access: Str,
      pipeline_enabled: Type.Boolean(),
      insights_enabled: Type.Boolean(),
    }),
    version_info: Type.Optional(Type.Ref('VersionInfo')),
    build: Type.Optional(Type.Ref('Build')),
    source: Type.Optional(Type.Ref('AlgorithmSource')),
    git_url: Type.String({
      description:
        'Clone address of the algorithm repository (push address too, unless `source` says the source lives at an external SCM).',
    }),
    created_at: Str,
    updated_at: Str,
    self_link: Str,
    resource_type: Type.Literal('algorithm'),
  },
  { $id: 'Algorithm' },
);

const Loose = Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]);
/** One of the values, or null (kept as it is); a JSON Schema enum, so a refusal lists them. */
const Enum = (values: readonly string[], description?: string) =>
  Type.Optional(Type.Unsafe<string | null>({ enum: [...values, null], ...(description ? { description } : {}) }));
const Flag = Type.Optional(Type.Union([Type.Boolean(), Type.Null()]));

const algorithmDetails = Type.Optional(
  Type.Union([Type.Object({ label: Text(500, 'Display name; may hold spaces.'), summary: Text(5000), tagline: Text() }), Type.Null()]),
);

/** Values that are not free text: docs/compatibility.md §3. */
const algorithmSettings = {
  algorithm_callability: Enum(CALLABILITIES, 'New algorithms are private.'),
  source_visibility: Enum(SOURCE_VISIBILITIES, 'closed needs license apl (409 on an update that would break that).'),
  license: Enum(LICENSES),
  network_access: Enum(
    NETWORK_ACCESS,
    "isolated: no network. full: outbound to public internet addresses only, through the node's egress proxy (HTTP_PROXY/HTTPS_PROXY inside); loopback, private, link-local and metadata addresses and the node's own services are refused.",
  ),
  pipeline_enabled: Flag,
  insights_enabled: Flag,
  royalty_microcredits: Type.Optional(Type.Union([Type.Integer({ minimum: 0, maximum: 2147483647 }), Type.Null()])),
  algorithm_environment: Type.Optional(
    Type.Union([
      Type.String({
        minLength: 1,
        maxLength: 500,
        pattern: NO_NUL,
        description:
          'An environment id of this cluster (or its name), from GET /v1/algorithm-environments/edge/languages/{language}/environments; 422 when there is none. An update keeps the language (409 otherwise).',
      }),
      Type.Null(),
    ]),
  ),
  language: Text(500, 'Legacy form: a language or legacy language name (422 when unknown); an update keeps the language.'),
  environment: Enum(['cpu', 'gpu'], 'Legacy form: the hardware class, with language.'),
};

/**
 * closed source only under apl (docs/compatibility.md §3), for what one request says; against
 * the algorithm's present settings an update answers 409.
 */
const closedNeedsApl = {
  not: {
    description: 'settings.source_visibility "closed" needs license "apl"',
    type: 'object',
    required: ['source_visibility', 'license'],
    properties: { source_visibility: { const: 'closed' }, license: { enum: LICENSES.filter((l) => l !== 'apl') } },
  },
};

const AlgorithmSettingsInput = Type.Optional(
  Type.Union([Type.Object(algorithmSettings, { ...closedNeedsApl, description: 'Omitted or null fields keep their value.' }), Type.Null()]),
);

/**
 * Spec "Source" (request side): where the new algorithm's source lives. With an external scm the
 * other three fields are required, in the forms every provider accepts (domain/scm checks the
 * same rules, and then the values against the provider).
 */
const scmSource = Type.Optional(
  Type.Union([
    Type.Unsafe<{
      scm?: string | null;
      repository_name?: string | null;
      repository_owner?: string | null;
      initial_commit_message?: string | null;
    }>({
      type: 'object',
      description: 'Omitted, null or scm "internal": the internal SCM. With an external scm, all four fields are required.',
      properties: {
        scm: {
          anyOf: [{ type: 'string', maxLength: 100, pattern: NO_NUL }, { type: 'null' }],
          description: '"internal" (the default), or the id of an enabled SCM configuration this account authorized (GET /v1/scms).',
        },
        repository_name: {
          anyOf: [{ type: 'string', pattern: REPOSITORY_NAME }, { type: 'null' }],
          description: 'With an external scm: the repository to create at the provider (it must not exist there yet).',
        },
        repository_owner: {
          anyOf: [{ type: 'string', pattern: REPOSITORY_OWNER }, { type: 'null' }],
          description: 'With an external scm: scm_username of the token status, or an organization where it is MEMBER.',
        },
        initial_commit_message: {
          anyOf: [{ type: 'string', maxLength: 5000, pattern: '^[^\\u0000]*\\S[^\\u0000]*$' }, { type: 'null' }],
          description: "With an external scm: the message of the first commit (the environment's template).",
        },
      },
      if: { required: ['scm'], properties: { scm: { type: 'string', not: { const: 'internal' } } } },
      then: {
        required: ['repository_name', 'repository_owner', 'initial_commit_message'],
        properties: {
          repository_name: { type: 'string' },
          repository_owner: { type: 'string' },
          initial_commit_message: { type: 'string' },
        },
      },
    }),
    Type.Null(),
  ]),
);

export const AlgorithmCreateInput = Type.Object(
  {
    name: Name(MAX_ALGORITHM_NAME, 'As used in URLs (not the display label); unique per owner regardless of case.'),
    details: algorithmDetails,
    settings: AlgorithmSettingsInput,
    source: scmSource,
    version_info: Type.Optional(Loose),
    scmsCredentials: Type.Optional(Type.Unknown()),
  },
  { description: 'settings.username, when sent (the Python client does), must name the owner in the path.' },
);

export const AlgorithmUpdateInput = Type.Object(
  {
    details: algorithmDetails,
    settings: AlgorithmSettingsInput,
    source: Type.Optional(Loose),
    version_info: Type.Optional(Loose),
    scmsCredentials: Type.Optional(Type.Unknown()),
  },
  {
    description:
      'Omitted or empty parts are kept (the Python client sends every part, empty when unset). A name may be sent only as the current one: algorithms are never renamed.',
  },
);

const Nullable = (t: TSchema) => Type.Union([t, Type.Null()]);

export const Build = Type.Object(
  {
    build_id: Type.String({ format: 'uuid' }),
    commit_sha: Str,
    status: Type.Union([Type.Literal('queued'), Type.Literal('in-progress'), Type.Literal('succeeded'), Type.Literal('failed')]),
    trigger: Type.Union([Type.Literal('push'), Type.Literal('sync'), Type.Literal('compile')], {
      description:
        'push: a push to the repository (algohost’s Git server, or an external provider’s webhook); sync: fetched by “sync now” (POST …/scm/sync); compile: POST …/compile.',
    }),
    environment: Str,
    error: Type.Optional(Type.String({ description: 'Why a failed build failed; the log has the details.' })),
    created_at: Str,
    started_at: Nullable(Str),
    finished_at: Nullable(Str),
    resource_type: Type.Literal('build'),
  },
  { $id: 'Build' },
);

export const CompileResult = Type.Object({
  ...Algorithm.properties,
  version_info: Type.Object({ git_hash: Str }),
  build: Type.Ref('Build'),
  compilation: Type.Object({ successful: Type.Boolean(), output: Type.String({ description: 'The build log.' }) }),
});

const Sample = (description: string) =>
  Type.Optional(
    Type.Union(
      [
        Type.String({ maxLength: 65536, pattern: NO_NUL }),
        Type.Number(),
        Type.Boolean(),
        Type.Null(),
        Type.Array(Type.Unknown()),
        Type.Record(Type.String(), Type.Unknown()),
      ],
      { description },
    ),
  );

export const PublishInput = Type.Object(
  {
    details: Type.Optional(Loose),
    settings: Type.Optional(
      Type.Union([
        Type.Object({ algorithm_callability: Enum(CALLABILITIES, "Default: the algorithm's."), insights_enabled: Flag }),
        Type.Null(),
      ]),
    ),
    version_info: Type.Optional(
      Type.Union([
        Type.Object({
          version_type: Enum(['major', 'minor', 'revision', 'patch', ''], 'Default minor; revision is patch.'),
          type: Enum(['major', 'minor', 'revision', 'patch', ''], 'The same as version_type (one client sends this name).'),
          release_notes: Text(65536),
          sample_input: Sample('Text, or a JSON value kept as its JSON text; at most 65536 characters.'),
          sample_output: Sample('As sample_input.'),
        }),
        Type.Null(),
      ]),
    ),
  },
  { description: 'docs/compatibility.md §3: every part optional, an empty body allowed.' },
);

export const Identity = Type.Object(
  {
    username: Str,
    admin: Type.Boolean({ description: 'Whether the caller acts as a cluster admin (an admin key, or a session of an admin account).' }),
    credential: Type.Union([Type.Literal('session'), Type.Literal('key'), Type.Literal('call_key'), Type.Literal('admin_key')], {
      description: 'How the caller proved who it is: a signed-in session, a standard API key, the key of an algorithm call, an admin key.',
    }),
    capabilities: Type.Array(Capability, {
      description: 'What the credential may do (docs/api-guide.md, "Credentials and capabilities").',
    }),
    organizations: Type.Optional(
      Type.Array(Type.Object({ name: Str, role: Type.Union([Type.Literal('owner'), Type.Literal('member')]) }), {
        description: 'The organizations the account belongs to, by name; absent for a call key.',
      }),
    ),
    email: Type.Optional(Type.Union([Str, Type.Null()], { description: "The account's own profile; absent for a call key." })),
    fullname: Type.Optional(Nullable(Str)),
    company_name: Type.Optional(Nullable(Str)),
    company_role: Type.Optional(Nullable(Str)),
  },
  { $id: 'Identity' },
);

export const Commit = Type.Object(
  {
    sha: Str,
    author_name: Type.String({ description: 'Cut to 200 columns (ending in "..").' }),
    message: Type.String({ description: 'The subject: the message\'s first line, cut to 500 columns (ending in "..").' }),
    committed_at: Type.String({ description: 'ISO 8601, UTC.' }),
  },
  { $id: 'Commit' },
);

export const Readme = Type.Object(
  {
    commit: Type.String({ description: 'The commit the README was read from.' }),
    path: Type.String({ description: 'Its name at the root of the tree, as spelled there (README.md, readme.txt…).' }),
    content: Type.String({ description: 'The raw text (Markdown or plain); whoever shows it must render it safely.' }),
    truncated: Type.Optional(
      Type.Boolean({ description: 'Present (true) when the file is longer than 256 KiB: content holds its first 256 KiB.' }),
    ),
  },
  { $id: 'Readme' },
);

export const ClusterStatus = Type.Object(
  {
    version: Type.String({ description: "The server's release." }),
    database: Type.Union([Type.Literal('sqlite'), Type.Literal('postgresql')]),
    blob_store: Type.Union([Type.Literal('disk'), Type.Literal('s3')]),
    builds: Type.Object({ queued: Type.Integer(), running: Type.Integer() }, { description: 'In the whole cluster.' }),
    runners: Type.Object({ warm: Type.Integer() }, { description: 'Started runners of this node, idle or busy.' }),
    calls_per_minute: Type.Integer({ description: 'Calls this node handed to a runner in the last 60 seconds.' }),
    uptime_seconds: Type.Integer({ description: 'Since this node started.' }),
  },
  { $id: 'ClusterStatus' },
);

const ClientId = Type.Object({
  client_id: Type.String({ description: 'The OAuth client id of the application registered at the provider.' }),
});

export const ScmConfig = Type.Object(
  {
    id: Type.String({ description: '"internal", or the UUID of an external configuration.' }),
    name: Type.String({ description: 'The provider address (github.com, gitea.example.org…).' }),
    provider: Type.Union(['internal', 'github', 'gitlab', 'bitbucket', 'gitea'].map((k) => Type.Literal(k))),
    default: Type.Boolean({ description: 'What the web UI offers first; a create request without source.scm uses the internal SCM.' }),
    enabled: Type.Boolean({ description: 'A disabled configuration backs no new algorithm and takes no new authorization.' }),
    scm: Type.Optional(ClientId),
    oauth: Type.Optional(ClientId),
    urls: Type.Object({ web: Str, api: Str, ssh: OptStr }),
  },
  { $id: 'ScmConfig', description: 'Spec "SCM configuration". The OAuth client secret is never shown.' },
);

export const ScmConfigInput = Type.Object({
  name: OptStr,
  provider: Type.Optional(Type.Union(['github', 'gitlab', 'bitbucket', 'gitea'].map((k) => Type.Literal(k)))),
  default: Type.Optional(Type.Boolean()),
  enabled: Type.Optional(Type.Boolean()),
  oauth: Type.Optional(Type.Object({ client_id: OptStr, client_secret: OptStr })),
  scm: Type.Optional(Type.Object({ client_id: OptStr })),
  urls: Type.Optional(Type.Object({ web: OptStr, api: OptStr, ssh: OptStr })),
});

export const ScmTokenStatus = Type.Object(
  {
    scm_username: Type.String({
      description: 'The provider account the stored token acts as (the last one seen when unauthorized; empty if never authorized).',
    }),
    authorization_status: Type.Union([Type.Literal('authorized'), Type.Literal('unauthorized')]),
    scm_organizations: Type.Array(
      Type.Object({
        scm_org_username: Str,
        access_level: Type.Union([Type.Literal('MEMBER'), Type.Literal('READ')], {
          description: 'MEMBER: a member who may create repositories there (a valid repository_owner); READ: a member who may not.',
        }),
      }),
    ),
  },
  { $id: 'ScmTokenStatus', description: 'Spec "SCM token status" (endpoint 1): the provider was asked, now.' },
);

export const ScmDelivery = Type.Object(
  {
    at: Str,
    via: Type.Union([Type.Literal('webhook'), Type.Literal('sync')]),
    commit_sha: Nullable(Str),
    result: Type.String({ description: 'What came of it: the build queued, "up to date", or why nothing was built.' }),
  },
  { $id: 'ScmDelivery' },
);

export const AlgorithmSource = Type.Object(
  {
    repository_name: Str,
    repository_owner: Str,
    scm: Type.Ref('ScmConfig'),
    repository_https_url: Str,
    repository_ssh_url: Str,
    repository_web_url: Str,
    last_delivery: Type.Optional(Type.Ref('ScmDelivery')),
  },
  { $id: 'AlgorithmSource', description: 'Spec "Source": where an externally hosted algorithm keeps its source.' },
);

/*
 * The call envelope (docs/compatibility.md §2). An algorithm's failure is also HTTP 200, with
 * {error, metadata}; the platform's refusals are Error bodies with their 4xx/5xx status.
 */
const CallMetadata = Type.Object(
  {
    content_type: Type.Union([Type.Literal('json'), Type.Literal('text'), Type.Literal('binary'), Type.Literal('void')]),
    duration: Type.Number({ description: 'Seconds the call took.' }),
    stdout: Type.Optional(Type.String({ description: 'What the algorithm printed (stdout=true; owner and members only).' })),
    request_id: Type.Optional(Type.String()),
    algorithm_version: Type.Optional(Type.String({ description: 'The published version that ran (x.y.z).' })),
    queue_ms: Type.Optional(Type.Number({ description: 'Milliseconds waiting for a runner.' })),
    start_ms: Type.Optional(Type.Number({ description: 'Milliseconds starting one (a cold start).' })),
    run_ms: Type.Optional(Type.Number({ description: 'Milliseconds the algorithm ran.' })),
    cold_start: Type.Optional(Type.Boolean()),
  },
  { $id: 'CallMetadata', description: 'Always content_type and duration; the rest when the call reached a runner.' },
);

const CallError = Type.Object(
  {
    message: Type.String(),
    error_type: Type.String({ description: 'AlgorithmError, InputError, TimeoutError, SystemExit, LoadingError…' }),
    stacktrace: Type.String({ description: 'Empty unless the caller may see the source.' }),
    stack_trace: Type.String({ description: 'The same as stacktrace (older clients read this name).' }),
  },
  { $id: 'CallError', description: "An algorithm's failure, as its callers see it." },
);

const CallResult = Type.Object(
  {
    result: Type.Optional(Type.Unknown({ description: 'The JSON value, the text, or base64 of the binary result.' })),
    metadata: Type.Ref('CallMetadata'),
  },
  { $id: 'CallResult', description: 'A successful call.' },
);

const CallFailure = Type.Object(
  { error: Type.Ref('CallError'), metadata: Type.Ref('CallMetadata') },
  { $id: 'CallFailure', description: 'The algorithm failed (HTTP 200 all the same).' },
);

const AsyncCallStatus = Type.Object(
  {
    request_id: Type.String(),
    status: Type.Union([Type.Literal('running'), Type.Literal('completed')]),
    result: Type.Optional(Type.Unknown()),
    error: Type.Optional(Type.Ref('CallError')),
    metadata: Type.Optional(Type.Ref('CallMetadata')),
  },
  { $id: 'AsyncCallStatus', description: 'An async call: running, then completed with the envelope a sync call would have answered.' },
);

export const SHARED_SCHEMAS = [
  CallMetadata,
  CallError,
  CallResult,
  CallFailure,
  AsyncCallStatus,
  ScmConfig,
  ScmTokenStatus,
  ScmDelivery,
  AlgorithmSource,
  ErrorBody,
  User,
  Organization,
  Invitation,
  ApiKey,
  Language,
  Environment,
  VersionInfo,
  Algorithm,
  Build,
  Identity,
  Commit,
  Readme,
  ClusterStatus,
];
