/**
 * Cross-origin requests, so that web pages on other origins (a dashboard, the typed client in a
 * browser) can use the API. Off unless ALGOHOST_CORS_ORIGINS names the origins (or `*`). Keys
 * travel in the Authorization header, never in cookies, so credentials mode is not needed.
 * @fastify/cors sets the headers and answers preflights; a preflight from an origin not
 * allowed is refused here with a 403 that names the setting.
 */
import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';
import { forbidden } from '../domain/errors.js';

const ALLOWED_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];
const ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'Accept', 'X-Request-Id'];
/** Headers a page may read: the error message and the data type of hosted data answers. */
const EXPOSED_HEADERS = ['X-Error-Message', 'X-Data-Type', 'Retry-After', 'Content-Length'];

/** Registers before authentication, so preflights (sent without a key) are answered. */
export async function installCors(app: FastifyInstance, origins: string[]): Promise<void> {
  if (origins.length === 0) return;
  const any = origins.includes('*');
  const allowed = new Set(origins.map((o) => o.replace(/\/+$/, '').toLowerCase()));
  const isAllowed = (origin: string | undefined): origin is string => !!origin && (any || allowed.has(origin.toLowerCase()));

  app.addHook('onRequest', async (req) => {
    if (req.method !== 'OPTIONS' || isAllowed(req.headers.origin)) return;
    throw forbidden(`origin ${req.headers.origin ?? '(none)'} may not call this API (ALGOHOST_CORS_ORIGINS)`);
  });
  await app.register(cors, {
    // The request's own origin when allowed (with Vary: Origin), `*` for any; none otherwise.
    origin: any ? '*' : (origin, cb) => cb(null, isAllowed(origin) ? origin : false),
    methods: ALLOWED_METHODS,
    allowedHeaders: ALLOWED_HEADERS,
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: 600,
    // Any OPTIONS from an allowed origin is answered as a preflight, as before this library.
    strictPreflight: false,
  });
}
