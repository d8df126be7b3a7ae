/**
 * Cross-origin requests, so that web pages on other origins (a dashboard, the typed client in a
 * browser) can use the API. Off unless ALGOHOST_CORS_ORIGINS names the origins (or `*`). Keys
 * travel in the Authorization header, never in cookies, so credentials mode is not needed.
 */
import type { FastifyInstance } from 'fastify';

const ALLOWED_METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE';
const ALLOWED_HEADERS = 'Authorization, Content-Type, Accept, X-Request-Id';
/** Headers a page may read: the error message and the data type of hosted data answers. */
const EXPOSED_HEADERS = 'X-Error-Message, X-Data-Type, Retry-After, Content-Length';

export function installCors(app: FastifyInstance, origins: string[]): void {
  if (origins.length === 0) return;
  const any = origins.includes('*');
  const allowed = new Set(origins.map((o) => o.replace(/\/+$/, '').toLowerCase()));

  // On the raw response: also covers hijacked replies (build log streams) and error answers.
  app.addHook('onRequest', async (req, reply) => {
    const origin = req.headers.origin;
    if (!origin || !(any || allowed.has(origin.toLowerCase()))) return;
    reply.raw.setHeader('access-control-allow-origin', any ? '*' : origin);
    reply.raw.setHeader('access-control-expose-headers', EXPOSED_HEADERS);
    if (!any) reply.raw.setHeader('vary', 'Origin');
  });

  // Preflight: answered before authentication (browsers send no Authorization header with it).
  app.options('/*', { config: { auth: 'none' }, schema: { hide: true } }, async (req, reply) => {
    const origin = req.headers.origin;
    if (!origin || !(any || allowed.has(origin.toLowerCase()))) {
      const message = `origin ${origin ?? '(none)'} may not call this API (ALGOHOST_CORS_ORIGINS)`;
      return reply
        .code(403)
        .header('x-error-message', message)
        .send({ error: { code: 2001, message } });
    }
    return reply
      .code(204)
      .header('access-control-allow-methods', ALLOWED_METHODS)
      .header('access-control-allow-headers', ALLOWED_HEADERS)
      .header('access-control-max-age', '600')
      .send();
  });
}
