/**
 * Headers every answer carries, whatever produced it (API JSON, errors, 404s and 405s, Git's
 * hijacked streams, the web UI, /metrics): set on the raw response as the request arrives, so a
 * route's own value (the web UI's Content-Security-Policy) still wins, as Node merges
 * `writeHead`'s headers over these.
 * - `nosniff`: a JSON error or a user's README shown raw is never run as a script or style.
 * - A Content-Security-Policy that allows nothing and no framing: right for JSON and text;
 *   an HTML page of the API (none today) could load nothing and run nothing. `X-Frame-Options`
 *   says the same to browsers without CSP frame-ancestors.
 * - `Referrer-Policy: no-referrer`: API and Git URLs (names of private algorithms, data paths)
 *   never leak to another site through a link.
 * - HSTS only when the node's public URL is https (TLS ends at a proxy in front of it): over
 *   plain HTTP browsers ignore it, and a node reached by http:// must stay reachable.
 */
import type { FastifyInstance } from 'fastify';
import type { ServerResponse } from 'node:http';

export function securityHeaders(publicUrl: string): Record<string, string> {
  return {
    'x-content-type-options': 'nosniff',
    'content-security-policy': "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
    ...(publicUrl.startsWith('https://') ? { 'strict-transport-security': 'max-age=31536000' } : {}),
  };
}

export function setSecurityHeaders(res: ServerResponse, headers: Record<string, string>): void {
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
}

export function installSecurityHeaders(app: FastifyInstance, headers: Record<string, string>): void {
  app.addHook('onRequest', (_req, reply, done) => {
    setSecurityHeaders(reply.raw, headers);
    done();
  });
}
