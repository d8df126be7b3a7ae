/**
 * The web UI (packages/web, built by `npm run setup`) served at `/` from ALGOHOST_WEB_DIR.
 *
 * - Files under `assets/` carry content hashes in their names (Vite), so they are cached for a
 *   year as immutable; index.html and every other file are `no-cache`: revalidated each time
 *   by ETag or Last-Modified, answered 304 when unchanged. @fastify/static (its `send`) does
 *   the conditional requests, ranges and content types.
 * - Text files (JS, CSS, SVG, HTML, JSON) are served as the build precompressed them
 *   (`<file>.br`, `<file>.gz`, scripts/precompress-web.ts) when the client accepts that coding
 *   (api/content-coding.ts), the file as it is otherwise; each copy is a file of its own, so its
 *   Content-Length, ETag and ranges are its own bytes' (a range of a coded answer is a range of
 *   the coded bytes, as HTTP defines it). Nothing is compressed while answering.
 * - A GET or HEAD of any other path that is not a file answers index.html, so that the app's
 *   own addresses (`/algorithms/alice/hello`) survive a reload; `/v1`, `/git` and `/metrics`
 *   are never the app's and keep their own answers (an unknown `/v1/...` is the API's JSON 404).
 * - A path is decoded segment by segment and refused (400) when a segment is `.` or `..` or
 *   hides a `/`, `\` or NUL, before any file is looked at; a file is served only when its real
 *   path (symbolic links resolved) lies inside the folder; folders are never listed.
 * - The app's answers carry a strict Content-Security-Policy (no inline script or style, no
 *   framing, no plugins), `nosniff` and `no-referrer`; it replaces the stricter policy every
 *   other answer carries (api/security-headers.ts), which would not let the app load its files.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Errors } from '../domain/errors.js';
import type { Api } from './context.js';
import { sendError } from './errors.js';
import { acceptedCodings, varyOnAcceptEncoding, type Coding } from './content-coding.js';

export const APP_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data: blob:",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
    "form-action 'self'",
  ].join('; '),
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

/** Paths that are never the app's: the API, Git and Prometheus keep their own answers (and 404s). */
const NOT_THE_APP = /^\/(?:v1|git|metrics)(?:\/|$)/;
/** Vite's output folder of content-hashed files. */
const ASSETS = 'assets';
const IMMUTABLE_MAX_AGE_MS = 365 * 24 * 60 * 60 * 1000;
/**
 * The files the build writes precompressed (scripts/precompress-web.ts), with the type `send`
 * gives the file itself: a coded copy's own name (`.br`, `.gz`) says nothing of its content.
 */
const PRECOMPRESSED_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'application/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.json': 'application/json; charset=utf-8',
};
const CODED_COPY_SUFFIX: Readonly<Record<Coding, string>> = { br: '.br', gzip: '.gz' };
type FileOptions = Parameters<FastifyReply['sendFile']>[2];

/** What `GET /` answers while the UI is not built: a page saying how to build it, not a 404. */
const NOT_BUILT_PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>algohost</title></head>
<body>
<h1>algohost</h1>
<p>The web UI is not built: run <code>npm run setup</code>, then reload this page
(or point <code>ALGOHOST_WEB_DIR</code> at a built copy).</p>
<p>The API answers under <a href="/v1/openapi.json"><code>/v1</code></a>.</p>
</body>
</html>
`;

export async function webAppRoutes(app: Api, webDir: string): Promise<void> {
  // Only reply.sendFile: the routes are ours, so the fallback and the path checks stay in one place.
  await app.register(fastifyStatic, { serve: false });
  // The fallback takes every GET, but paths of the API, Git and metrics are not the app's: it
  // hands them to the not-found handler, and they do not count as allowing GET there.
  app.get('/*', { config: { auth: 'none', notFor: NOT_THE_APP }, schema: { hide: true } }, (req, reply) => serveApp(req, reply, webDir));
}

async function serveApp(req: FastifyRequest, reply: FastifyReply, webDir: string): Promise<FastifyReply> {
  const pathname = req.url.split('?', 1)[0]!;
  if (NOT_THE_APP.test(pathname)) {
    reply.callNotFound();
    return reply;
  }
  const segments = appPathSegments(pathname);
  reply.headers(APP_SECURITY_HEADERS);

  const root = await realDirectory(webDir);
  const index = root && (await fileInside(root, 'index.html'));
  if (!root || !index) {
    return reply.code(200).header('cache-control', 'no-cache').type('text/html; charset=utf-8').send(NOT_BUILT_PAGE);
  }
  // Dot files (.env, .git…) are never served, whatever the build left in the folder.
  const file = segments.length > 0 && !segments.some((s) => s.startsWith('.')) ? await fileInside(root, segments.join('/')) : undefined;
  if (file) {
    if (file.startsWith(`/${ASSETS}/`)) {
      return sendFile(req, reply, root, file, { cacheControl: true, maxAge: IMMUTABLE_MAX_AGE_MS, immutable: true, index: false });
    }
    return sendFile(req, reply.header('cache-control', 'no-cache'), root, file, { cacheControl: false, index: false });
  }
  // A missing hashed file is an old page asking for a build that is gone: HTML would not help it.
  if (segments[0] === ASSETS) return sendError(reply, 404, Errors.badRequest.code, `no such file of the web UI: ${pathname}`);
  return sendFile(req, reply.header('cache-control', 'no-cache'), root, index, { cacheControl: false, index: false });
}

/** `file` (a path from `root`), or the build's coded copy of it the client accepts best. */
async function sendFile(req: FastifyRequest, reply: FastifyReply, root: string, file: string, options: FileOptions): Promise<FastifyReply> {
  const type = PRECOMPRESSED_TYPES[path.posix.extname(file)];
  if (type === undefined) return reply.sendFile(file, root, options);
  varyOnAcceptEncoding(reply);
  for (const coding of acceptedCodings(req.headers['accept-encoding'])) {
    const copy = await codedCopy(root, file, CODED_COPY_SUFFIX[coding]);
    if (copy)
      return reply
        .type(type)
        .header('content-encoding', coding)
        .sendFile(copy, root, { ...options, contentType: false });
  }
  return reply.sendFile(file, root, options);
}

/**
 * `file`'s coded copy when it is a regular file whose real path is inside the folder (checked as
 * the file itself was) and no older than `file`: a file edited after the build has a stale copy.
 */
async function codedCopy(root: string, file: string, suffix: string): Promise<string | undefined> {
  const copy = await fileInside(root, file + suffix);
  if (!copy) return undefined;
  try {
    const [copied, original] = await Promise.all([fs.stat(path.join(root, copy)), fs.stat(path.join(root, file))]);
    return copied.mtimeMs >= original.mtimeMs ? copy : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The decoded segments of a request path, empty ones dropped; a segment that would climb out
 * of the folder or smuggle a separator (`..`, `%2e%2e`, `%2f`, `%5c`, `%00`) is a 400.
 */
function appPathSegments(pathname: string): string[] {
  const segments: string[] = [];
  for (const raw of pathname.split('/')) {
    if (raw === '') continue;
    let segment: string;
    try {
      segment = decodeURIComponent(raw);
    } catch {
      throw Errors.badRequest(`malformed percent-encoding in the path "${pathname}"`);
    }
    if (segment === '.' || segment === '..' || /[/\\\0]/.test(segment)) {
      throw Errors.badRequest(`the path "${pathname}" is not allowed: no segment may be "." or ".." or hold "/", "\\" or NUL`);
    }
    segments.push(segment);
  }
  return segments;
}

/** The folder's real path, or undefined when it does not exist (the UI is not built). */
async function realDirectory(dir: string): Promise<string | undefined> {
  try {
    const real = await fs.realpath(dir);
    return (await fs.stat(real)).isDirectory() ? real : undefined;
  } catch {
    return undefined;
  }
}

/**
 * `rel` as a path from `root` ("/assets/x.js") when it names a regular file whose real path (every
 * symbolic link resolved) is inside `root`; undefined otherwise (missing, a folder, or outside).
 */
async function fileInside(root: string, rel: string): Promise<string | undefined> {
  try {
    const real = await fs.realpath(path.join(root, rel));
    const inside = path.relative(root, real);
    if (inside === '' || inside === '..' || inside.startsWith(`..${path.sep}`) || path.isAbsolute(inside)) return undefined;
    // As a URL path from the folder's root, the form reply.sendFile takes.
    return (await fs.stat(real)).isFile() ? `/${inside.split(path.sep).join('/')}` : undefined;
  } catch {
    return undefined;
  }
}
