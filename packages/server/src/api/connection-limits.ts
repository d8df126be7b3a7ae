/**
 * Limits on connections that Node's HTTP server does not have: how many connections the node
 * holds in all and per client address (the rest are answered 503 and closed at once), and a
 * minimum rate at which a request body must arrive. Node's own `headersTimeout` closes
 * connections that send no (complete) request head, `keepAliveTimeout` idle ones between
 * requests, and `requestTimeout` bounds receiving one whole request; those are set where the
 * server is made (app.ts). Together they keep idle or trickling clients from using up the
 * process's file descriptors.
 */
import type http from 'node:http';
import type net from 'node:net';
import { Errors } from '../domain/errors.js';
import { Tally } from '../lib/tally.js';

export interface ConnectionLimits {
  /** Connections held at once by every server attached (TCP and the API's Unix socket). */
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
 * One connection's request whose body is on its way (HTTP/1.1 receives one body at a time on a
 * connection). Made once per connection and reused by each of its requests: see below.
 */
interface Receiving {
  req: http.IncomingMessage | undefined;
  res: http.ServerResponse | undefined;
  bytes: number;
  since: number;
}

export class ConnectionGuard {
  private total = 0;
  private readonly perClient = new Tally<string>();
  /**
   * The body-rate watch of each open connection. Kept per connection rather than per request: a
   * Map that took and forgot an entry for every request churned V8's hash tables, and the
   * obsolete tables carried finished requests into the old generation (lib/tally.ts says how).
   */
  private readonly connections = new Map<net.Socket, Receiving>();
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
    if (limits.bodyTimeoutMs > 0) {
      this.timer = setInterval(() => this.checkBodies(), Math.max(50, Math.floor(limits.bodyTimeoutMs / 4)));
      this.timer.unref();
    }
  }

  /** Connections held now. */
  get open(): number {
    return this.total;
  }

  /** Counts `server`'s connections; `byAddress`: also per client address (TCP servers). */
  attach(server: http.Server, opts: { byAddress: boolean }): void {
    server.on('connection', (socket: net.Socket) => this.admit(socket, opts.byAddress));
    if (this.limits.bodyTimeoutMs > 0) server.on('request', (req, res) => this.watchBody(req, res));
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.connections.clear();
  }

  private admit(socket: net.Socket, byAddress: boolean): void {
    const client = byAddress ? clientOf(socket.remoteAddress) : undefined;
    if (this.total >= this.limits.maxConnections) {
      return refuse(socket, 503, `the server holds as many connections as it may (${this.limits.maxConnections}); retry shortly`);
    }
    if (client !== undefined && this.limits.maxPerClient > 0) {
      const mine = this.perClient.get(client);
      if (mine >= this.limits.maxPerClient) {
        return refuse(socket, 503, `too many connections from ${client}: at most ${this.limits.maxPerClient} at once`);
      }
      this.perClient.add(client, 1);
    }
    this.total++;
    if (this.limits.bodyTimeoutMs > 0) this.connections.set(socket, { req: undefined, res: undefined, bytes: 0, since: 0 });
    socket.once('close', () => {
      this.total--;
      this.connections.delete(socket);
      if (client !== undefined && this.limits.maxPerClient > 0) this.perClient.add(client, -1);
    });
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

function forget(r: Receiving): void {
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
function refuse(socket: net.Socket, status: 408 | 503, message: string): void {
  const body = JSON.stringify({ error: { code: status === 408 ? Errors.badRequest.code : Errors.unavailable.code, message } });
  const head =
    `HTTP/1.1 ${status} ${status === 408 ? 'Request Timeout' : 'Service Unavailable'}\r\n` +
    `Connection: close\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
    `X-Error-Message: ${message.replace(/[^\x20-\x7e]/g, ' ')}\r\n${status === 503 ? 'Retry-After: 5\r\n' : ''}\r\n`;
  socket.end(head + body);
  // A client that does not read its answer does not keep the descriptor.
  setTimeout(() => socket.destroy(), 1000).unref();
}
