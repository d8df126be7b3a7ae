import type { Principal } from '../accounts/principal.js';
import type { Algorithm } from '../algorithms/model.js';
import type {
  ExternalSource,
  OAuthState,
  ScmAccessLevel,
  ScmAuthorization,
  ScmConfig,
  ScmConfigView,
  ScmProviderKind,
  SourceDelivery,
} from './model.js';

export interface ScmStore {
  listConfigs(): Promise<ScmConfig[]>;
  findConfig(id: string): Promise<ScmConfig | undefined>;
  insertConfig(config: ScmConfig): Promise<void>;
  /** Saves the configuration; with `isDefault` set, clears the flag of every other one in the same transaction. */
  updateConfig(config: ScmConfig): Promise<void>;
  /** Returns false when no such configuration exists. Throws DomainError conflict when algorithms still use it. */
  deleteConfig(id: string): Promise<boolean>;
  /** How many algorithms keep their source at the configuration. */
  countSources(configId: string): Promise<number>;

  findAuthorization(accountId: string, configId: string): Promise<ScmAuthorization | undefined>;
  saveAuthorization(authorization: ScmAuthorization): Promise<void>;
  deleteAuthorization(accountId: string, configId: string): Promise<boolean>;

  insertOAuthState(state: OAuthState): Promise<void>;
  /** Removes and returns the state (single use); undefined when unknown. */
  takeOAuthState(stateHash: string): Promise<OAuthState | undefined>;
  /** Drops started authorizations that expired before `now`. */
  deleteExpiredOAuthStates(now: string): Promise<void>;

  insertSource(source: ExternalSource): Promise<void>;
  findSource(algorithmId: string): Promise<ExternalSource | undefined>;
  recordDelivery(algorithmId: string, delivery: SourceDelivery): Promise<void>;
  /**
   * Records a webhook delivery id of the algorithm; false when it was recorded before (a replay).
   * Ids older than `forgetBefore` are dropped, and all but the newest `keepAtMost`.
   */
  rememberDelivery(algorithmId: string, deliveryId: string, at: string, forgetBefore: string, keepAtMost: number): Promise<boolean>;
}

/** Tokens an OAuth token endpoint answered. */
export interface TokenSet {
  accessToken: string;
  refreshToken: string | null;
  /** Seconds the access token lives, when the provider says. */
  expiresIn: number | null;
}

/** What an adapter needs to know of a configuration: its addresses and (opened) OAuth client. */
export interface ProviderEndpoint {
  urls: { web: string; api: string };
  clientId: string;
  clientSecret: string;
}

/** A repository at the provider. */
export interface ProviderRepository {
  httpsUrl: string;
  sshUrl: string;
  webUrl: string;
}

/** A push a webhook announced: the branch and the commit it now points at. */
export interface PushNotice {
  deliveryId: string;
  branch: string;
  commitSha: string;
}

/** Why a delivery was refused: `unsigned`/`bad_signature` (401), anything else unusable (400). */
export type WebhookRefusal = { refused: 'unsigned' | 'bad_signature' | 'not_a_push' | 'malformed'; message: string };

/**
 * One provider kind's REST API and OAuth endpoints. Every method that takes a token answers
 * `unauthorized` (ProviderUnauthorized) when the provider no longer accepts it; other provider
 * failures are DomainErrors of kind `unavailable` naming the provider's answer.
 */
export interface ScmProvider {
  readonly kind: ScmProviderKind;
  /** Whether the provider checks PKCE (S256) in its authorization-code flow. */
  readonly pkce: boolean;
  /** The API base when the admin gives none, from the web address. */
  defaultApiUrl(web: URL): string;
  authorizeUrl(e: ProviderEndpoint, p: { state: string; redirectUri: string; codeChallenge?: string }): string;
  exchangeCode(e: ProviderEndpoint, p: { code: string; redirectUri: string; codeVerifier?: string }): Promise<TokenSet>;
  refresh(e: ProviderEndpoint, refreshToken: string): Promise<TokenSet>;
  /** Revokes the grant at the provider where it has an endpoint for that; otherwise does nothing. */
  revoke(e: ProviderEndpoint, token: string): Promise<void>;
  /** The provider account of the token. */
  currentUser(e: ProviderEndpoint, token: string): Promise<{ username: string }>;
  /** The organizations (groups, workspaces) the user belongs to, with what the user may do there. */
  organizations(e: ProviderEndpoint, token: string, username: string): Promise<{ name: string; accessLevel: ScmAccessLevel }[]>;
  repositoryExists(e: ProviderEndpoint, token: string, owner: string, name: string): Promise<boolean>;
  /** Creates an empty private repository; `owner` is the user itself or one of its organizations. */
  createRepository(
    e: ProviderEndpoint,
    token: string,
    p: { owner: string; name: string; ownerIsUser: boolean; description: string },
  ): Promise<ProviderRepository>;
  deleteRepository(e: ProviderEndpoint, token: string, owner: string, name: string): Promise<void>;
  /** Registers a push webhook signed with `secret`; returns the provider's id of it. */
  createWebhook(e: ProviderEndpoint, token: string, p: { owner: string; name: string; url: string; secret: string }): Promise<string>;
  /** The commit a branch points at, or undefined when the branch does not exist. */
  branchHead(e: ProviderEndpoint, token: string, owner: string, name: string, branch: string): Promise<string | undefined>;
  /** The HTTP Basic credentials Git uses with the token. */
  gitCredentials(token: string, username: string): { username: string; password: string };
  /** Checks a delivery's signature with the secret and reads the push out of it. */
  readWebhook(headers: Record<string, string | string[] | undefined>, body: Buffer, secret: string): PushNotice | WebhookRefusal;
}

/** Git traffic between an algorithm's own repository and its repository at a provider. */
export interface SourceMirror {
  /** Pushes the repository's default branch to `url` (credentials sent as a header, never in the URL). */
  pushTo(algorithmId: string, url: string, auth: { username: string; password: string }): Promise<void>;
  /**
   * Fetches the branch from `url` and points the repository's default branch at the tip that
   * came (whatever a webhook announced: the provider's branch now is the only source of a new
   * main). The fetch is bounded like a push to the internal SCM (bytes received, repository and
   * account size limits, object checks) before anything lands; refused, it keeps nothing and
   * throws `scmSourceTooLarge`.
   */
  fetchFrom(
    into: { algorithmId: string; ownerId: string; ownerName: string; name: string },
    url: string,
    auth: { username: string; password: string },
    branch: string,
  ): Promise<FetchedBranch>;
}

/** The tip of the provider's branch as fetched, and whether the default branch here moved to it. */
export interface FetchedBranch {
  sha: string;
  moved: boolean;
}

/** Where an externally hosted algorithm's source lives, as the algorithm object shows it (`source`). */
export interface AlgorithmSource {
  repositoryName: string;
  repositoryOwner: string;
  httpsUrl: string;
  sshUrl: string;
  webUrl: string;
  scm: ScmConfigView;
  lastDelivery: SourceDelivery | null;
}

/** A checked plan to host a new algorithm's source at a provider; nothing exists there yet. */
export interface ExternalSourcePlan {
  /** The first commit's message (source.initial_commit_message). */
  commitMessage: string;
  /**
   * Once the algorithm's own repository holds the template commit: creates the repository at
   * the provider, pushes that commit, registers the webhook and records the source. On failure
   * it removes what it made at the provider (or says in the error what is left there).
   */
  establish(algorithm: Algorithm): Promise<AlgorithmSource>;
}

/** External SCM hosting, as algorithm creation and reads need it (ExternalSourceService implements it; AlgorithmService uses it). */
export interface ExternalSourcing {
  /** Checks a create request's `source` (configuration, authorization, owner, name) before anything is made. */
  plan(p: Principal, source: Record<string, unknown>): Promise<ExternalSourcePlan>;
  sourceOf(algorithmId: string): Promise<AlgorithmSource | undefined>;
}
