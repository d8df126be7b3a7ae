/**
 * Git smart HTTP (protocol v0 and v2) in front of the real `git upload-pack` / `git
 * receive-pack --stateless-rpc`. Bodies stream straight through (gzip request bodies are
 * inflated on the fly); nothing is buffered whole. Only those two services are ever spawned,
 * and the repository path comes from the algorithm id in the database, never from the URL.
 *
 * Pushes are recorded by a post-receive hook that calls back into the service
 * (POST /internal/git/pushed); what the service answers is shown to the pusher as
 * `remote:` lines. The Git code never builds anything itself.
 *
 * What a push may store is checked before any ref moves: git's object checks
 * (`receive.fsckObjects`) refuse bad trees, the request body is counted as it streams into
 * `git receive-pack` and cut off past the push limit (the refusal is answered in the Git
 * protocol, see push-refusal.ts), and a pre-receive hook
 * asks the service (POST /internal/git/pre-receive) whether the quarantined objects keep the
 * repository and its account within their size limits. A refused push leaves nothing behind:
 * git deletes the quarantine.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import type { ServerResponse } from 'node:http';
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, Errors } from '../domain/errors.js';
import { predictableGitEnv } from '../lib/git-env.js';
import type { AlgorithmService } from '../domain/algorithm-objects/algorithm-service.js';
import type { KeyService } from '../domain/accounts/key-service.js';
import type { Principal } from '../domain/accounts/principal.js';
import type { VersionService } from '../domain/versions/version-service.js';
import { parsePushCommands, refusalResponse, type PushCommands } from './push-refusal.js';
import type { GitRepositoryHost } from './repository-host.js';
import { formatBytes, isQuarantineName, type IncomingPush } from './repository-sizes.js';

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
  /** The HTTP status of a domain error: api/errors.ts's mapping, the one table of them. */
  errorStatus: (err: DomainError) => number;
  /** The node's own base URL for the hooks' calls back (loopback when it listens on every address). */
  selfUrl: string;
}

const HOOKS_DIR = fileURLToPath(new URL('./hooks', import.meta.url));
const SERVICES = new Set(['git-upload-pack', 'git-receive-pack']);
const PATH = /^\/git\/([^/]+)\/([^/]+?)(?:\/([^/]+?))?\.git\/(info\/refs|git-upload-pack|git-receive-pack)$/;

export async function gitRoutes(app: FastifyInstance, deps: SmartHttpDeps): Promise<void> {
  const hookToken = crypto.randomBytes(24).toString('base64url');
  /** Pushes whose `git receive-pack` is running, by the id their hooks call back with. */
  const pushes = new Map<string, IncomingPush>();

  // Git request bodies are handed to git as the raw stream: no parsing, no body limit here.
  app.addContentTypeParser(['application/x-git-upload-pack-request', 'application/x-git-receive-pack-request'], (_req, payload, done) =>
    done(null, payload),
  );

  app.route({
    method: ['GET', 'POST'],
    url: '/git/*',
    config: { auth: 'none' },
    schema: { hide: true },
    handler: (req, reply) => serveGit(req, reply, deps, hookToken, pushes),
  });

  const fromHook = (req: FastifyRequest) => {
    const given = Buffer.from(String(req.headers['x-algohost-hook-token'] ?? ''));
    const expected = Buffer.from(hookToken);
    return given.length === expected.length && crypto.timingSafeEqual(given, expected);
  };

  // The pre-receive hook: objects are in quarantine, no ref has moved. 200 lets the push land;
  // any other answer refuses it, and the body is what the pusher reads.
  app.post('/internal/git/pre-receive', { config: { auth: 'none' }, schema: { hide: true } }, async (req, reply) => {
    if (!fromHook(req)) return reply.code(403).type('text/plain').send('forbidden\n');
    const body = req.body as { push_id?: string; quarantine_path?: string };
    const push = pushes.get(String(body.push_id));
    if (!push) return textError(reply, 409, 'algohost: push refused: the service no longer knows this push; try again');
    let refusal: string | undefined;
    try {
      let quarantine: string | undefined;
      if (body.quarantine_path) {
        quarantine = await fs.realpath(String(body.quarantine_path)).catch(() => '');
        const objects = await fs.realpath(path.join(deps.repositories.pathOf(push.algorithmId), 'objects'));
        if (path.dirname(quarantine) !== objects || !isQuarantineName(path.basename(quarantine))) {
          return textError(reply, 400, 'algohost: push refused: the objects are not in this repository');
        }
      }
      refusal = await deps.repositories.checkIncoming(push, quarantine);
    } catch (err) {
      req.log.error({ err }, 'checking a push against the size limits failed');
      return textError(reply, 503, 'algohost: push refused: its size could not be checked; try again');
    }
    if (refusal) return textError(reply, 403, refusal);
    return reply.code(200).type('text/plain').send('');
  });

  app.post('/internal/git/pushed', { config: { auth: 'none' }, schema: { hide: true } }, async (req, reply) => {
    if (!fromHook(req)) return reply.code(403).type('text/plain').send('forbidden\n');
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

async function serveGit(
  req: FastifyRequest,
  reply: FastifyReply,
  deps: SmartHttpDeps,
  hookToken: string,
  pushes: Map<string, IncomingPush>,
): Promise<void> {
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
    if (!(err instanceof DomainError)) throw err;
    reply.header('www-authenticate', 'Basic realm="algohost", charset="UTF-8"');
    return textError(reply, deps.errorStatus(err), err.message);
  }

  let repoPath: string;
  try {
    if (version !== undefined && write)
      throw Errors.forbidden(`the versioned address ${owner}/${name}/${version}.git is read-only; push to /git/${owner}/${name}.git`);
    const algorithm = await deps.algorithms.authorizeSource(principal, owner, name, write ? 'write' : 'read');
    repoPath =
      version === undefined
        ? deps.repositories.pathOf(algorithm.id)
        : await deps.versions.repositoryForVersion(principal, algorithm, version);
    const advertise = action === 'info/refs';
    const push: IncomingPush | undefined =
      write && !advertise
        ? {
            pushId: crypto.randomUUID(),
            algorithmId: algorithm.id,
            ownerId: algorithm.ownerId,
            ownerName: algorithm.ownerName,
            name: algorithm.name,
          }
        : undefined;
    if (push) pushes.set(push.pushId, push);
    try {
      await serviceProcess(req, reply, deps, {
        service,
        repoPath,
        advertise,
        env: push
          ? {
              ALGOHOST_HOOK_URL: `${deps.selfUrl}/internal/git/pushed`,
              ALGOHOST_PRE_RECEIVE_URL: `${deps.selfUrl}/internal/git/pre-receive`,
              ALGOHOST_HOOK_TOKEN: hookToken,
              ALGOHOST_ALGORITHM_ID: algorithm.id,
              ALGOHOST_PUSH_ID: push.pushId,
              ALGOHOST_PUSHER: principal.account.name,
            }
          : {},
        // Records the repository's new size before the pusher hears the push is done.
        ended: push ? () => deps.repositories.pushEnded(push.pushId, push.algorithmId) : undefined,
      });
    } finally {
      if (push) pushes.delete(push.pushId);
    }
  } catch (err) {
    if (err instanceof DomainError) return textError(reply, deps.errorStatus(err), err.message);
    throw err;
  }
}

async function authenticateBasic(req: FastifyRequest, keys: KeyService): Promise<Principal> {
  const header = req.headers.authorization ?? '';
  if (!/^basic /i.test(header)) {
    throw Errors.authorizationRequired('authentication required: use https://{account}:{standard API key}@host/git/{owner}/{name}.git');
  }
  const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  const user = colon < 0 ? decoded : decoded.slice(0, colon);
  let password = colon < 0 ? '' : decoded.slice(colon + 1);
  // A key may hold '/', written %2F in the URL; some clients pass it on still encoded.
  if (password.includes('%')) password = safeDecode(password);
  const principal = await keys.authenticateKey(password);
  if (principal.account.name.toLowerCase() !== user.toLowerCase()) {
    throw Errors.gitUserNotKeyOwner({ user });
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
  /** Runs once git has exited, before the answer ends. */
  ended?: () => Promise<void>;
}

function serviceProcess(req: FastifyRequest, reply: FastifyReply, deps: SmartHttpDeps, call: ServiceCall): Promise<void> {
  const protocol = String(req.headers['git-protocol'] ?? '');
  // A push's body is counted as it streams (after inflating). Past the limit git gets a cut-off
  // pack, which it refuses (removing its quarantine), and the pusher gets the refusal naming
  // the limit, written in the Git protocol since git shows no HTTP error body on a push.
  const pushing = call.service === 'git-receive-pack' && !call.advertise;
  const cap = pushing ? deps.repositories.limits.maxPushBytes : 0;

  reply.hijack();
  const res = reply.raw;
  const answer = new ServiceAnswer(res, call, /(^|:)version=2(:|$)/.test(protocol));
  // A push's answer starts with git's first output (after the whole pack has arrived), so a
  // push cut off at the limit is answered by the service instead.
  if (!pushing) answer.sendHead();

  return new Promise((resolve) => {
    const child = spawn(deps.git, serviceArgs(deps, call), {
      env: {
        ...predictableGitEnv(),
        ...(/^[\w=:.-]*$/.test(protocol) && protocol ? { GIT_PROTOCOL: protocol } : {}),
        ...call.env,
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const transfer: Transfer = { overLimit: false, exited: false };
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => {
      if (stderr.length < 4096) stderr += d.toString();
    });
    child.stdout.on('data', (d: Buffer) => {
      if (transfer.overLimit) return; // git's own report of the cut-off pack: the service answers instead
      answer.sendHead();
      if (!res.write(d)) {
        child.stdout.pause();
        res.once('drain', () => child.stdout.resume());
      }
    });
    child.stdin.on('error', () => {}); // git may exit before reading everything, e.g. on a bad request
    if (call.advertise) child.stdin.end();
    else feedRequestBody(req, child, transfer, pushing, cap);
    res.on('close', () => {
      if (child.exitCode === null) child.kill();
    });
    child.on('close', (code) => {
      transfer.exited = true;
      if (code !== 0 && stderr && !transfer.overLimit) req.log.warn({ code, stderr: stderr.trim() }, `git ${call.service} failed`);
      void finishAnswer(req, call, answer, transfer, cap).then(() => resolve());
    });
    child.on('error', (err) => {
      req.log.error({ err }, 'could not start git');
      res.destroy();
      resolve();
    });
  });
}

function serviceArgs(deps: SmartHttpDeps, call: ServiceCall): string[] {
  const args = ['-c', `core.hooksPath=${HOOKS_DIR}`, '-c', 'receive.advertisePushOptions=true'];
  if (call.service === 'git-receive-pack') args.push(...deps.repositories.receivePackConfig());
  args.push(call.service.slice(4), '--stateless-rpc');
  if (call.advertise) args.push('--http-backend-info-refs');
  args.push(call.repoPath);
  return args;
}

/** What the request body's pump and git's exit tell each other. */
interface Transfer {
  /** The push went past the push limit: git got a cut-off pack and the service answers. */
  overLimit: boolean;
  /** git has exited. */
  exited: boolean;
  /** The push's command list, once read (for the refusal's ref names). */
  commands?: PushCommands;
}

/** The HTTP answer of one service call; its head is written once, at the first output. */
class ServiceAnswer {
  private headSent = false;

  constructor(
    private readonly res: ServerResponse,
    private readonly call: ServiceCall,
    private readonly v2: boolean,
  ) {}

  get started(): boolean {
    return this.headSent;
  }

  sendHead(): void {
    if (this.headSent) return;
    this.headSent = true;
    this.res.writeHead(200, {
      'content-type': `application/x-${this.call.service}-${this.call.advertise ? 'advertisement' : 'result'}`,
      'cache-control': 'no-cache, max-age=0, must-revalidate',
    });
    if (this.call.advertise && !this.v2) {
      // Protocol v0/v1 advertisements start with the service announcement; v2 has none.
      this.res.write(pktLine(`# service=${this.call.service}\n`) + '0000');
    }
  }

  /** Refuses a push over the limit: in the Git protocol once its command list is known, else with a 413. */
  refuseOversizedPush(commands: PushCommands | undefined, cap: number): void {
    const message =
      `algohost: push refused: it sends more than ${formatBytes(cap)} (${cap} bytes), the most one push may send. ` +
      'Nothing was stored; push fewer commits at a time or keep large files out of the repository.';
    if (commands) {
      this.sendHead();
      this.res.end(refusalResponse(commands, message, `push over the ${formatBytes(cap)} limit`));
    } else {
      this.headSent = true;
      this.res.writeHead(413, { 'content-type': 'text/plain; charset=utf-8', connection: 'close' });
      this.res.end(`${message}\n`);
    }
  }

  end(): void {
    this.sendHead();
    this.res.end();
  }
}

/** Streams the request body (inflated) into git, cutting a push off at the limit. */
function feedRequestBody(
  req: FastifyRequest,
  child: ChildProcessWithoutNullStreams,
  transfer: Transfer,
  pushing: boolean,
  cap: number,
): void {
  const body = req.body as NodeJS.ReadableStream;
  const input = /gzip/i.test(String(req.headers['content-encoding'] ?? '')) ? body.pipe(zlib.createGunzip()) : body;
  let received = 0;
  let head: Buffer | undefined = pushing ? Buffer.alloc(0) : undefined;
  input.on('error', () => child.kill());
  input.on('data', (chunk: Buffer) => {
    received += chunk.length;
    if (head) {
      // The command list leads the request: kept until read, for the refusal's ref names.
      head = Buffer.concat([head, chunk.subarray(0, COMMANDS_MAX - head.length)]);
      transfer.commands = parsePushCommands(head);
      if (transfer.commands || head.length >= COMMANDS_MAX) head = undefined;
    }
    if (cap > 0 && received > cap && !transfer.overLimit) {
      transfer.overLimit = true;
      child.stdin.end(); // git reads a cut-off pack, refuses it and removes its quarantine
    }
    if (transfer.overLimit) {
      // The rest is read and dropped so that the client, still sending, gets to read the
      // refusal; a client sending far more than the limit is cut off.
      if (received > Math.max(DRAIN_FACTOR * cap, cap + DRAIN_MIN)) req.raw.destroy();
      return;
    }
    if (transfer.exited) return; // git has answered without reading everything: drop the rest
    if (!child.stdin.write(chunk)) {
      input.pause();
      child.stdin.once('drain', () => input.resume());
    }
  });
  input.on('end', () => {
    if (!transfer.overLimit) child.stdin.end();
  });
  child.on('close', () => input.resume());
}

/** Once git has exited: the push's bookkeeping, then the end of the answer (or the refusal of a push over the limit). */
async function finishAnswer(req: FastifyRequest, call: ServiceCall, answer: ServiceAnswer, transfer: Transfer, cap: number): Promise<void> {
  try {
    await call.ended?.();
  } catch (err) {
    req.log.error({ err }, 'recording the repository size failed');
  }
  if (transfer.overLimit && !answer.started) answer.refuseOversizedPush(transfer.commands, cap);
  else answer.end();
}

/** Most bytes of a push request kept to read its command list. */
const COMMANDS_MAX = 256 * 1024;
/**
 * A push over the limit is read on (and dropped) up to this many times the limit, and at least
 * DRAIN_MIN bytes past it, so the pusher gets to read the refusal; one sending more is cut off
 * (git then shows only "RPC failed"). Reading costs bandwidth, never disk or memory.
 */
const DRAIN_FACTOR = 5;
const DRAIN_MIN = 64 * 1024 * 1024;

function pktLine(s: string): string {
  return (Buffer.byteLength(s) + 4).toString(16).padStart(4, '0') + s;
}

/** Git shows text/plain error bodies to the user (as "remote: …" lines). */
function textError(reply: FastifyReply, status: number, message: string): FastifyReply {
  return reply.code(status).type('text/plain; charset=utf-8').send(`${message}\n`);
}
