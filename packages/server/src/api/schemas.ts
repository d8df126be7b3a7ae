/**
 * Response and request schemas shared by routes. They feed validation, serialization and the
 * OpenAPI document; request schemas check types only, the domain checks values and rules.
 */
import { Type, type TSchema } from 'typebox';

export const ErrorBody = Type.Object(
  { error: Type.Object({ code: Type.Integer(), message: Type.String() }) },
  { $id: 'Error', description: 'Every failure: a numeric code (docs/compatibility.md §1) and a message.' },
);

export const errorResponses = (...statuses: number[]) =>
  Object.fromEntries(statuses.map((s) => [s, Type.Ref('Error')])) as Record<number, TSchema>;

/** The usual failures of an authenticated route. */
export const AUTH_ERRORS = [400, 401, 403] as const;

export const Paged = <T extends TSchema>(item: T) =>
  Type.Object({
    marker: Type.Union([Type.String(), Type.Null()]),
    next_link: Type.Union([Type.String(), Type.Null()]),
    results: Type.Array(item),
  });

export const PageQuery = Type.Object({
  limit: Type.Optional(Type.String({ description: 'Page size, 1–1000 (default 50).' })),
  marker: Type.Optional(Type.String({ description: 'The marker of the previous page.' })),
});

export const Str = Type.String();
export const OptStr = Type.Optional(Type.String());
export const OptNullableStr = Type.Optional(Type.Union([Type.String(), Type.Null()]));

export const User = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    username: Str,
    email: OptStr,
    fullname: OptStr,
    company_name: OptStr,
    company_role: OptStr,
    self_link: Str,
    resource_type: Type.Literal('user'),
  },
  { $id: 'User' },
);

export const UserInput = Type.Object({
  username: OptStr,
  email: OptNullableStr,
  fullname: OptNullableStr,
  company_name: OptNullableStr,
  company_role: OptNullableStr,
  password: OptStr,
  /** Needed with `password`, except when an admin sets another account's password. */
  current_password: OptStr,
});

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

export const OrganizationInput = Type.Object({
  org_name: OptStr,
  org_label: OptNullableStr,
  org_contact_name: OptNullableStr,
  org_email: OptNullableStr,
  org_url: OptNullableStr,
  type_id: OptStr,
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
    git_url: Type.String({ description: 'Clone/push address of the algorithm repository.' }),
    created_at: Str,
    updated_at: Str,
    self_link: Str,
    resource_type: Type.Literal('algorithm'),
  },
  { $id: 'Algorithm' },
);

const Loose = Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]);

export const AlgorithmInput = Type.Object({
  name: OptStr,
  details: Type.Optional(
    Type.Union([
      Type.Object({ label: OptNullableStr, summary: OptNullableStr, tagline: OptNullableStr }, { additionalProperties: true }),
      Type.Null(),
    ]),
  ),
  settings: Type.Optional(Loose),
  source: Type.Optional(Loose),
  version_info: Type.Optional(Loose),
  scmsCredentials: Type.Optional(Type.Unknown()),
});

const Nullable = (t: TSchema) => Type.Union([t, Type.Null()]);

export const Build = Type.Object(
  {
    build_id: Type.String({ format: 'uuid' }),
    commit_sha: Str,
    status: Type.Union([Type.Literal('queued'), Type.Literal('in-progress'), Type.Literal('succeeded'), Type.Literal('failed')]),
    trigger: Type.Union([Type.Literal('push'), Type.Literal('compile')]),
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

export const PublishInput = Type.Object(
  {
    details: Type.Optional(Loose),
    settings: Type.Optional(Loose),
    version_info: Type.Optional(Loose),
  },
  { description: 'docs/compatibility.md §3: version_info.version_type (or type) major|minor|revision|patch, default minor.' },
);

export const Identity = Type.Object(
  {
    username: Str,
    admin: Type.Boolean({ description: 'Whether the caller acts as a cluster admin (an admin key, or a session of an admin account).' }),
    credential: Type.Union([Type.Literal('session'), Type.Literal('key'), Type.Literal('call_key'), Type.Literal('admin_key')], {
      description: 'How the caller proved who it is: a signed-in session, a standard API key, the key of an algorithm call, an admin key.',
    }),
    capabilities: Type.Array(Capability, { description: 'What the credential may do (README, "Credentials and capabilities").' }),
    organizations: Type.Optional(
      Type.Array(Type.Object({ name: Str, role: Type.Union([Type.Literal('owner'), Type.Literal('member')]) }), {
        description: 'The organizations the account belongs to, by name; absent for a call key.',
      }),
    ),
    email: Type.Optional(Type.Union([Str, Type.Null()], { description: "The account's own profile; absent for a call key." })),
    fullname: OptNullableStr,
    company_name: OptNullableStr,
    company_role: OptNullableStr,
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

export const SHARED_SCHEMAS = [
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
