/**
 * FAKES of GitHub, GitLab and Bitbucket Cloud for the external-SCM contract suite: those
 * providers cannot run here. Each fake is an HTTP server the test starts, answering the part of
 * the provider's public REST API and OAuth endpoints algohost uses, in the provider's own paths,
 * JSON shapes and webhook signing (from each provider's API documentation), over a shared core:
 * users, organizations, OAuth clients, codes and tokens in memory, repositories as real bare
 * Git repositories served by `git http-backend`, and push webhooks sent after each push.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { type Forge, type ForgeUser, hmacHex } from './forge.js';
import { git } from './git.js';
import { makeTempDir } from './server.js';

type Kind = 'github' | 'gitlab' | 'bitbucket';

interface Repo {
  owner: string;
  name: string;
  dir: string;
  hooks: { id: string; url: string; secret: string; active: boolean }[];
}

interface Grant {
  user: string;
  /** What the consent granted; each route and Git push checks the scope its provider documents. */
  scopes: Set<string>;
  access: string;
  refresh: string | null;
  expiresAt: number | null;
  revoked: boolean;
}

interface Answer {
  status: number;
  json?: unknown;
  location?: string;
}

interface Request {
  method: string;
  url: URL;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  /** The user of a valid bearer token; undefined when none was sent; null when it was refused. */
  user: string | undefined | null;
  /** The scopes of that token. */
  scopes: Set<string>;
}

/** The state every fake shares; the dialects below read and change it. */
class FakeForgeCore {
  readonly users = new Map<string, string>(); // name → password
  /** Organization → members' roles. */
  readonly orgs = new Map<string, Map<string, 'owner' | 'reader'>>();
  readonly repos = new Map<string, Repo>();
  /** OAuth clients; `scopes` only where the provider sets them on the client (Bitbucket's consumer permissions). */
  readonly clients = new Map<string, { secret: string; redirectUri: string; scopes?: string[] }>();
  readonly codes = new Map<string, { user: string; clientId: string; redirectUri: string; challenge: string | null; scopes: string[] }>();
  readonly grants: Grant[] = [];
  server!: http.Server;
  url = '';
  root = '';

  constructor(
    readonly kind: Kind,
    /** Seconds an access token lives (null: forever), and whether refresh tokens are issued. */
    readonly tokens: { lifetime: number | null; refresh: boolean },
    readonly route: (core: FakeForgeCore, r: Request) => Promise<Answer | undefined>,
  ) {}

  async start(): Promise<void> {
    this.root = await makeTempDir(`algohost-fake-${this.kind}-`);
    this.server = http.createServer((req, res) => {
      this.handle(req, res).catch((err: unknown) => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ message: String(err) }));
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as { port: number }).port}`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
    await fs.promises.rm(this.root, { recursive: true, force: true });
  }

  repoKey = (owner: string, name: string) => `${owner}/${name}`.toLowerCase();
  repo = (owner: string, name: string) => this.repos.get(this.repoKey(owner, name));

  async createRepo(owner: string, name: string): Promise<Repo> {
    const dir = path.join(this.root, `${crypto.randomUUID()}.git`);
    const made = await git(['init', '-q', '--bare', '-b', 'main', dir]);
    assert.equal(made.code, 0, made.stderr);
    await git(['config', 'http.receivepack', 'true'], dir);
    const repo: Repo = { owner, name, dir, hooks: [] };
    this.repos.set(this.repoKey(owner, name), repo);
    return repo;
  }

  /** Whether `user` may create repositories under `owner` (itself, or an organization it owns). */
  mayCreate = (user: string, owner: string) => owner.toLowerCase() === user.toLowerCase() || this.orgs.get(owner)?.get(user) === 'owner';

  issue(user: string, scopes: Iterable<string>): Grant {
    const grant: Grant = {
      user,
      scopes: new Set(scopes),
      access: `tok_${crypto.randomBytes(16).toString('hex')}`,
      refresh: this.tokens.refresh ? `ref_${crypto.randomBytes(16).toString('hex')}` : null,
      expiresAt: this.tokens.lifetime === null ? null : Date.now() + this.tokens.lifetime * 1000,
      revoked: false,
    };
    this.grants.push(grant);
    return grant;
  }

  tokenJson(g: Grant) {
    return {
      access_token: g.access,
      token_type: 'bearer',
      ...(g.refresh ? { refresh_token: g.refresh } : {}),
      ...(this.tokens.lifetime === null ? {} : { expires_in: this.tokens.lifetime }),
    };
  }

  /** The authorization-code grant: the client, redirect and PKCE verifier checked like the provider does. */
  redeem(form: URLSearchParams, client: { id: string; secret: string } | undefined): Grant | undefined {
    const clientId = client?.id ?? form.get('client_id') ?? '';
    const registered = this.clients.get(clientId);
    if (!registered || registered.secret !== (client?.secret ?? form.get('client_secret'))) return undefined;
    if (form.get('grant_type') === 'refresh_token') {
      const g = this.grants.find((x) => x.refresh !== null && x.refresh === form.get('refresh_token') && !x.revoked);
      if (!g) return undefined;
      g.revoked = true; // rotated: the old pair stops working
      return this.issue(g.user, g.scopes);
    }
    const code = this.codes.get(form.get('code') ?? '');
    this.codes.delete(form.get('code') ?? '');
    if (!code || code.clientId !== clientId) return undefined;
    if (form.has('redirect_uri') && form.get('redirect_uri') !== code.redirectUri) return undefined;
    if (code.challenge !== null) {
      const verifier = form.get('code_verifier') ?? '';
      if (crypto.createHash('sha256').update(verifier).digest('base64url') !== code.challenge) return undefined;
    }
    return this.issue(code.user, code.scopes);
  }

  /** The consent page: approved at once for the user the test names (the fake has no sign-in form). */
  authorize(url: URL, user: string | undefined, redirectFromClient: boolean): Answer {
    const clientId = url.searchParams.get('client_id') ?? '';
    const registered = this.clients.get(clientId);
    if (!registered || !user) return { status: 400, json: { error: 'invalid_request' } };
    const redirectUri = redirectFromClient ? registered.redirectUri : (url.searchParams.get('redirect_uri') ?? '');
    if (redirectUri !== registered.redirectUri) return { status: 400, json: { error: 'redirect_uri_mismatch' } };
    const asked = (url.searchParams.get('scope') ?? '').split(/[ ,]+/).filter(Boolean);
    const back = new URL(redirectUri);
    // A client with its own permissions (a Bitbucket consumer) grants those, and refuses a request for more.
    const beyond = registered.scopes && asked.filter((s) => !registered.scopes!.includes(s));
    if (beyond?.length) {
      back.searchParams.set('error', 'invalid_scope');
      back.searchParams.set('error_description', `the consumer lacks ${beyond.join(' ')}`);
      back.searchParams.set('state', url.searchParams.get('state') ?? '');
      return { status: 302, location: back.toString() };
    }
    const code = crypto.randomBytes(12).toString('hex');
    this.codes.set(code, {
      user,
      clientId,
      redirectUri,
      challenge: url.searchParams.get('code_challenge'),
      scopes: registered.scopes ?? asked,
    });
    back.searchParams.set('code', code);
    back.searchParams.set('state', url.searchParams.get('state') ?? '');
    return { status: 302, location: back.toString() };
  }

  private bearer(headers: http.IncomingHttpHeaders): Grant | undefined | null {
    const m = /^(?:Bearer|token) (.+)$/i.exec(headers.authorization ?? '');
    if (!m) return undefined;
    const g = this.grants.find((x) => x.access === m[1]);
    if (!g || g.revoked || (g.expiresAt !== null && g.expiresAt < Date.now())) return null;
    return g;
  }

  /** Git's Basic credentials: the user's password, or any user name with a valid access token (and its scopes). */
  private gitUser(headers: http.IncomingHttpHeaders): { user: string; scopes: Set<string> | null } | undefined {
    const m = /^Basic (.+)$/i.exec(headers.authorization ?? '');
    if (!m) return undefined;
    const [name, secret] = Buffer.from(m[1]!, 'base64').toString().split(':');
    if (name && this.users.get(name) === secret) return { user: name, scopes: null };
    const g = this.grants.find((x) => x.access === secret && !x.revoked && (x.expiresAt === null || x.expiresAt >= Date.now()));
    return g && { user: g.user, scopes: g.scopes };
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.url);
    const gitPath = /^\/([^/]+)\/([^/]+?)\.git(\/.*)$/.exec(url.pathname);
    if (gitPath) return this.serveGit(req, res, gitPath[1]!, gitPath[2]!, gitPath[3]!, url);
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const grant = this.bearer(req.headers);
    const answer = await this.route(this, {
      method: req.method ?? 'GET',
      url,
      headers: req.headers,
      body: Buffer.concat(chunks),
      user: grant === null ? null : grant?.user,
      scopes: grant?.scopes ?? new Set(),
    });
    if (!answer) {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ message: 'Not Found' }));
      return;
    }
    const headers: Record<string, string> = {};
    if (answer.location) headers.location = answer.location;
    if (answer.json !== undefined) headers['content-type'] = 'application/json';
    res.writeHead(answer.status, headers).end(answer.json === undefined ? undefined : JSON.stringify(answer.json));
  }

  /** Git smart HTTP through `git http-backend` (CGI), for the repository's members only; a push then fires the webhooks. */
  private async serveGit(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    owner: string,
    name: string,
    rest: string,
    url: URL,
  ): Promise<void> {
    const repo = this.repo(owner, name);
    const credential = this.gitUser(req.headers);
    if (!credential) {
      res.writeHead(401, { 'www-authenticate': 'Basic realm="fake"' }).end();
      return;
    }
    const user = credential.user;
    if (!repo || !this.mayCreate(user, repo.owner)) {
      res.writeHead(404).end();
      return;
    }
    const pushing = rest === '/git-receive-pack' || url.searchParams.get('service') === 'git-receive-pack';
    if (pushing && credential.scopes && !PUSH_SCOPES[this.kind].some((s) => credential.scopes!.has(s))) {
      res.writeHead(403).end(`the token lacks the scope ${PUSH_SCOPES[this.kind].join(' or ')} to push`);
      return;
    }
    const before = rest === '/git-receive-pack' ? await this.heads(repo) : undefined;
    // The hooks that exist when the push arrives: one registered later is not told about it.
    const hooks = repo.hooks.filter((h) => h.active);
    const child = spawn('git', ['http-backend'], {
      env: {
        PATH: process.env.PATH,
        GIT_PROJECT_ROOT: path.dirname(repo.dir),
        GIT_HTTP_EXPORT_ALL: '1',
        PATH_INFO: `/${path.basename(repo.dir)}${rest}`,
        QUERY_STRING: url.search.slice(1),
        REQUEST_METHOD: req.method ?? 'GET',
        CONTENT_TYPE: req.headers['content-type'] ?? '',
        HTTP_CONTENT_ENCODING: req.headers['content-encoding'] ?? '',
        GIT_PROTOCOL: String(req.headers['git-protocol'] ?? ''),
        REMOTE_USER: user,
        REMOTE_ADDR: '127.0.0.1',
      },
    });
    req.pipe(child.stdin);
    const out: Buffer[] = [];
    child.stdout.on('data', (d: Buffer) => out.push(d));
    await new Promise((resolve) => child.on('close', resolve));
    const all = Buffer.concat(out);
    const split = all.indexOf('\r\n\r\n');
    const head = all.subarray(0, split).toString();
    const headers: Record<string, string> = {};
    let status = 200;
    for (const line of head.split('\r\n')) {
      const i = line.indexOf(':');
      const k = line.slice(0, i).trim().toLowerCase();
      const v = line.slice(i + 1).trim();
      if (k === 'status') status = Number(v.split(' ')[0]);
      else headers[k] = v;
    }
    res.writeHead(status, headers).end(all.subarray(split + 4));
    if (before) {
      const after = await this.heads(repo);
      for (const [branch, sha] of after) {
        if (before.get(branch) !== sha) void this.deliver(hooks, branch, before.get(branch) ?? '0'.repeat(40), sha);
      }
    }
  }

  private async heads(repo: Repo): Promise<Map<string, string>> {
    const r = await git(['for-each-ref', '--format=%(refname:short) %(objectname)', 'refs/heads'], repo.dir);
    return new Map(
      r.stdout
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => l.split(' ') as [string, string]),
    );
  }

  /** Sends the push to every active hook, as the provider would, after the push has been answered. */
  private async deliver(hooks: Repo['hooks'], branch: string, before: string, after: string): Promise<void> {
    for (const hook of hooks) {
      const d = DELIVERIES[this.kind](hook.secret, { id: crypto.randomUUID(), branch, before, after });
      await fetch(hook.url, { method: 'POST', headers: d.headers, body: d.body }).catch(() => undefined);
    }
  }
}

/** How each provider sends a push delivery (headers, body, signature), per its webhook documentation. */
const DELIVERIES: Record<Kind, Forge['delivery']> = {
  github(secret, p) {
    const body = JSON.stringify({ ref: `refs/heads/${p.branch}`, before: p.before ?? '0'.repeat(40), after: p.after, commits: [] });
    return {
      body,
      headers: {
        'content-type': 'application/json',
        'x-github-event': 'push',
        'x-github-delivery': p.id,
        'x-hub-signature-256': `sha256=${hmacHex(secret, body)}`,
      },
    };
  },
  gitlab(secret, p) {
    const body = JSON.stringify({
      object_kind: 'push',
      ref: `refs/heads/${p.branch}`,
      before: p.before ?? '0'.repeat(40),
      after: p.after,
      checkout_sha: p.after,
    });
    return {
      body,
      headers: { 'content-type': 'application/json', 'x-gitlab-event': 'Push Hook', 'x-gitlab-token': secret, 'x-gitlab-event-uuid': p.id },
    };
  },
  bitbucket(secret, p) {
    const body = JSON.stringify({
      push: {
        changes: [
          {
            new: { type: 'branch', name: p.branch, target: { hash: p.after } },
            old: p.before ? { type: 'branch', name: p.branch, target: { hash: p.before } } : null,
          },
        ],
      },
    });
    return {
      body,
      headers: {
        'content-type': 'application/json',
        'x-event-key': 'repo:push',
        'x-request-uuid': p.id,
        'x-hook-uuid': '{hook}',
        'x-hub-signature': `sha256=${hmacHex(secret, body)}`,
      },
    };
  },
};

const json = (status: number, body: unknown): Answer => ({ status, json: body });

/** The scopes (any one of them) a token needs to push over Git, per provider. */
const PUSH_SCOPES: Record<Kind, string[]> = { github: ['repo'], gitlab: ['api', 'write_repository'], bitbucket: ['repository:write'] };

/** 403 unless the token holds one of `scopes`: what the provider documents for the route. */
const lacks = (r: Request, ...scopes: string[]): Answer | undefined =>
  scopes.some((s) => r.scopes.has(s)) ? undefined : json(403, { message: `the token lacks the scope ${scopes.join(' or ')}` });
const unauthorized = (): Answer => json(401, { message: 'Bad credentials' });
const parseJson = (b: Buffer) => (b.length ? (JSON.parse(b.toString()) as Record<string, any>) : {});
const basicClient = (h: http.IncomingHttpHeaders) => {
  const m = /^Basic (.+)$/i.exec(h.authorization ?? '');
  if (!m) return undefined;
  const [id, secret] = Buffer.from(m[1]!, 'base64').toString().split(':');
  return { id: id ?? '', secret: secret ?? '' };
};

/** GitHub (as GitHub Enterprise Server: the API under {web}/api/v3). */
async function githubRoutes(core: FakeForgeCore, r: Request): Promise<Answer | undefined> {
  const p = r.url.pathname;
  if (r.method === 'GET' && p === '/login/oauth/authorize')
    return core.authorize(r.url, r.headers['x-fake-user'] as string | undefined, false);
  if (r.method === 'POST' && p === '/login/oauth/access_token') {
    const g = core.redeem(new URLSearchParams(r.body.toString()), undefined);
    // GitHub answers a bad code with 200 and an error field.
    return g ? json(200, { ...core.tokenJson(g), scope: [...g.scopes].join(',') }) : json(200, { error: 'bad_verification_code' });
  }
  const grant = /^\/api\/v3\/applications\/([^/]+)\/grant$/.exec(p);
  if (r.method === 'DELETE' && grant) {
    const c = basicClient(r.headers);
    if (!c || core.clients.get(c.id)?.secret !== c.secret) return unauthorized();
    const token = parseJson(r.body).access_token;
    const g = core.grants.find((x) => x.access === token);
    if (!g) return json(404, { message: 'Not Found' });
    for (const x of core.grants.filter((y) => y.user === g.user)) x.revoked = true;
    return { status: 204 };
  }
  if (!p.startsWith('/api/v3/')) return undefined;
  if (!r.user) return unauthorized();
  const user = r.user;
  const api = p.slice('/api/v3'.length);
  let m: RegExpExecArray | null;
  if (r.method === 'GET' && api === '/user') return json(200, { login: user, id: 1 });
  if (r.method === 'GET' && api === '/user/memberships/orgs') {
    return (
      lacks(r, 'read:org') ??
      json(
        200,
        [...core.orgs]
          .filter(([, members]) => members.has(user))
          .map(([org, members]) => ({
            state: 'active',
            role: members.get(user) === 'owner' ? 'admin' : 'member',
            organization: { login: org },
          })),
      )
    );
  }
  if (r.method === 'GET' && (m = /^\/orgs\/([^/]+)$/.exec(api))) {
    return core.orgs.has(m[1]!) ? json(200, { login: m[1], members_can_create_repositories: false }) : json(404, { message: 'Not Found' });
  }
  if ((m = /^\/repos\/([^/]+)\/([^/]+)$/.exec(api))) {
    const repo = core.repo(m[1]!, m[2]!);
    if (!repo || !core.mayCreate(user, repo.owner)) return json(404, { message: 'Not Found' });
    if (r.method === 'GET') return lacks(r, 'repo') ?? json(200, { full_name: `${repo.owner}/${repo.name}` });
    if (r.method === 'DELETE') {
      const denied = lacks(r, 'delete_repo');
      if (denied) return denied;
      core.repos.delete(core.repoKey(repo.owner, repo.name));
      return { status: 204 };
    }
  }
  if (r.method === 'POST' && (api === '/user/repos' || (m = /^\/orgs\/([^/]+)\/repos$/.exec(api)))) {
    const denied = lacks(r, 'repo');
    if (denied) return denied;
    const owner = api === '/user/repos' ? user : m![1]!;
    const name = String(parseJson(r.body).name);
    if (!core.mayCreate(user, owner)) return json(403, { message: 'Must have admin rights' });
    if (core.repo(owner, name))
      return json(422, { message: 'Repository creation failed.', errors: [{ message: 'name already exists on this account' }] });
    await core.createRepo(owner, name);
    return json(201, {
      clone_url: `${core.url}/${owner}/${name}.git`,
      ssh_url: `git@127.0.0.1:${owner}/${name}.git`,
      html_url: `${core.url}/${owner}/${name}`,
    });
  }
  if ((m = /^\/repos\/([^/]+)\/([^/]+)\/hooks$/.exec(api)) && r.method === 'POST') {
    const denied = lacks(r, 'repo', 'admin:repo_hook', 'write:repo_hook');
    if (denied) return denied;
    const repo = core.repo(m[1]!, m[2]!);
    if (!repo || !core.mayCreate(user, repo.owner)) return json(404, { message: 'Not Found' });
    const b = parseJson(r.body);
    const id = String(repo.hooks.length + 1);
    repo.hooks.push({ id, url: b.config.url, secret: b.config.secret, active: b.active !== false });
    return json(201, { id: Number(id), active: true, events: b.events });
  }
  if (r.method === 'GET' && (m = /^\/repos\/([^/]+)\/([^/]+)\/branches\/([^/]+)$/.exec(api))) {
    const denied = lacks(r, 'repo');
    if (denied) return denied;
    const repo = core.repo(m[1]!, m[2]!);
    const head = repo && (await git(['rev-parse', '--verify', '--quiet', `refs/heads/${decodeURIComponent(m[3]!)}`], repo.dir));
    return head?.code === 0 ? json(200, { name: m[3], commit: { sha: head.stdout.trim() } }) : json(404, { message: 'Branch not found' });
  }
  return undefined;
}

/** GitLab (self-managed: the API under {web}/api/v4). */
async function gitlabRoutes(core: FakeForgeCore, r: Request): Promise<Answer | undefined> {
  const p = r.url.pathname;
  if (r.method === 'GET' && p === '/oauth/authorize') return core.authorize(r.url, r.headers['x-fake-user'] as string | undefined, false);
  if (r.method === 'POST' && p === '/oauth/token') {
    const g = core.redeem(new URLSearchParams(r.body.toString()), undefined);
    return g
      ? json(200, { ...core.tokenJson(g), created_at: Math.floor(Date.now() / 1000) })
      : json(400, { error: 'invalid_grant', error_description: 'The provided authorization grant is invalid, expired, revoked' });
  }
  if (r.method === 'POST' && p === '/oauth/revoke') {
    const token = new URLSearchParams(r.body.toString()).get('token');
    for (const g of core.grants.filter((x) => x.access === token || x.refresh === token)) g.revoked = true;
    return json(200, {});
  }
  if (!p.startsWith('/api/v4/')) return undefined;
  if (!r.user) return json(401, { message: '401 Unauthorized' });
  // `api` for everything; reads also with `read_api`.
  const denied = lacks(r, 'api', ...(r.method === 'GET' ? ['read_api'] : []));
  if (denied) return denied;
  const user = r.user;
  const api = p.slice('/api/v4'.length);
  const level = (org: string) => (core.orgs.get(org)?.get(user) === 'owner' ? 50 : core.orgs.get(org)?.has(user) ? 10 : 0);
  let m: RegExpExecArray | null;
  if (r.method === 'GET' && api === '/user') return json(200, { id: 1, username: user });
  if (r.method === 'GET' && api === '/groups') {
    const min = Number(r.url.searchParams.get('min_access_level') ?? 0);
    const page = Number(r.url.searchParams.get('page') ?? 1);
    const groups = [...core.orgs.keys()].filter((g) => level(g) > 0 && level(g) >= min);
    return json(200, page === 1 ? groups.map((g, i) => ({ id: i + 100, full_path: g, path: g })) : []);
  }
  if (r.method === 'GET' && (m = /^\/groups\/([^/]+)$/.exec(api))) {
    const g = decodeURIComponent(m[1]!);
    return level(g) > 0
      ? json(200, { id: [...core.orgs.keys()].indexOf(g) + 100, full_path: g })
      : json(404, { message: '404 Group Not Found' });
  }
  if ((m = /^\/projects\/([^/]+)$/.exec(api))) {
    const [owner, name] = decodeURIComponent(m[1]!).split('/');
    const repo = core.repo(owner!, name!);
    if (!repo || !core.mayCreate(user, repo.owner)) return json(404, { message: '404 Project Not Found' });
    if (r.method === 'GET') return json(200, { path_with_namespace: `${repo.owner}/${repo.name}` });
    if (r.method === 'DELETE') {
      core.repos.delete(core.repoKey(repo.owner, repo.name));
      return json(202, { message: '202 Accepted' });
    }
  }
  if (r.method === 'POST' && api === '/projects') {
    const b = parseJson(r.body);
    const owner = b.namespace_id === undefined ? user : [...core.orgs.keys()][Number(b.namespace_id) - 100];
    if (!owner || !core.mayCreate(user, owner)) return json(403, { message: '403 Forbidden' });
    if (core.repo(owner, b.path)) return json(400, { message: { path: ['has already been taken'] } });
    await core.createRepo(owner, b.path);
    return json(201, {
      id: core.repos.size,
      http_url_to_repo: `${core.url}/${owner}/${b.path}.git`,
      ssh_url_to_repo: `git@127.0.0.1:${owner}/${b.path}.git`,
      web_url: `${core.url}/${owner}/${b.path}`,
    });
  }
  if (r.method === 'POST' && (m = /^\/projects\/([^/]+)\/hooks$/.exec(api))) {
    const [owner, name] = decodeURIComponent(m[1]!).split('/');
    const repo = core.repo(owner!, name!);
    if (!repo || !core.mayCreate(user, repo.owner)) return json(404, { message: '404 Project Not Found' });
    const b = parseJson(r.body);
    const id = String(repo.hooks.length + 1);
    repo.hooks.push({ id, url: b.url, secret: b.token, active: b.push_events === true });
    return json(201, { id: Number(id), url: b.url, push_events: true });
  }
  if (r.method === 'GET' && (m = /^\/projects\/([^/]+)\/repository\/branches\/([^/]+)$/.exec(api))) {
    const [owner, name] = decodeURIComponent(m[1]!).split('/');
    const repo = core.repo(owner!, name!);
    const head = repo && (await git(['rev-parse', '--verify', '--quiet', `refs/heads/${decodeURIComponent(m[2]!)}`], repo.dir));
    return head?.code === 0
      ? json(200, { name: m[2], commit: { id: head.stdout.trim() } })
      : json(404, { message: '404 Branch Not Found' });
  }
  return undefined;
}

/** Bitbucket Cloud (the API under {web}/2.0 here, api.bitbucket.org/2.0 there). */
async function bitbucketRoutes(core: FakeForgeCore, r: Request): Promise<Answer | undefined> {
  const p = r.url.pathname;
  if (r.method === 'GET' && p === '/site/oauth2/authorize')
    return core.authorize(r.url, r.headers['x-fake-user'] as string | undefined, true);
  if (r.method === 'POST' && p === '/site/oauth2/access_token') {
    const g = core.redeem(new URLSearchParams(r.body.toString()), basicClient(r.headers));
    return g
      ? json(200, { ...core.tokenJson(g), scopes: [...g.scopes].join(' ') })
      : json(400, { error: 'invalid_grant', error_description: 'Invalid grant' });
  }
  if (!p.startsWith('/2.0/')) return undefined;
  if (!r.user) return json(401, { type: 'error', error: { message: 'Access token expired.' } });
  const user = r.user;
  const api = p.slice('/2.0'.length);
  let m: RegExpExecArray | null;
  if (r.method === 'GET' && (api === '/user' || api === '/user/permissions/workspaces')) {
    const denied = lacks(r, 'account');
    if (denied) return denied;
  }
  if (r.method === 'GET' && api === '/user') return json(200, { username: user, type: 'user' });
  if (r.method === 'GET' && api === '/user/permissions/workspaces') {
    const values = [...core.orgs]
      .filter(([, ms]) => ms.has(user))
      .map(([org, ms]) => ({ permission: ms.get(user) === 'owner' ? 'owner' : 'collaborator', workspace: { slug: org } }));
    return json(200, { values, pagelen: 100 });
  }
  if ((m = /^\/repositories\/([^/]+)\/([^/]+)$/.exec(api))) {
    const [owner, name] = [decodeURIComponent(m[1]!), decodeURIComponent(m[2]!)];
    const repo = core.repo(owner, name);
    const denied = lacks(
      r,
      ...({ POST: ['repository:admin'], DELETE: ['repository:delete'] }[r.method] ?? ['repository', 'repository:write']),
    );
    if (denied) return denied;
    if (r.method === 'POST') {
      if (!core.mayCreate(user, owner)) return json(403, { type: 'error', error: { message: 'forbidden' } });
      if (repo) return json(400, { type: 'error', error: { message: 'Repository with this Slug and Owner already exists.' } });
      await core.createRepo(owner, name);
      return json(200, {
        links: {
          clone: [
            { name: 'https', href: `${core.url.replace('//', `//${user}@`)}/${owner}/${name}.git` },
            { name: 'ssh', href: `git@127.0.0.1:${owner}/${name}.git` },
          ],
          html: { href: `${core.url}/${owner}/${name}` },
        },
      });
    }
    if (!repo || !core.mayCreate(user, repo.owner)) return json(404, { type: 'error', error: { message: 'Repository not found' } });
    if (r.method === 'GET') return json(200, { full_name: `${repo.owner}/${repo.name}` });
    if (r.method === 'DELETE') {
      core.repos.delete(core.repoKey(repo.owner, repo.name));
      return { status: 204 };
    }
  }
  if (r.method === 'POST' && (m = /^\/repositories\/([^/]+)\/([^/]+)\/hooks$/.exec(api))) {
    const denied = lacks(r, 'webhook');
    if (denied) return denied;
    const repo = core.repo(decodeURIComponent(m[1]!), decodeURIComponent(m[2]!));
    if (!repo || !core.mayCreate(user, repo.owner)) return json(404, { type: 'error', error: { message: 'Repository not found' } });
    const b = parseJson(r.body);
    const id = `{${crypto.randomUUID()}}`;
    repo.hooks.push({ id, url: b.url, secret: b.secret, active: b.active !== false });
    return json(201, { uuid: id, url: b.url, events: b.events });
  }
  if (r.method === 'GET' && (m = /^\/repositories\/([^/]+)\/([^/]+)\/refs\/branches\/([^/]+)$/.exec(api))) {
    const denied = lacks(r, 'repository', 'repository:write');
    if (denied) return denied;
    const repo = core.repo(decodeURIComponent(m[1]!), decodeURIComponent(m[2]!));
    const head = repo && (await git(['rev-parse', '--verify', '--quiet', `refs/heads/${decodeURIComponent(m[3]!)}`], repo.dir));
    return head?.code === 0
      ? json(200, { name: m[3], target: { hash: head.stdout.trim() } })
      : json(404, { type: 'error', error: { message: 'Branch not found' } });
  }
  return undefined;
}

const DIALECTS: Record<
  Kind,
  { label: string; routes: FakeForgeCore['route']; tokens: FakeForgeCore['tokens']; api: (web: string) => string }
> = {
  github: { label: 'GitHub (fake)', routes: githubRoutes, tokens: { lifetime: null, refresh: false }, api: (web) => `${web}/api/v3` },
  // Tokens that live 30 s: shorter than algohost's margin, so every use refreshes (and rotates) them.
  gitlab: { label: 'GitLab (fake)', routes: gitlabRoutes, tokens: { lifetime: 30, refresh: true }, api: (web) => `${web}/api/v4` },
  bitbucket: {
    label: 'Bitbucket Cloud (fake)',
    routes: bitbucketRoutes,
    tokens: { lifetime: 7200, refresh: true },
    api: (web) => `${web}/2.0`,
  },
};

/** Starts the fake of `kind` and answers it as a Forge of the contract suite. */
export async function startFakeForge(kind: Kind): Promise<Forge> {
  const dialect = DIALECTS[kind];
  const core = new FakeForgeCore(kind, dialect.tokens, dialect.routes);
  await core.start();
  return {
    label: dialect.label,
    provider: kind,
    signsBody: kind !== 'gitlab',
    async registerOAuthApp(redirectUri) {
      const id = crypto.randomBytes(8).toString('hex');
      const secret = crypto.randomBytes(16).toString('hex');
      // A Bitbucket consumer carries its permissions, ticked as docs/users-guide.md says.
      core.clients.set(id, {
        secret,
        redirectUri,
        ...(kind === 'bitbucket' ? { scopes: ['repository:write', 'repository:admin', 'webhook', 'account'] } : {}),
      });
      return { provider: kind, urls: { web: core.url, api: dialect.api(core.url) }, oauth: { client_id: id, client_secret: secret } };
    },
    async createUser(name) {
      const password = crypto.randomBytes(9).toString('hex');
      core.users.set(name, password);
      return { name, password };
    },
    async createOrganization(owner, name, reader) {
      core.orgs.set(
        name,
        new Map<string, 'owner' | 'reader'>([[owner.name, 'owner'], ...(reader ? [[reader.name, 'reader'] as const] : [])]),
      );
    },
    async consent(user: ForgeUser, authorizeUrl: string) {
      assert.ok(authorizeUrl.startsWith(core.url), authorizeUrl);
      const res = await fetch(authorizeUrl, { headers: { 'x-fake-user': user.name }, redirect: 'manual' });
      assert.equal(res.status, 302, await res.text());
      return res.headers.get('location')!;
    },
    async revokeGrants(user) {
      for (const g of core.grants.filter((x) => x.user === user.name)) g.revoked = true;
    },
    async createRepository(user, name) {
      await core.createRepo(user.name, name);
    },
    cloneUrl(user, owner, repo) {
      return `${core.url.replace('//', `//${encodeURIComponent(user.name)}:${encodeURIComponent(user.password)}@`)}/${owner}/${repo}.git`;
    },
    delivery: DELIVERIES[kind],
    async disableWebhooks(_user, owner, repo) {
      for (const h of core.repo(owner, repo)?.hooks ?? []) h.active = false;
    },
    stop: () => core.stop(),
  };
}
