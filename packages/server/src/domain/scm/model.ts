/**
 * External source control (spec: Resources "Source", "SCM configuration", "SCM token status";
 * Authentication 6). A cluster admin sets up a configuration per provider installation; each
 * user authorizes it once (OAuth); algorithms created with `source` then keep their source in a
 * repository at the provider, mirrored into the algorithm's own repository for builds.
 */

/** The provider kinds an adapter exists for, besides the internal SCM. */
export const SCM_PROVIDERS = ['github', 'gitlab', 'bitbucket', 'gitea'] as const;
export type ScmProviderKind = (typeof SCM_PROVIDERS)[number];

/** The id of the always-present internal SCM (compat §6). */
export const INTERNAL_SCM_ID = 'internal';

export interface ScmUrls {
  /** Where people browse the provider, and where its OAuth pages are. */
  web: string;
  /** The REST API's base. */
  api: string;
  /** The SSH address of the provider's Git service (shown, never used by the service). */
  ssh: string;
}

/** One external configuration, as stored (the client secret sealed with the cluster key). */
export interface ScmConfig {
  id: string;
  /** The provider's address ("github.com", "gitea.example.org"). */
  name: string;
  provider: ScmProviderKind;
  isDefault: boolean;
  enabled: boolean;
  oauthClientId: string;
  /** Sealed (SecretBox); opened only to talk to the provider. */
  oauthClientSecret: string;
  urls: ScmUrls;
  createdAt: string;
  updatedAt: string;
}

/** What the API shows of a configuration: the internal SCM or an external one, never a secret. */
export interface ScmConfigView {
  id: string;
  name: string;
  provider: ScmProviderKind | 'internal';
  isDefault: boolean;
  enabled: boolean;
  /** Absent for the internal SCM. */
  oauthClientId?: string;
  urls: { web: string; api: string; ssh?: string };
}

/** A user's OAuth tokens for one configuration (sealed at rest). */
export interface ScmAuthorization {
  accountId: string;
  configId: string;
  accessToken: string;
  refreshToken: string | null;
  /** When the access token stops working, if the provider said; ISO 8601. */
  expiresAt: string | null;
  /** The provider account the tokens act as, as last seen. */
  scmUsername: string;
  createdAt: string;
  updatedAt: string;
}

/** A started authorization, waiting for the provider to send the browser back. */
export interface OAuthState {
  /** SHA-256 of the `state` parameter (the parameter itself is never stored). */
  stateHash: string;
  /** SHA-256 of the cookie set on the browser that started it (login CSRF: see AuthorizationService). */
  browserHash: string;
  accountId: string;
  configId: string;
  /** Sealed PKCE code verifier, or null for a provider without PKCE. */
  codeVerifier: string | null;
  /** A path of this service to send the browser back to. */
  returnTo: string;
  expiresAt: string;
}

/** The last webhook delivery (or sync) of an externally hosted algorithm. */
export interface SourceDelivery {
  at: string;
  /** `webhook` or `sync`. */
  via: 'webhook' | 'sync';
  commitSha: string | null;
  /** What came of it, one line: "build <id> queued", "up to date", the refusal… */
  result: string;
}

/** An algorithm whose source lives at a provider. */
export interface ExternalSource {
  algorithmId: string;
  configId: string;
  repositoryOwner: string;
  repositoryName: string;
  httpsUrl: string;
  sshUrl: string;
  webUrl: string;
  /** The provider's id of the webhook algohost registered. */
  webhookId: string;
  /** Sealed; the provider signs deliveries with it. */
  webhookSecret: string;
  /** The account whose authorization fetches the source (the one that created the algorithm). */
  accountId: string | null;
  lastDelivery: SourceDelivery | null;
  createdAt: string;
}

/** What an access level means: `MEMBER` (spec) = a member who may create repositories there. */
export type ScmAccessLevel = 'MEMBER' | 'READ';

export interface ScmTokenStatus {
  scmUsername: string;
  authorizationStatus: 'authorized' | 'unauthorized';
  organizations: { name: string; accessLevel: ScmAccessLevel }[];
}
