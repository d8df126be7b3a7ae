/**
 * Each user's authorization of a configuration (spec Authentication 6, endpoint 1): the OAuth
 * authorization-code flow (state checked, PKCE where the provider checks it), the tokens sealed
 * at rest and refreshed when the provider issues refresh tokens, revocation, and the token
 * status, which always asks the provider: a stored flag would say "authorized" after the user
 * revoked the grant at the provider.
 *
 * Login CSRF: the provider sends the browser back with a code for *its* provider account. Were
 * the state alone enough, a user could start a flow and get someone else to finish it, and the
 * victim's provider account would be bound to the starter's algohost account. So the start
 * also sets a cookie on the browser that started it, and the callback needs both.
 */
import crypto from 'node:crypto';
import type { Logger } from '../logger.js';
import { type Clock, isoNow } from '../clock.js';
import { DomainError, Errors, invalid } from '../errors.js';
import { refuseCallKey, requireAccountCredential, type Principal } from '../accounts/principal.js';
import type { AccountStore } from '../accounts/ports.js';
import type { ScmConfigService } from './config-service.js';
import { INTERNAL_SCM_ID, type ScmAuthorization, type ScmConfig, type ScmTokenStatus } from './model.js';
import type { ScmStore, TokenSet } from './ports.js';
import type { SecretBox } from '../../lib/secret-box.js';

/** How long a started authorization waits for the browser to come back. */
const STATE_TTL_MS = 10 * 60 * 1000;
/** A token whose expiry is this close is refreshed before use. */
const EXPIRY_MARGIN_MS = 60 * 1000;
/** Where the browser goes back to when the UI names no page: the account page's settings. */
const DEFAULT_RETURN_TO = '/account/settings';

export interface AuthorizationStart {
  /** Where the UI sends the browser (the provider's consent page). */
  authorizeUrl: string;
  /** Set as an HttpOnly cookie on the browser; the callback needs it back. */
  browserNonce: string;
  expiresAt: Date;
}

export interface AuthorizationServiceDeps {
  store: ScmStore;
  configs: ScmConfigService;
  accounts: AccountStore;
  secrets: SecretBox;
  clock: Clock;
  /** The OAuth redirect URI registered at every provider: `{public URL}/v1/scms/oauth/callback`. */
  redirectUri: string;
  log: Logger;
}

export class AuthorizationService {
  private readonly store: ScmStore;
  private readonly configs: ScmConfigService;
  private readonly accounts: AccountStore;
  private readonly secrets: SecretBox;
  private readonly clock: Clock;
  readonly redirectUri: string;
  private readonly log: Logger;

  constructor(deps: AuthorizationServiceDeps) {
    this.store = deps.store;
    this.configs = deps.configs;
    this.accounts = deps.accounts;
    this.secrets = deps.secrets;
    this.clock = deps.clock;
    this.redirectUri = deps.redirectUri;
    this.log = deps.log;
  }

  /** Starts the flow for the caller's own account. `returnTo`: a path of this service (default /account). */
  async start(p: Principal, configId: string, returnTo: unknown): Promise<AuthorizationStart> {
    requireAccountCredential(p, 'Authorizing an SCM configuration');
    const config = await this.configs.requireEnabled(configId);
    const provider = this.configs.provider(config);
    const back = returnPath(returnTo);
    const state = token();
    const browserNonce = token();
    const verifier = provider.pkce ? token() : undefined;
    const now = this.clock().getTime();
    await this.store.deleteExpiredOAuthStates(new Date(now).toISOString());
    const expiresAt = new Date(now + STATE_TTL_MS);
    await this.store.insertOAuthState({
      stateHash: sha256(state),
      browserHash: sha256(browserNonce),
      accountId: p.account.id,
      configId: config.id,
      codeVerifier: verifier ? this.secrets.seal(verifier) : null,
      returnTo: back,
      expiresAt: expiresAt.toISOString(),
    });
    const authorizeUrl = provider.authorizeUrl(await this.configs.endpoint(config), {
      state,
      redirectUri: this.redirectUri,
      codeChallenge: verifier && crypto.createHash('sha256').update(verifier).digest('base64url'),
    });
    return { authorizeUrl, browserNonce, expiresAt };
  }

  /**
   * The provider sent the browser back. Returns where to send it next: the page the flow
   * started from, with `scm`, `scm_status` (authorized or error) and `scm_error` in its query.
   * Throws only when the state names no flow of this browser (then there is no page to go to).
   */
  async callback(
    q: { state?: unknown; code?: unknown; error?: unknown; errorDescription?: unknown },
    browserNonce: string | undefined,
  ): Promise<string> {
    // The route's schema requires a state of 1–200 characters.
    const started = typeof q.state === 'string' ? await this.store.takeOAuthState(sha256(q.state)) : undefined;
    if (!started) throw Errors.scmOAuthStateUnknown({});
    if (!browserNonce || !crypto.timingSafeEqual(Buffer.from(sha256(browserNonce)), Buffer.from(started.browserHash))) {
      throw Errors.scmOAuthOtherBrowser({});
    }
    const back = (status: 'authorized' | 'error', error?: string) => {
      const url = new URL(started.returnTo, 'http://x');
      url.searchParams.set('scm', started.configId);
      url.searchParams.set('scm_status', status);
      if (error) url.searchParams.set('scm_error', error.slice(0, 300));
      return `${url.pathname}${url.search}`;
    };
    if (Date.parse(started.expiresAt) < this.clock().getTime())
      return back('error', 'the authorization took longer than 10 minutes; start it again');
    if (q.error !== undefined) {
      const detail = typeof q.errorDescription === 'string' ? `: ${q.errorDescription}` : '';
      return back('error', `the provider refused (${String(q.error).slice(0, 100)}${detail})`);
    }
    if (typeof q.code !== 'string' || !q.code || q.code.length > 2000) return back('error', 'the provider sent no authorization code');
    try {
      const config = await this.configs.requireEnabled(started.configId);
      const provider = this.configs.provider(config);
      const endpoint = await this.configs.endpoint(config);
      const tokens = await provider.exchangeCode(endpoint, {
        code: q.code,
        redirectUri: this.redirectUri,
        codeVerifier: started.codeVerifier === null ? undefined : this.secrets.open(started.codeVerifier),
      });
      const { username } = await provider.currentUser(endpoint, tokens.accessToken);
      await this.save(started.accountId, config, tokens, username);
      return back('authorized');
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      this.log.warn({ err, config: started.configId }, 'SCM authorization failed at the provider');
      return back('error', err.message);
    }
  }

  /** Endpoint 1: asks the provider whether it accepts the caller's token, and which organizations it sees. */
  async status(p: Principal, configId: string): Promise<ScmTokenStatus> {
    refuseCallKey(p, 'Checking an SCM authorization');
    if (configId === INTERNAL_SCM_ID) {
      // The internal SCM needs no authorization: the account is its own user there.
      const memberships = p.account.kind === 'user' ? await this.accounts.membershipsOf(p.account.id) : [];
      return {
        scmUsername: p.account.name,
        authorizationStatus: 'authorized',
        organizations: memberships.map((m) => ({ name: m.organization.name, accessLevel: 'MEMBER' as const })),
      };
    }
    const config = await this.configs.require(configId);
    const stored = await this.store.findAuthorization(p.account.id, config.id);
    if (!stored) return { scmUsername: '', authorizationStatus: 'unauthorized', organizations: [] };
    const provider = this.configs.provider(config);
    const endpoint = await this.configs.endpoint(config);
    try {
      return await this.withToken(p.account.id, config, async (token) => {
        const { username } = await provider.currentUser(endpoint, token);
        const organizations = await provider.organizations(endpoint, token, username);
        return { scmUsername: username, authorizationStatus: 'authorized' as const, organizations };
      });
    } catch (err) {
      if (err instanceof DomainError && err.is(Errors.scmNotAuthorized)) {
        return { scmUsername: stored.scmUsername, authorizationStatus: 'unauthorized', organizations: [] };
      }
      throw err;
    }
  }

  /** Forgets the caller's tokens, revoking them at the provider where it can. */
  async revoke(p: Principal, configId: string): Promise<void> {
    requireAccountCredential(p, 'Revoking an SCM authorization');
    const config = await this.configs.require(configId);
    const stored = await this.store.findAuthorization(p.account.id, config.id);
    if (!stored) throw invalid(`this account has not authorized SCM configuration "${configId}"`);
    await this.store.deleteAuthorization(p.account.id, config.id);
    try {
      const token = stored.refreshToken ?? stored.accessToken;
      await this.configs.provider(config).revoke(await this.configs.endpoint(config), this.secrets.open(token));
    } catch (err) {
      // Forgotten here either way; the user can also remove the grant in the provider's settings.
      this.log.warn({ err, config: config.id }, 'revoking an SCM grant at the provider failed');
    }
  }

  /**
   * Runs `use` with a working access token of the account (and its stored authorization):
   * refreshed first when it is about to expire, and once more when the provider refuses it.
   * Throws scmNotAuthorized when there is none or the provider refuses it still. `use` may run
   * twice, so it must not make anything at the provider before the token is known to work.
   */
  async withToken<T>(accountId: string, config: ScmConfig, use: (token: string, username: string) => Promise<T>): Promise<T> {
    let stored = await this.current(accountId, config);
    try {
      return await use(this.secrets.open(stored.accessToken), stored.scmUsername);
    } catch (err) {
      if (!(err instanceof DomainError && err.is(Errors.scmTokenRejected))) throw err;
      if (stored.refreshToken === null) throw this.rejected(config);
    }
    stored = await this.refresh(config, stored);
    try {
      return await use(this.secrets.open(stored.accessToken), stored.scmUsername);
    } catch (err) {
      if (err instanceof DomainError && err.is(Errors.scmTokenRejected)) throw this.rejected(config);
      throw err;
    }
  }

  /** The account's access token and provider user name, refreshed first when it is about to expire. */
  async accessToken(accountId: string, config: ScmConfig): Promise<{ token: string; username: string }> {
    const stored = await this.current(accountId, config);
    return { token: this.secrets.open(stored.accessToken), username: stored.scmUsername };
  }

  private async current(accountId: string, config: ScmConfig): Promise<ScmAuthorization> {
    const stored = await this.store.findAuthorization(accountId, config.id);
    if (!stored) throw Errors.scmNotAuthorized({ id: config.id, name: config.name, why: 'it was never authorized, or was revoked' });
    if (stored.refreshToken !== null && stored.expiresAt && Date.parse(stored.expiresAt) - EXPIRY_MARGIN_MS < this.clock().getTime()) {
      return this.refresh(config, stored);
    }
    return stored;
  }

  private rejected(config: ScmConfig): DomainError {
    return Errors.scmNotAuthorized({
      id: config.id,
      name: config.name,
      why: `${config.provider} no longer accepts the token (revoked or expired)`,
    });
  }

  private async refresh(config: ScmConfig, stored: ScmAuthorization): Promise<ScmAuthorization> {
    try {
      const provider = this.configs.provider(config);
      const tokens = await provider.refresh(await this.configs.endpoint(config), this.secrets.open(stored.refreshToken!));
      return await this.save(stored.accountId, config, tokens, stored.scmUsername, stored);
    } catch (err) {
      if (err instanceof DomainError && (err.is(Errors.scmTokenRejected) || err.is(Errors.scmOAuthFailed))) throw this.rejected(config);
      throw err;
    }
  }

  private async save(
    accountId: string,
    config: ScmConfig,
    tokens: TokenSet,
    username: string,
    before?: ScmAuthorization,
  ): Promise<ScmAuthorization> {
    const now = this.clock();
    const refresh = tokens.refreshToken ?? null;
    const authorization: ScmAuthorization = {
      accountId,
      configId: config.id,
      accessToken: this.secrets.seal(tokens.accessToken),
      // A provider that does not rotate refresh tokens keeps the one it issued first.
      refreshToken: refresh !== null ? this.secrets.seal(refresh) : (before?.refreshToken ?? null),
      expiresAt: tokens.expiresIn ? new Date(now.getTime() + tokens.expiresIn * 1000).toISOString() : null,
      scmUsername: username,
      createdAt: before?.createdAt ?? isoNow(this.clock),
      updatedAt: now.toISOString(),
    };
    await this.store.saveAuthorization(authorization);
    return authorization;
  }
}

const token = () => crypto.randomBytes(32).toString('base64url');
const sha256 = (s: string) => crypto.createHash('sha256').update(s).digest('hex');

/** A path of this service only (never another host: no open redirect). */
function returnPath(value: unknown): string {
  if (value === undefined || value === null || value === '') return DEFAULT_RETURN_TO;
  if (typeof value !== 'string' || value.length > 500 || !/^\/(?![/\\])[\x21-\x7e]*$/.test(value)) {
    throw invalid('return_to must be a path of this service, starting with a single "/" (for example /account)');
  }
  return value;
}
