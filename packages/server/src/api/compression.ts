/**
 * Large JSON answers (listings, the OpenAPI document) compressed for clients that accept it
 * (api/content-coding.ts: brotli, else gzip). An answer that never changes (the OpenAPI
 * document, 190 KB) is compressed once per coding (`fixedJsonAnswer`); any other is compressed
 * as it is sent, only when all hold:
 *
 * - GET or HEAD (a HEAD announces the Content-Length its GET would send), status 200;
 * - JSON (`application/json` or `…+json`), already serialized (a string or a buffer): streams,
 *   event streams and files are never held whole to be compressed;
 * - at least MIN_BYTES: below that the coded answer saves less than its CPU costs (a compressed
 *   1 KB listing is still one TCP segment);
 * - not already coded (a Content-Encoding set), not a range (Content-Range);
 * - its route does not say `config: { compress: false }` (the call API: a call's answer is the
 *   algorithm's output, sent as the algorithm made it and on the hot path).
 *
 * Why answers to POST, PUT, PATCH and DELETE are never compressed: they are where secrets are
 * made (an API key's creation, a session token, a webhook's secret) next to what the caller
 * sent, the mix BREACH reads through compressed sizes. Credentials travel in the Authorization
 * header, never in cookies (api/cors.ts), so another site cannot make a browser send an
 * authenticated request to measure, but the rule costs nothing: those answers are small.
 *
 * The call lane (api/call-lane.ts) answers warm calls before Fastify and never reaches this hook.
 */
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify';
import { acceptedCodings, varyOnAcceptEncoding, type Coding } from './content-coding.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** false: the route's answers are sent as they are, whatever their size (api/compression.ts). */
    compress?: boolean;
  }
}

/** Smallest answer compressed, in bytes (docs/performance.md). */
export const MIN_BYTES = 1024;
const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\b/i;

const brotli = promisify(zlib.brotliCompress);
const gzip = promisify(zlib.gzip);

/**
 * Brotli's quality 4 and gzip's default level: on JSON listings both take a fraction of a
 * millisecond per 100 KB and keep most of the gain of their slowest settings (which are for the
 * web UI's files, compressed once at build time).
 */
const COMPRESS: Readonly<Record<Coding, (bytes: Buffer | string) => Promise<Buffer>>> = {
  br: (bytes) =>
    brotli(bytes, {
      params: {
        [zlib.constants.BROTLI_PARAM_QUALITY]: 4,
        [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT,
        [zlib.constants.BROTLI_PARAM_SIZE_HINT]: Buffer.byteLength(bytes),
      },
    }),
  gzip: (bytes) => gzip(bytes),
};

export function installCompression(app: FastifyInstance): void {
  app.addHook('onSend', (req, reply, payload, done) => {
    if (!compressible(req, reply, payload)) return done(null, payload);
    varyOnAcceptEncoding(reply);
    const coding = acceptedCodings(req.headers['accept-encoding'])[0];
    if (coding === undefined) return done(null, payload);
    COMPRESS[coding](payload).then(
      (coded) => {
        // Fastify counts the coded bytes; a length the route set was the uncoded one's.
        reply.removeHeader('content-length');
        reply.header('content-encoding', coding);
        done(null, coded);
      },
      // zlib fails only on what it cannot allocate: the answer then goes out as it is.
      () => done(null, payload),
    );
  });
}

/**
 * A handler answering `json()` (made on the first request, when routes are all known), coded once
 * per coding and kept: compressing the OpenAPI document takes milliseconds, too many to spend
 * on each of its anonymous readers.
 */
export function fixedJsonAnswer(json: () => string): RouteHandlerMethod {
  let text: string | undefined;
  const coded = new Map<Coding, Promise<Buffer>>();
  return async (req, reply) => {
    text ??= json();
    reply.type('application/json; charset=utf-8');
    if (text.length < MIN_BYTES) return text;
    varyOnAcceptEncoding(reply);
    const coding = acceptedCodings(req.headers['accept-encoding'])[0];
    if (coding === undefined) return text;
    let pending = coded.get(coding);
    if (!pending) coded.set(coding, (pending = COMPRESS[coding](text)));
    // zlib fails only on what it cannot allocate: this answer goes out as it is, the next tries again.
    const body = await pending.catch(() => void coded.delete(coding));
    if (!body) return text;
    // Content-Encoding set: the onSend hook leaves the answer alone.
    return reply.header('content-encoding', coding).send(body);
  };
}

function compressible(req: FastifyRequest, reply: FastifyReply, payload: unknown): payload is string | Buffer {
  if ((req.method !== 'GET' && req.method !== 'HEAD') || reply.statusCode !== 200) return false;
  // A string's length in UTF-16 units is at most its UTF-8 length: a cheap lower bound.
  if (typeof payload === 'string' ? payload.length < MIN_BYTES : !Buffer.isBuffer(payload) || payload.length < MIN_BYTES) return false;
  if (req.routeOptions.config.compress === false) return false;
  if (reply.hasHeader('content-encoding') || reply.hasHeader('content-range')) return false;
  const type = reply.getHeader('content-type');
  return typeof type === 'string' && JSON_TYPE.test(type);
}
