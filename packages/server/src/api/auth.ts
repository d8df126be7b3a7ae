/**
 * Turns the Authorization header into a Principal. Accepted forms (docs/compatibility.md §1): `Simple <key>`,
 * the bare key (the Python client and CLI send this), and `Bearer <jwt>` from POST /v1/auth/token.
 * Routes say `config: { auth: 'none' }` to skip it (template download); everything else
 * requires credentials.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type net from 'node:net';
import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify';
import { Errors, unauthenticated } from '../domain/errors.js';
import type { Principal } from '../domain/accounts/principal.js';
import type { KeyService } from '../domain/accounts/key-service.js';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
  interface FastifyContextConfig {
    auth?: 'none' | 'required';
    /**
     * Paths a wildcard route matches but does not take (it answers them as the not-found handler
     * does): left out of the `Allow` of a 405 (api/errors.ts).
     */
    notFor?: RegExp;
  }
}

/**
 * `connections` is told which connections carried an authenticated request: at the node's
 * connection cap they are kept over idle anonymous ones (api/connection-limits.ts).
 */
export function installAuth(app: FastifyInstance, keys: KeyService, connections?: { markAuthenticated(socket: net.Socket): void }): void {
  app.decorateRequest('principal', null);
  // Callback style, not async: a key seen within the cache's lifetime (nearly every request)
  // is resolved without a promise and the request goes on in the same tick.
  const authenticateRequest: onRequestHookHandler = (req, _reply, done) => {
    const cached = cachedKeyOf(req.headers, keys);
    if (cached) {
      req.principal = cached;
      connections?.markAuthenticated(req.socket);
      return done();
    }
    authenticate(req, keys).then((principal) => {
      req.principal = principal;
      connections?.markAuthenticated(req.socket);
      done();
    }, done);
  };
  // Put first on each route that needs credentials, decided once when the route is added (not
  // per request from `req.routeOptions`, which builds a new object on every read). Unknown
  // routes are no route: they reach the not-found handler without an auth check.
  app.addHook('onRoute', (route) => {
    if (route.config?.auth === 'none') return;
    const own = route.onRequest === undefined ? [] : Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest];
    // A HEAD route made from a GET route arrives with the GET route's hooks, this one included.
    if (!own.includes(authenticateRequest)) route.onRequest = [authenticateRequest, ...own];
  });
}

/** The principal of a `Simple <key>` or bare-key header that the key cache answers at once. */
export function cachedKeyOf(headers: IncomingHttpHeaders, keys: KeyService): Principal | undefined {
  const secret = simpleKeyOf(headers);
  return secret === undefined ? undefined : keys.cachedKey(secret);
}

/** The API key of a `Simple <key>` or bare-key Authorization header; undefined for none or another scheme. */
export function simpleKeyOf(headers: IncomingHttpHeaders): string | undefined {
  const header = headers.authorization?.trim();
  if (!header) return undefined;
  const space = header.indexOf(' ');
  if (space < 0) return header;
  if (header.slice(0, space).toLowerCase() !== 'simple') return undefined;
  return header.slice(space + 1).trim();
}

/** The principal of a request's credential, for a route that authenticates on its own terms (`/metrics`). */
export function authenticateRequest(req: FastifyRequest, keys: KeyService): Promise<Principal> {
  return authenticate(req, keys);
}

async function authenticate(req: FastifyRequest, keys: KeyService): Promise<Principal> {
  const header = req.headers.authorization?.trim();
  if (!header) {
    throw Errors.authorizationRequired('authorization required: send "Authorization: Simple <API key>"');
  }
  const space = header.indexOf(' ');
  if (space < 0) return keys.authenticateKey(header);
  const scheme = header.slice(0, space).toLowerCase();
  const value = header.slice(space + 1).trim();
  if (scheme === 'simple') return keys.authenticateKey(value);
  if (scheme === 'bearer') return keys.authenticateSession(value);
  throw unauthenticated(`unsupported Authorization scheme "${header.slice(0, space)}": use Simple <API key> or Bearer <token>`);
}

/** The principal of an authenticated route (the hook guarantees it). */
export function principalOf(req: FastifyRequest): Principal {
  if (!req.principal) throw unauthenticated('authorization required');
  return req.principal;
}
