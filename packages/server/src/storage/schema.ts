/**
 * Table shapes shared by the SQLite and PostgreSQL stores. Portable column types only:
 * text for ids, timestamps (ISO 8601 UTC with milliseconds) and JSON; integer 0/1 for flags.
 */
export interface AccountsTable {
  id: string;
  name: string;
  name_key: string; // lower-cased name: names are unique regardless of case
  kind: 'user' | 'organization';
  email: string | null;
  fullname: string | null;
  company_name: string | null;
  company_role: string | null;
  password_hash: string | null;
  is_admin: number;
  org_label: string | null;
  org_contact_name: string | null;
  org_url: string | null;
  org_type_id: string | null;
  created_at: string;
  updated_at: string;
}

export interface MembershipsTable {
  organization_id: string;
  user_id: string;
  role: 'owner' | 'member';
  created_at: string;
}

/** A pending invitation: the user becomes a member only by accepting it. */
export interface InvitationsTable {
  organization_id: string;
  user_id: string;
  role: 'owner' | 'member';
  invited_by: string | null;
  created_at: string;
}

export interface ApiKeysTable {
  id: string;
  account_id: string;
  kind: 'standard' | 'admin';
  capabilities: string; // JSON array
  key_hash: string;
  key_prefix: string;
  description: string | null;
  created_at: string;
}

export interface EnvironmentsTable {
  name: string;
  id: string;
  created_at: string;
}

export interface AlgorithmsTable {
  id: string;
  owner_id: string;
  name: string;
  name_key: string;
  label: string | null;
  summary: string | null;
  tagline: string | null;
  algorithm_callability: string;
  source_visibility: string;
  license: string;
  royalty_microcredits: number;
  network_access: string;
  pipeline_enabled: number;
  insights_enabled: number;
  environment_name: string;
  created_at: string;
  updated_at: string;
}

export interface BuildsTable {
  id: string;
  algorithm_id: string;
  commit_sha: string;
  environment_name: string;
  status: 'queued' | 'in-progress' | 'succeeded' | 'failed';
  trigger: string;
  attempt: number;
  error: string | null;
  /** Where the artifact is, relative to the artifact store; set when succeeded. */
  artifact: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
}

export interface VersionsTable {
  id: string;
  algorithm_id: string;
  build_id: string;
  commit_sha: string;
  environment_name: string;
  artifact: string;
  semantic_version: string;
  major: number;
  minor: number;
  patch: number;
  sort_key: string;
  algorithm_callability: string;
  insights_enabled: number;
  release_notes: string | null;
  sample_input: string | null;
  sample_output: string | null;
  request_fingerprint: string;
  published_by: string;
  published_at: string;
}

export interface AsyncRequestsTable {
  id: string;
  account_id: string;
  status: string;
  envelope: string | null;
  created_at: string;
  expires_at: string;
}

export interface ClusterSettingsTable {
  key: string;
  value: string;
}

export interface DataFoldersTable {
  id: string;
  space: 'account' | 'algo' | 'session';
  space_id: string;
  account_id: string;
  path: string;
  parent: string;
  name: string;
  acl_read: string | null; // JSON array
  created_at: string;
  updated_at: string;
}

export interface DataFilesTable {
  space: 'account' | 'algo' | 'session';
  space_id: string;
  folder: string;
  name: string;
  account_id: string;
  /** bigint: PostgreSQL returns it as a string. */
  size: number | string;
  blob_key: string;
  last_modified: string;
}

export interface DataReservationsTable {
  id: string;
  account_id: string;
  /** bigint: PostgreSQL returns it as a string. */
  bytes: number | string;
  updated_at: string;
}

export interface KafkaClustersTable {
  id: string;
  name: string;
  name_key: string;
  bootstrap_servers: string; // JSON array
  tls: number;
  tls_ca: string | null;
  sasl_mechanism: string | null;
  sasl_username: string | null;
  sasl_password: string | null;
  created_at: string;
}

export interface EventFlowsTable {
  id: string;
  algorithm_id: string;
  kind: string;
  role: string;
  cluster_id: string | null;
  topic: string | null;
  source_uri: string | null;
  credentials_kind: string | null;
  credentials_id: string | null;
  credentials_secret: string | null;
  timeout_s: number | null;
  enabled: number;
  version: string | null;
  positioned: number;
  created_by: string | null;
  created_at: string;
  updated_at: string;
}

export interface EventDeliveriesTable {
  id: string;
  flow_id: string;
  algorithm_id: string;
  source: string;
  attempts: number;
  outcome: string;
  error: string | null;
  dead_letter: string | null;
  request_id: string | null;
  latency_ms: number;
  created_at: string;
}

/** Tokens sealed with the cluster key. */
export interface ScmAuthorizationsTable {
  account_id: string;
  config_id: string;
  access_token: string;
  refresh_token: string | null;
  expires_at: string | null;
  scm_username: string;
  created_at: string;
  updated_at: string;
}

export interface ScmOAuthStatesTable {
  state_hash: string;
  browser_hash: string;
  account_id: string;
  config_id: string;
  code_verifier: string | null;
  return_to: string;
  expires_at: string;
}

export interface AlgorithmSourcesTable {
  algorithm_id: string;
  config_id: string;
  repository_owner: string;
  repository_name: string;
  https_url: string;
  ssh_url: string;
  web_url: string;
  webhook_id: string;
  webhook_secret: string;
  account_id: string | null;
  last_delivery: string | null; // JSON
  created_at: string;
}

export interface ScmConfigsTable {
  id: string;
  name: string;
  provider: 'github' | 'gitlab' | 'bitbucket' | 'gitea';
  is_default: number;
  enabled: number;
  oauth_client_id: string;
  /** Sealed with the cluster key. */
  oauth_client_secret: string;
  web_url: string;
  api_url: string;
  ssh_url: string;
  created_at: string;
  updated_at: string;
}

export interface ScmWebhookDeliveriesTable {
  algorithm_id: string;
  delivery_id: string;
  received_at: string;
}

export interface AuditLogTable {
  id: string;
  at: string;
  actor: string | null;
  actor_id: string | null;
  credential: string | null;
  action: string;
  target: string;
  status: number;
  address: string | null;
  details: string;
}

export interface LeasesTable {
  name: string;
  holder: string;
  expires_at: string;
}

export interface InsightsConnectionTable {
  slot: number;
  cluster_id: string;
  topic: string;
  created_by: string | null;
  created_at: string;
}

export interface Database {
  accounts: AccountsTable;
  memberships: MembershipsTable;
  invitations: InvitationsTable;
  api_keys: ApiKeysTable;
  environments: EnvironmentsTable;
  algorithms: AlgorithmsTable;
  cluster_settings: ClusterSettingsTable;
  builds: BuildsTable;
  versions: VersionsTable;
  async_requests: AsyncRequestsTable;
  data_folders: DataFoldersTable;
  data_files: DataFilesTable;
  data_reservations: DataReservationsTable;
  kafka_clusters: KafkaClustersTable;
  event_flows: EventFlowsTable;
  event_deliveries: EventDeliveriesTable;
  scm_configs: ScmConfigsTable;
  scm_authorizations: ScmAuthorizationsTable;
  scm_oauth_states: ScmOAuthStatesTable;
  algorithm_sources: AlgorithmSourcesTable;
  scm_webhook_deliveries: ScmWebhookDeliveriesTable;
  audit_log: AuditLogTable;
  leases: LeasesTable;
  insights_connection: InsightsConnectionTable;
  blob_index_digests: BlobIndexDigestsTable;
}

/** The SHA-256 of an index object a node wrote to the blob store (cluster/artifact-store.ts), by its key there. */
export interface BlobIndexDigestsTable {
  key: string;
  sha256: string;
  recorded_at: string;
}
