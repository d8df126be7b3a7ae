/**
 * Git smart HTTP (protocol v0 and v2) in front of the real `git upload-pack` / `git
 * receive-pack --stateless-rpc`. Bodies stream straight through (gzip request bodies are
 * inflated on the fly); nothing is buffered whole. Only those two services are ever spawned,
 * and the repository path comes from the algorithm id in the database, never from the URL.
 *
 * Pushes are recorded by a post-receive hook that calls back into the service
 * (POST /internal/git/pushed); what the service answers is shown to the pusher as
 * `remote:` lines. The Git code never builds anything itself.
 */
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError } from '../domain/errors.js';
import type { AlgorithmService } from '../domain/algorithms/algorithm-service.js';
import type { KeyService } from '../domain/accounts/key-service.js';
import type { Principal } from '../domain/auth/principal.js';
import type { VersionService } from '../domain/versions/version-service.js';
import type { GitRepositoryHost } from './repository-host.js';

export interface PushEvent {
  algorithmId: string;
  pusher: string;
  updates: { old: string; new: string; ref: string }[];
  pushOptions: string[];
}

/** Receives pushes; `say` sends a line to the pusher's terminal while the hook is running. */
export interface PushListener {
  pushed(event: PushEvent, say: (line: string) => void): Promise<void>;
}

export interface SmartHttpDeps {
  keys: KeyService;
  algorithms: AlgorithmService;
  versions: VersionService;
  repositories: GitRepositoryHost;
  pushes: PushListener;
  git: string;
  /** The node's own base URL, for the hook's call back. Known only after listen. */
  selfUrl: () => string;
}

const HOOKS_DIR = fileURLToPath(new URL('./hooks', import.meta.url));
const SERVICES = new Set(['git-upload-pack', 'git-receive-pack']);
const PATH = /^\/git\/([^/]+)\/([^/]+?)(?:\/([^/]+?))?\.git\/(info\/refs|git-upload-pack|git-receive-pack)$/;

export async function gitRoutes(app: FastifyInstance, deps: SmartHttpDeps): Promise<void> {
  const hookToken = crypto.randomBytes(24).toString('base64url');

  // Git request bodies are handed to git as the raw stream: no parsing, no body limit here.
  app.addContentTypeParser(['application/x-git-upload-pack-request', 'application/x-git-receive-pack-request'], (_req, payload, done) =>
    done(null, payload),
  );

  app.route({
    method: ['GET', 'POST'],
    url: '/git/*',
    config: { auth: 'none' },
    schema: { hide: true },
    handler: (req, reply) => serveGit(req, reply, deps, hookToken),
  });

  app.post('/internal/git/pushed', { config: { auth: 'none' }, schema: { hide: true } }, async (req, reply) => {
    const given = Buffer.from(String(req.headers['x-algohost-hook-token'] ?? ''));
    const expected = Buffer.from(hookToken);
    if (given.length !== expected.length || !crypto.timingSafeEqual(given, expected)) {
      return reply.code(403).type('text/plain').send('forbidden\n');
    }
    const body = req.body as { algorithm_id?: string; pusher?: string; updates?: PushEvent['updates']; push_options?: string[] };
    reply.hijack();
    reply.raw.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
    const say = (line: string) => reply.raw.write(`${line}\n`);
    try {
      await deps.pushes.pushed(
        {
          algorithmId: String(body.algorithm_id),
          pusher: String(body.pusher ?? ''),
          updates: body.updates ?? [],
          pushOptions: body.push_options ?? [],
        },
        say,
      );
    } catch (err) {
      req.log.error({ err }, 'push handling failed');
      say(`algohost: the push was stored but no build could be started: ${(err as Error).message}`);
    }
    reply.raw.end();
  });
}

async function serveGit(req: FastifyRequest, reply: FastifyReply, deps: SmartHttpDeps, hookToken: string): Promise<void> {
  const url = new URL(req.url, 'http://x');
  const m = PATH.exec(url.pathname);
  if (!m) return textError(reply, 404, 'not a Git repository address; use /git/{owner}/{name}.git');
  const [, owner, name, version, action] = m as unknown as [string, string, string, string | undefined, string];
  const service = action === 'info/refs' ? url.searchParams.get('service') : action;
  if (!service || !SERVICES.has(service)) {
    return textError(reply, 403, 'only the smart HTTP protocol is served (git-upload-pack, git-receive-pack)');
  }
  if ((action === 'info/refs') !== (req.method === 'GET'))
    return textError(reply, 405, `use ${action === 'info/refs' ? 'GET' : 'POST'} for ${action}`);
  const write = service === 'git-receive-pack';

  let principal: Principal;
  try {
    principal = await authenticateBasic(req, deps.keys);
  } catch (err) {
    const message = err instanceof DomainError ? err.message : 'authentication failed';
    reply.header('www-authenticate', 'Basic realm="algohost", charset="UTF-8"');
    return textError(reply, 401, message);
  }

  let repoPath: string;
  try {
    if (version !== undefined && write)
      throw new DomainError(
        'forbidden',
        2001,
        `the versioned address ${owner}/${name}/${version}.git is read-only; push to /git/${owner}/${name}.git`,
      );
    const algorithm = await deps.algorithms.authorizeSource(principal, owner, name, write ? 'write' : 'read');
    repoPath =
      version === undefined
        ? deps.repositories.pathOf(algorithm.id)
        : await deps.versions.repositoryForVersion(principal, algorithm, version);
    await serviceProcess(req, reply, deps, {
      service,
      repoPath,
      advertise: action === 'info/refs',
      env: write
        ? {
            ALGOHOST_HOOK_URL: `${deps.selfUrl()}/internal/git/pushed`,
            ALGOHOST_HOOK_TOKEN: hookToken,
            ALGOHOST_ALGORITHM_ID: algorithm.id,
            ALGOHOST_PUSHER: principal.account.name,
          }
        : {},
    });
  } catch (err) {
    if (err instanceof DomainError) {
      const status = err.kind === 'not_found' ? 404 : err.kind === 'forbidden' ? 403 : 400;
      return textError(reply, status, err.message);
    }
    throw err;
  }
}

async function authenticateBasic(req: FastifyRequest, keys: KeyService): Promise<Principal> {
  const header = req.headers.authorization ?? '';
  if (!/^basic /i.test(header)) {
    throw new DomainError(
      'unauthenticated',
      2001,
      'authentication required: use https://{account}:{standard API key}@host/git/{owner}/{name}.git',
    );
  }
  const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  const user = colon < 0 ? decoded : decoded.slice(0, colon);
  let password = colon < 0 ? '' : decoded.slice(colon + 1);
  // A key may hold '/', written %2F in the URL; some clients pass it on still encoded.
  if (password.includes('%')) password = safeDecode(password);
  const principal = await keys.authenticateKey(password);
  if (principal.account.name.toLowerCase() !== user.toLowerCase()) {
    throw new DomainError('unauthenticated', 2002, `the user name "${user}" is not the owner of this API key`);
  }
  return principal;
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

interface ServiceCall {
  service: string;
  repoPath: string;
  advertise: boolean;
  env: Record<string, string>;
}

function serviceProcess(req: FastifyRequest, reply: FastifyReply, deps: SmartHttpDeps, call: ServiceCall): Promise<void> {
  const protocol = String(req.headers['git-protocol'] ?? '');
  const v2 = /(^|:)version=2(:|$)/.test(protocol);
  const args = ['-c', `core.hooksPath=${HOOKS_DIR}`, '-c', 'receive.advertisePushOptions=true', call.service.slice(4), '--stateless-rpc'];
  if (call.advertise) args.push('--http-backend-info-refs');
  args.push(call.repoPath);

  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, {
    'content-type': `application/x-${call.service}-${call.advertise ? 'advertisement' : 'result'}`,
    'cache-control': 'no-cache, max-age=0, must-revalidate',
  });
  if (call.advertise && !v2) {
    // Protocol v0/v1 advertisements start with the service announcement; v2 has none.
    res.write(pktLine(`# service=${call.service}\n`) + '0000');
  }

  return new Promise((resolve) => {
    const child = spawn(deps.git, args, {
      env: {
        PATH: process.env.PATH,
        HOME: '/nonexistent',
        GIT_CONFIG_NOSYSTEM: '1',
        GIT_CONFIG_GLOBAL: '/dev/null',
        ...(/^[\w=:.-]*$/.test(protocol) && protocol ? { GIT_PROTOCOL: protocol } : {}),
        ...call.env,
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => {
      if (stderr.length < 4096) stderr += d.toString();
    });
    child.stdout.pipe(res);
    child.stdin.on('error', () => {}); // git may exit before reading everything, e.g. on a bad request
    if (call.advertise) child.stdin.end();
    else {
      const body = req.body as NodeJS.ReadableStream;
      const gz = /gzip/i.test(String(req.headers['content-encoding'] ?? ''));
      const source = gz ? body.pipe(zlib.createGunzip()) : body;
      source.on('error', () => child.kill());
      source.pipe(child.stdin);
    }
    res.on('close', () => {
      if (child.exitCode === null) child.kill();
    });
    child.on('close', (code) => {
      if (code !== 0 && stderr) req.log.warn({ code, stderr: stderr.trim() }, `git ${call.service} failed`);
      resolve();
    });
    child.on('error', (err) => {
      req.log.error({ err }, 'could not start git');
      res.destroy();
      resolve();
    });
  });
}

function pktLine(s: string): string {
  return (Buffer.byteLength(s) + 4).toString(16).padStart(4, '0') + s;
}

/** Git shows text/plain error bodies to the user (as "remote: …" lines). */
function textError(reply: FastifyReply, status: number, message: string): FastifyReply {
  return reply.code(status).type('text/plain; charset=utf-8').send(`${message}\n`);
}
