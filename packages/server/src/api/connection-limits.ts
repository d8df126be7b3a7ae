/**
 * Limits on connections that Node's HTTP server does not have.
 *
 * TCP (the API and Git): how many connections the node holds in all and per client address
 * (IPv6: per /64). Past the per-address cap a connection is answered 503 and closed at once. At
 * the node's cap a new connection still gets in: the guard closes an idle connection to make
 * room (one with no request in progress: an idle head, or a keep-alive between requests),
 * the longest-held of the client that holds the most, and one on which no request ever
 * authenticated before one that did. So idle connections alone, from any number of addresses,
 * never lock a client out; only when every held connection is busy with a request is a new
 * one answered 503.
 *
 * The API socket of sandboxes (api/sandbox-sockets.ts) is counted there, per sandbox, and not
 * here: a tenant's runners never use up what the node keeps for its TCP clients.
 *
 * Also a minimum rate at which a request body must arrive (both kinds). Node's own
 * `headersTimeout` closes connections that send no (complete) request head, `keepAliveTimeout`
 * idle ones between requests, and `requestTimeout` bounds receiving one whole request; those
 * are set where the server is made (app.ts).
 */
import type http from 'node:http';
import type net from 'node:net';
import { Errors } from '../domain/errors.js';
import { Tally } from '../lib/tally.js';

export interface ConnectionLimits {
  /** TCP connections held at once by every TCP server attached. */
  maxConnections: number;
  /** Connections one client address (IPv6: one /64) may hold; 0 = no per-client limit. */
  maxPerClient: number;
  /** Window in which a request body must bring `minBodyBytesPerSecond`; 0 = no check. */
  bodyTimeoutMs: number;
  minBodyBytesPerSecond: number;
  /** Milliseconds since the epoch (default Date.now; tests pass their own). */
  now?: () => number;
}

/**
 * One held connection: its client (TCP) and, while a request body is on its way, that request
 * (HTTP/1.1 receives one body at a time on a connection). Made once per connection and reused by
 * each of its requests: see below.
 */
interface Connection {
  socket: net.Socket;
  /** TCP: the client address it counts against; undefined on the API socket of sandboxes. */
  client: string | undefined;
  req: http.IncomingMessage | undefined;
  res: http.ServerResponse | undefined;
  bytes: number;
  since: number;
}

/** How many of the longest-held candidates are weighed when room is made (see makeRoom). */
const EVICTION_CANDIDATES = 32;

export class ConnectionGuard {
  private total = 0;
  private readonly perClient = new Tally<string>();
  /**
   * Every held connection, longest-held first. Kept per connection rather than per request: a
   * Map that took and forgot an entry for every request churned V8's hash tables, and the
   * obsolete tables carried finished requests into the old generation (lib/tally.ts says how).
   */
  private readonly connections = new Map<net.Socket, Connection>();
  /** The TCP connections on which no request authenticated yet, longest-held first. */
  private readonly anonymous = new Map<net.Socket, Connection>();
  private timer: NodeJS.Timeout | undefined;
  /** Forgets a request whose body has arrived (made once: a closure per request is a cost too). */
  private readonly bodyReceived: (this: http.IncomingMessage) => void;

  private readonly now: () => number;

  constructor(readonly limits: ConnectionLimits) {
    this.now = limits.now ?? Date.now;
    const connections = this.connections;
    this.bodyReceived = function (this: http.IncomingMessage) {
      const r = connections.get(this.socket);
      if (r?.req === this) forget(r);
    };
  }

  /** Starts the body-rate check (the node's start step: making the guard starts no timer). */
  start(): void {
    if (this.timer || this.limits.bodyTimeoutMs <= 0) return;
    this.timer = setInterval(() => this.checkBodies(), Math.max(50, Math.floor(this.limits.bodyTimeoutMs / 4)));
    this.timer.unref();
  }

  /** Connections held now. */
  get open(): number {
    return this.total;
  }

  /**
   * Watches `server`'s connections; `tcp`: also holds them to the node's caps (the API socket of
   * sandboxes has its own, per sandbox: api/sandbox-sockets.ts).
   */
  attach(server: http.Server, opts: { tcp: boolean }): void {
    server.on('connection', (socket: net.Socket) => this.admit(socket, opts.tcp));
    if (this.limits.bodyTimeoutMs > 0) server.on('request', (req, res) => this.watchBody(req, res));
  }

  /**
   * A request on `socket` authenticated: the connection is kept over those on which none did
   * when room is made. Called on every authenticated request; after the first it is one lookup.
   */
  markAuthenticated(socket: net.Socket): void {
    if (this.anonymous.has(socket)) this.anonymous.delete(socket);
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.connections.clear();
    this.anonymous.clear();
  }

  private admit(socket: net.Socket, tcp: boolean): void {
    const client = tcp ? clientOf(socket.remoteAddress) : undefined;
    if (client !== undefined) {
      if (this.limits.maxPerClient > 0 && this.perClient.get(client) >= this.limits.maxPerClient) {
        return refuse(socket, 503, `too many connections from ${client}: at most ${this.limits.maxPerClient} at once`);
      }
      if (this.total >= this.limits.maxConnections && !this.makeRoom()) {
        return refuse(
          socket,
          503,
          `the server holds as many connections as it may (${this.limits.maxConnections}), all busy with requests; retry shortly`,
        );
      }
      this.perClient.add(client, 1);
      this.total++;
    }
    const c: Connection = { socket, client, req: undefined, res: undefined, bytes: 0, since: 0 };
    this.connections.set(socket, c);
    if (client !== undefined) this.anonymous.set(socket, c);
    socket.once('close', () => this.release(c));
  }

  /** Stops counting a connection (once: when it closes, or earlier when it is closed for room). */
  private release(c: Connection): void {
    if (this.connections.get(c.socket) !== c) return;
    this.connections.delete(c.socket);
    this.anonymous.delete(c.socket);
    if (c.client !== undefined) {
      this.total--;
      this.perClient.add(c.client, -1);
    }
  }

  /**
   * At the node's cap: closes one idle TCP connection so a new one can be held; false when every
   * held connection is busy with a request. Among the longest-held idle connections on which no
   * request authenticated (or, with none, those on which one did) it takes the one whose client
   * holds the most connections: a flood from some addresses makes room out of its own.
   * Looking at a few candidates only keeps this cheap under a flood of new connections.
   */
  private makeRoom(): boolean {
    const victim = this.idlest(this.anonymous.values()) ?? this.idlest(this.connections.values());
    if (victim === undefined) return false;
    this.release(victim);
    // Idle: no request to answer; the client sees the connection closed, as after a keep-alive timeout.
    victim.socket.destroy();
    return true;
  }

  private idlest(candidates: Iterable<Connection>): Connection | undefined {
    let best: Connection | undefined;
    let bestHeld = -1;
    let seen = 0;
    for (const c of candidates) {
      if (c.client === undefined || !isIdle(c.socket)) continue;
      const held = this.perClient.get(c.client);
      if (held > bestHeld) {
        best = c;
        bestHeld = held;
      }
      if (++seen >= EVICTION_CANDIDATES) break;
    }
    return best;
  }

  private watchBody(req: http.IncomingMessage, res: http.ServerResponse): void {
    if (req.complete) return;
    const length = req.headers['content-length'];
    if ((length === undefined || length === '0') && req.headers['transfer-encoding'] === undefined) return;
    const r = this.connections.get(req.socket);
    if (!r) return;
    r.req = req;
    r.res = res;
    r.bytes = req.socket.bytesRead;
    r.since = this.now();
    req.on('end', this.bodyReceived);
  }

  /**
   * Every request still receiving its body must have brought `minBodyBytesPerSecond` over the
   * last window. Time in which the server itself holds the body back (its reader is slower:
   * git, a blob store) does not count against the client.
   */
  private checkBodies(): void {
    const now = this.now();
    const { bodyTimeoutMs, minBodyBytesPerSecond } = this.limits;
    for (const [socket, r] of this.connections) {
      const req = r.req;
      if (!req) continue;
      if (req.complete || req.destroyed || socket.destroyed) {
        forget(r);
        continue;
      }
      if (req.readableLength > 0 || req.readableFlowing === false) {
        r.bytes = socket.bytesRead;
        r.since = now;
        continue;
      }
      const elapsed = now - r.since;
      if (elapsed < bodyTimeoutMs) continue;
      const got = socket.bytesRead - r.bytes;
      if (got < (minBodyBytesPerSecond * elapsed) / 1000) {
        const res = r.res!;
        forget(r);
        const message = `the request body arrived too slowly: at least ${minBodyBytesPerSecond} bytes per second over ${bodyTimeoutMs / 1000} s`;
        if (res.headersSent) socket.destroy();
        else refuse(socket, 408, message);
        continue;
      }
      r.bytes = socket.bytesRead;
      r.since = now;
    }
  }
}

/**
 * No request in progress on the connection: none received yet (or only part of its head), or
 * between requests. Node's own `closeIdleConnections` looks at the same field: the response a
 * connection is busy with, from a complete request head until the answer is finished.
 */
function isIdle(socket: net.Socket): boolean {
  return !(socket as net.Socket & { _httpMessage?: unknown })._httpMessage;
}

function forget(r: Connection): void {
  r.req = undefined;
  r.res = undefined;
}

/** The client a connection counts against: its address; IPv6 addresses by their /64 network. */
export function clientOf(address: string | undefined): string {
  if (!address) return 'unknown';
  if (address.startsWith('::ffff:') && address.includes('.')) return address.slice(7);
  if (!address.includes(':')) return address;
  const [head = '', tail = ''] = address.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = address.includes('::') ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right] : left;
  return `${groups
    .slice(0, 4)
    .map((g) => (parseInt(g, 16) || 0).toString(16))
    .join(':')}::/64`;
}

/** Answers with a bare HTTP error and closes: no parser, no route, nothing kept. */
export function refuse(socket: net.Socket, status: 408 | 503, message: string): void {
  const body = JSON.stringify({ error: { code: status === 408 ? Errors.badRequest.code : Errors.unavailable.code, message } });
  const head =
    `HTTP/1.1 ${status} ${status === 408 ? 'Request Timeout' : 'Service Unavailable'}\r\n` +
    `Connection: close\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
    `X-Error-Message: ${message.replace(/[^\x20-\x7e]/g, ' ')}\r\n${status === 503 ? 'Retry-After: 5\r\n' : ''}\r\n`;
  socket.end(head + body);
  // A client that does not read its answer does not keep the descriptor.
  setTimeout(() => socket.destroy(), 1000).unref();
}
