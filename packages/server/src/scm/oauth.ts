/**
 * The OAuth token exchange every provider shares (RFC 6749): the authorization-code grant
 * (§4.1.3) and the refresh grant (§6) against the provider's token endpoint, and its answer
 * turned into tokens or a refusal.
 */
import { DomainError, Errors } from '../domain/errors.js';
import type { ProviderEndpoint, ScmProvider } from '../domain/scm/ports.js';
import { basic, providerFetch } from './http.js';

/**
 * How the client proves itself to the token endpoint: its id and secret in the form (GitHub,
 * GitLab, Gitea), or in HTTP Basic (Bitbucket, which also takes no redirect_uri, as the
 * consent URL it was sent to names none).
 */
type ClientAuthentication = 'form' | 'basic';

export function oauthTokenExchange(
  provider: string,
  tokenUrl: (e: ProviderEndpoint) => string,
  client: ClientAuthentication = 'form',
): Pick<ScmProvider, 'exchangeCode' | 'refresh'> {
  const credentials = (e: ProviderEndpoint): Record<string, string> =>
    client === 'form' ? { client_id: e.clientId, client_secret: e.clientSecret } : {};
  const authorization = (e: ProviderEndpoint) => (client === 'basic' ? basic(e.clientId, e.clientSecret) : undefined);
  return {
    exchangeCode: (e, p) =>
      tokenRequest(
        provider,
        tokenUrl(e),
        {
          grant_type: 'authorization_code',
          code: p.code,
          ...(client === 'form' && { redirect_uri: p.redirectUri }),
          ...credentials(e),
          ...(p.codeVerifier ? { code_verifier: p.codeVerifier } : {}),
        },
        authorization(e),
      ),
    refresh: (e, refreshToken) =>
      tokenRequest(
        provider,
        tokenUrl(e),
        { grant_type: 'refresh_token', refresh_token: refreshToken, ...credentials(e) },
        authorization(e),
      ),
  };
}

/** The OAuth token endpoint (RFC 6749 §5): tokens, or a refusal that means the grant is gone. */
async function tokenRequest(provider: string, url: string, form: Record<string, string>, authorization?: string) {
  try {
    const res = await providerFetch<Record<string, unknown>>(provider, url, { form, authorization, accept: [400] });
    const b = res.body;
    if (res.status === 400 || typeof b !== 'object' || b === null || typeof b.access_token !== 'string') {
      // GitHub answers 200 with {"error": …}; the others 400 (invalid_grant: expired, used or revoked).
      const error = typeof b === 'object' && b !== null ? (b.error_description ?? b.error) : undefined;
      throw Errors.scmOAuthFailed(
        `${provider} refused the authorization code or refresh token${error ? `: ${String(error).slice(0, 200)}` : ''}`,
      );
    }
    return {
      accessToken: b.access_token,
      refreshToken: typeof b.refresh_token === 'string' && b.refresh_token ? b.refresh_token : null,
      expiresIn: typeof b.expires_in === 'number' && b.expires_in > 0 ? b.expires_in : null,
    };
  } catch (err) {
    if (err instanceof DomainError && err.is(Errors.scmTokenRejected))
      throw Errors.scmOAuthFailed(`${provider} refused the OAuth client: check its client id and secret`);
    throw err;
  }
}
