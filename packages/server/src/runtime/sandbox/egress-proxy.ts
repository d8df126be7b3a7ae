/**
 * The only way out of a sandbox's network namespace: a small HTTP proxy on the host. With the
 * `registries` policy (build steps) it opens connections to the cluster's package registries and
 * to nothing else; with the `internet` policy (runners of `network_access: "full"` algorithms) to
 * public internet addresses only.
 *
 * A build step that needs the network runs with `network: 'registries'`: its own network
 * namespace (only its own loopback, so nothing of the host's loopback, abstract Unix sockets or
 * interfaces is reachable) with a channel of this proxy, a Unix socket, bind-mounted inside. A
 * tiny forwarder (FORWARDER, run by the system Python before the step's command) listens on
 * 127.0.0.1:EGRESS_PROXY_PORT inside and relays to that socket; the step's tools find it through
 * the usual proxy variables (egressProxyEnv).
 *
 * The proxy accepts `CONNECT host:port` and plain-HTTP forwarding (absolute URIs) to an allowed
 * host and port only (the registries' hosts and ALGOHOST_BUILD_EGRESS_ALLOW); everything else gets
 * 403. The name is resolved here and the connection made to the checked address, so DNS cannot
 * turn an allowed name into the host itself: loopback, link-local, unspecified, multicast and the
 * host's own addresses are refused unless the operator named that very address (a registry URL or
 * allow entry that is an IP literal or `localhost`); private ranges (10/8, 172.16/12, 192.168/16,
 * 100.64/10, fc00::/7) are reached only through names the operator configured (an internal
 * mirror), never through the built-in public registries.
 *
 * The `internet` policy lets any host and port through whose address is public, and refuses
 * everything a tenant must not reach from the node's position in the network: loopback,
 * link-local (the clouds' metadata services among them), unspecified, multicast, this host's own
 * addresses, private and shared ranges (the cluster's), IPv6 forms embedding any of those
 * (IPv4-mapped, -compatible, NAT64, 6to4), and the addresses of the node's own services (its
 * database, NATS, S3 endpoint, metrics address, SQS and Service Bus test endpoints) whatever
 * they are. Operators name private hosts runners may reach (ALGOHOST_RUNNER_EGRESS_ALLOW), as
 * for builds; the metadata addresses and the node's services stay refused even then.
 *
 * One channel (socket) per build step or runner, so that a step's refusals and the hosts it
 * reached are written to that build's log, and one sandbox's connections are capped on their own.
 */
import crypto from 'node:crypto';
import dns from 'node:dns';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/** The port the forwarder listens on inside a build sandbox (its network namespace is its own). */
export const EGRESS_PROXY_PORT = 3128;
export const EGRESS_PROXY_URL = `http://127.0.0.1:${EGRESS_PROXY_PORT}`;
/** Where a step's channel socket is bind-mounted inside its sandbox. */
export const EGRESS_SOCKET_INSIDE = '/run/algohost-egress.sock';

/** The proxy settings every networked build step gets (each tool reads its own). */
export function egressProxyEnv(): Record<string, string> {
  return {
    HTTP_PROXY: EGRESS_PROXY_URL,
    HTTPS_PROXY: EGRESS_PROXY_URL,
    http_proxy: EGRESS_PROXY_URL,
    https_proxy: EGRESS_PROXY_URL,
    NO_PROXY: '',
    no_proxy: '',
    npm_config_proxy: EGRESS_PROXY_URL,
    npm_config_https_proxy: EGRESS_PROXY_URL,
    CARGO_HTTP_PROXY: EGRESS_PROXY_URL,
  };
}

/** Java system properties sending the JVM's own HTTP(S) connections (sbt, Coursier…) through the proxy. */
export function jvmProxyProperties(): string {
  const p = String(EGRESS_PROXY_PORT);
  return `-Dhttp.proxyHost=127.0.0.1 -Dhttp.proxyPort=${p} -Dhttps.proxyHost=127.0.0.1 -Dhttps.proxyPort=${p} -Dhttp.nonProxyHosts=`;
}

/**
 * The forwarder, run as `python3 -I -S -c FORWARDER <port> <socket> <argv…>`: it binds the port
 * before anything else runs, forks a relay that lives as long as the sandbox (its pid namespace
 * ends with the command; PR_SET_PDEATHSIG too), then becomes the step's command.
 */
export const FORWARDER = String.raw`
import os, socket, sys, threading
port, path, argv = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
lst = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
lst.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
lst.bind(("127.0.0.1", port))
lst.listen(256)
if os.fork() == 0:
    try:
        import ctypes
        ctypes.CDLL(None).prctl(1, 9)
    except Exception:
        pass
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    def pipe(a, b):
        try:
            while True:
                data = a.recv(65536)
                if not data:
                    break
                b.sendall(data)
        except OSError:
            pass
        try:
            b.shutdown(socket.SHUT_WR)
        except OSError:
            pass
    def serve(c):
        u = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            u.connect(path)
        except OSError:
            c.close()
            return
        t = threading.Thread(target=pipe, args=(u, c), daemon=True)
        t.start()
        pipe(c, u)
        t.join()
        c.close()
        u.close()
    while True:
        try:
            c, _ = lst.accept()
        except OSError:
            continue
        threading.Thread(target=serve, args=(c,), daemon=True).start()
lst.close()
try:
    os.execvp(argv[0], argv)
except OSError as e:
    sys.stderr.write("cannot run %s: %s\n" % (argv[0], e))
    sys.exit(127)
`;

/** `argv` wrapped so that the forwarder runs first (python3 is part of every installation). */
export function withForwarder(argv: string[]): string[] {
  return ['/usr/bin/python3', '-I', '-S', '-c', FORWARDER, String(EGRESS_PROXY_PORT), EGRESS_SOCKET_INSIDE, ...argv];
}

export interface EgressTarget {
  host: string;
  port: number;
  /** Named by the operator (a registry setting or the allow list), not a built-in default. */
  configured: boolean;
}

export class EgressConfigError extends Error {}

/** `host[:port]` (default port 443), `[v6]:port`, or a URL (its host and port). */
export function parseEgressEntry(text: string, configured = true): EgressTarget {
  const raw = text.trim();
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(raw)) {
    const t = urlTarget(raw, configured);
    if (!t) throw new EgressConfigError(`"${text}" is not an http(s) URL`);
    return t;
  }
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:\s/[\]]+))(?::(\d{1,5}))?$/.exec(raw);
  const port = m?.[3] ? Number(m[3]) : 443;
  if (!m || port < 1 || port > 65535) {
    throw new EgressConfigError(`"${text}" is not host[:port] (for example nexus.example.com:8443)`);
  }
  return { host: normalizeHost(m[1] ?? m[2]!), port, configured };
}

/** The host and port of an http(s) registry URL (`sparse+https://…` too); undefined for file: and the like. */
export function urlTarget(url: string, configured: boolean): EgressTarget | undefined {
  let u: URL;
  try {
    u = new URL(url.replace(/^(sparse|registry)\+/, ''));
  } catch {
    return undefined;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return undefined;
  const port = u.port ? Number(u.port) : u.protocol === 'https:' ? 443 : 80;
  return { host: normalizeHost(u.hostname), port, configured };
}

function normalizeHost(host: string): string {
  return host
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '');
}

const LOCAL = subnets([
  ['127.0.0.0', 8, 'ipv4'],
  ['0.0.0.0', 8, 'ipv4'],
  ['169.254.0.0', 16, 'ipv4'],
  ['224.0.0.0', 4, 'ipv4'],
  ['240.0.0.0', 4, 'ipv4'],
  ['::1', 128, 'ipv6'],
  ['::', 128, 'ipv6'],
  ['fe80::', 10, 'ipv6'],
  ['100::', 64, 'ipv6'],
  ['ff00::', 8, 'ipv6'],
]);
const PRIVATE = subnets([
  ['10.0.0.0', 8, 'ipv4'],
  ['172.16.0.0', 12, 'ipv4'],
  ['192.168.0.0', 16, 'ipv4'],
  ['100.64.0.0', 10, 'ipv4'],
  // IETF protocol assignments and the benchmarking range, used inside networks, not on the internet.
  ['192.0.0.0', 24, 'ipv4'],
  ['198.18.0.0', 15, 'ipv4'],
  ['fc00::', 7, 'ipv6'],
  ['fec0::', 10, 'ipv6'],
]);

function subnets(list: [string, number, 'ipv4' | 'ipv6'][]): net.BlockList {
  const b = new net.BlockList();
  for (const [a, prefix, type] of list) b.addSubnet(a, prefix, type);
  return b;
}

/**
 * Addresses of the clouds' instance metadata and host services (AWS's IPv4 and IPv6 metadata,
 * ECS's credentials, GCP's and Azure's at 169.254.169.254, Azure's WireServer, Alibaba's): they
 * hand out the node's own credentials, so no sandbox reaches them even through an operator's
 * allow entry.
 */
const METADATA = subnets([
  ['169.254.0.0', 16, 'ipv4'],
  ['168.63.129.16', 32, 'ipv4'],
  ['100.100.100.200', 32, 'ipv4'],
  ['fd00:ec2::', 32, 'ipv6'],
]);

/** The eight 16-bit words of an IPv6 address (a trailing dotted quad included), or undefined. */
function ipv6Words(address: string): number[] | undefined {
  if (!net.isIPv6(address)) return undefined;
  let text = address.toLowerCase().replace(/%.*$/, '');
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (quad) {
    const [a, b, c, d] = quad.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const part = (s: string) => (s === '' ? [] : s.split(':').map((w) => parseInt(w, 16)));
  const first = part(head);
  const last = tail === undefined ? [] : part(tail);
  return [...first, ...Array<number>(8 - first.length - last.length).fill(0), ...last];
}

const quadOf = (hi: number, lo: number) => `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;

/**
 * The address as the one a connection to it reaches: an IPv6 address that carries an IPv4 address
 * (IPv4-mapped ::ffff:a.b.c.d, IPv4-compatible ::a.b.c.d, NAT64 64:ff9b::/96, 6to4 2002::/16) is
 * that IPv4 address, so that no IPv6 spelling of 127.0.0.1 or 10.0.0.1 passes as public.
 */
export function canonicalAddress(address: string): string {
  const w = ipv6Words(address);
  if (!w) return address;
  const zero = (from: number, to: number) => w.slice(from, to).every((x) => x === 0);
  if (zero(0, 5) && w[5] === 0xffff) return quadOf(w[6]!, w[7]!);
  // ::a.b.c.d, but not :: and ::1 themselves.
  if (zero(0, 6) && (w[6] !== 0 || w[7]! > 1)) return quadOf(w[6]!, w[7]!);
  if (w[0] === 0x64 && w[1] === 0xff9b && zero(2, 6)) return quadOf(w[6]!, w[7]!);
  if (w[0] === 0x2002) return quadOf(w[1]!, w[2]!);
  return w.map((x) => x.toString(16)).join(':');
}

/** A cloud metadata or host-service address (METADATA), in any spelling. */
export function isMetadataAddress(address: string): boolean {
  const a = canonicalAddress(address);
  return METADATA.check(a, net.isIPv6(a) ? 'ipv6' : 'ipv4');
}

/**
 * A host name that the system resolver would read as an IPv4 address in another form (2130706433,
 * 0x7f.1, 0177.0.0.1): refused as it stands, so that only canonical addresses are ever named.
 */
export function isNumericHostForm(host: string): boolean {
  return !net.isIPv4(host) && /^(?:0x[0-9a-f]*|\d+)(?:\.(?:0x[0-9a-f]*|\d+)){0,3}\.?$/i.test(host);
}

export type AddressClass = 'public' | 'private' | 'local';

/** `local`: loopback, link-local, unspecified, multicast or one of the host's own addresses. */
export function classifyAddress(address: string): AddressClass {
  const a = canonicalAddress(address);
  const type = net.isIPv6(a) ? 'ipv6' : 'ipv4';
  if (LOCAL.check(a, type)) return 'local';
  for (const list of Object.values(os.networkInterfaces())) {
    for (const i of list ?? []) if (canonicalAddress(i.address).toLowerCase() === a.toLowerCase()) return 'local';
  }
  if (PRIVATE.check(a, type)) return 'private';
  return 'public';
}

export type Lookup = (host: string) => Promise<{ address: string; family: number }[]>;
const systemLookup: Lookup = (host) => dns.promises.lookup(host, { all: true, verbatim: true });

/**
 * `registries`: only the hosts of `allow` (build steps). `internet`: any host and port at a public
 * address, and the hosts of `allow` at private ones too (runners of full-network algorithms).
 */
export type EgressPolicy = 'registries' | 'internet';

/** Open connections (to the proxy) of one channel beyond which new ones are closed at once. */
export const DEFAULT_CHANNEL_CONNECTIONS = 128;
/** How long the resolved addresses of the node's services are used before they are looked up again. */
const SERVICE_ADDRESSES_TTL_MS = 60_000;

export interface EgressProxyOptions {
  /** Directory of the channel sockets (created 0711). */
  dir: string;
  allow: EgressTarget[];
  /** Default `registries`. */
  policy?: EgressPolicy;
  /**
   * The node's own services (URLs or host[:port]: database, NATS, S3, metrics…): their addresses
   * are never reached, whatever the policy and the allow list say.
   */
  services?: string[];
  /** Open connections per channel (default DEFAULT_CHANNEL_CONNECTIONS), so one sandbox cannot exhaust the node's sockets. */
  maxConnectionsPerChannel?: number;
  /** Name resolution (tests replace it). */
  lookup?: Lookup;
  connectTimeoutMs?: number;
}

export interface EgressChannel {
  /** Host path of the socket to bind into the sandbox at EGRESS_SOCKET_INSIDE. */
  socket: string;
  /** Stops the channel (open tunnels end) and logs what the step reached. */
  close(): Promise<void>;
}

class Refusal extends Error {}

const MAX_LOGGED_REFUSALS = 20;

export class EgressProxy {
  private readonly allowed = new Map<string, EgressTarget>();
  private readonly lookup: Lookup;
  private readonly channels = new Set<EgressChannel>();
  private readonly policy: EgressPolicy;
  private serviceAddresses: { at: number; addresses: Promise<Set<string>> } | undefined;

  constructor(private readonly opts: EgressProxyOptions) {
    for (const t of opts.allow) this.allowed.set(`${t.host}:${t.port}`, t);
    this.lookup = opts.lookup ?? systemLookup;
    this.policy = opts.policy ?? 'registries';
  }

  /** Creates the socket directory (emptied of sockets a stopped node left); called once at start-up. */
  prepare(): void {
    /* eslint-disable no-restricted-syntax -- start-up only: the composition root calls prepare() before the server listens */
    fs.mkdirSync(this.opts.dir, { recursive: true, mode: 0o711 });
    fs.chmodSync(this.opts.dir, 0o711);
    for (const name of fs.readdirSync(this.opts.dir))
      if (name.endsWith('.sock')) fs.rmSync(path.join(this.opts.dir, name), { force: true });
    /* eslint-enable no-restricted-syntax */
  }

  /** The allowed destinations, for messages. */
  describe(): string {
    return [...this.allowed.keys()].join(', ') || 'none';
  }

  /**
   * The canonical addresses of the node's services, looked up at most once a minute (a service
   * that moves is refused at its new address within a minute). A name that does not resolve
   * adds nothing: there is nothing there to reach.
   */
  private services(): Promise<Set<string>> {
    const now = Date.now();
    if (this.serviceAddresses && now - this.serviceAddresses.at < SERVICE_ADDRESSES_TTL_MS) return this.serviceAddresses.addresses;
    const addresses = (async () => {
      const out = new Set<string>();
      await Promise.all(
        (this.opts.services ?? []).map(async (entry) => {
          const host = serviceHost(entry);
          if (!host) return;
          if (net.isIP(host)) {
            out.add(canonicalAddress(host));
            return;
          }
          try {
            for (const { address } of await this.lookup(host)) out.add(canonicalAddress(address));
          } catch {
            // Not resolvable now: nothing to refuse there.
          }
        }),
      );
      return out;
    })();
    this.serviceAddresses = { at: now, addresses };
    return addresses;
  }

  /** A new socket for one build step or runner; `log` receives its refusals and, on close, what it reached. */
  async open(log: (text: string) => void = () => {}): Promise<EgressChannel> {
    const socket = path.join(this.opts.dir, `${crypto.randomBytes(9).toString('base64url')}.sock`);
    const reached = new Map<string, number>();
    let refused = 0;
    const sockets = new Set<net.Socket>();
    const refuse = (what: string, why: string) => {
      refused++;
      if (refused <= MAX_LOGGED_REFUSALS) log(`[egress] refused ${what}: ${why}\n`);
    };
    const server = http.createServer((req, res) => void this.forward(req, res, reached, refuse));
    server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
      sockets.add(client);
      client.on('close', () => sockets.delete(client));
      void this.tunnel(req, client, head, reached, refuse, sockets);
    });
    server.on('connection', (s: net.Socket) => {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    });
    server.on('clientError', (_err, s: net.Socket) => s.destroy());
    // Past this many open connections new ones are closed at once: each holds a socket (and a
    // tunnel's upstream one) of this process, which serves every tenant.
    server.maxConnections = this.opts.maxConnectionsPerChannel ?? DEFAULT_CHANNEL_CONNECTIONS;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(socket, () => resolve());
    });
    // The sandbox user connects to it; the directory is not listable and the name unguessable.
    await fs.promises.chmod(socket, 0o666);
    let closing: Promise<void> | undefined;
    const channel: EgressChannel = {
      socket,
      close: () =>
        (closing ??= (async () => {
          this.channels.delete(channel);
          await new Promise<void>((resolve) => {
            server.close(() => resolve());
            for (const s of sockets) s.destroy();
          });
          await fs.promises.rm(socket, { force: true });
          if (refused > MAX_LOGGED_REFUSALS) log(`[egress] ${refused - MAX_LOGGED_REFUSALS} more connections refused\n`);
          if (reached.size > 0) {
            log(`[egress] reached ${[...reached].map(([dest, n]) => `${dest} (${n}×)`).join(', ')}\n`);
          }
        })()),
    };
    this.channels.add(channel);
    return channel;
  }

  async stop(): Promise<void> {
    await Promise.all([...this.channels].map((c) => c.close()));
  }

  /** The address to connect to for an allowed destination, or a Refusal saying why not. */
  private async resolve(hostText: string, port: number): Promise<{ address: string }> {
    const host = normalizeHost(hostText);
    if (isNumericHostForm(host)) throw new Refusal(`${host} is an address in a non-canonical form: name it as a.b.c.d`);
    const target = this.allowed.get(`${host}:${port}`);
    if (!target && this.policy === 'registries') {
      throw new Refusal(`${host}:${port} is not a package registry of this cluster (allowed: ${this.describe()})`);
    }
    const configured = target?.configured ?? false;
    // An address the operator named as such is reached whatever it is (but see below).
    const namedAddress = (net.isIP(host) !== 0 || host === 'localhost') && configured;
    let addresses: { address: string }[];
    try {
      addresses = net.isIP(host) ? [{ address: host }] : await this.lookup(host);
    } catch (err) {
      throw new Refusal(`cannot resolve ${host}: ${(err as Error).message}`);
    }
    const services = this.policy === 'internet' ? await this.services() : new Set<string>();
    const usable = addresses.find(({ address }) => {
      // Never: the metadata services hand out the node's credentials; the node's services are its own.
      if (isMetadataAddress(address) || services.has(canonicalAddress(address))) return false;
      if (namedAddress) return true;
      const cls = classifyAddress(address);
      return cls === 'public' || (cls === 'private' && configured);
    });
    if (!usable) {
      throw new Refusal(
        `${host} resolves to ${addresses.map((a) => a.address).join(', ') || 'nothing'}: loopback, link-local, metadata, private, this host's own addresses and the node's services are not reached`,
      );
    }
    return { address: usable.address };
  }

  private async tunnel(
    req: http.IncomingMessage,
    client: net.Socket,
    head: Buffer,
    reached: Map<string, number>,
    refuse: (what: string, why: string) => void,
    sockets: Set<net.Socket>,
  ): Promise<void> {
    client.on('error', () => {});
    const authority = req.url ?? '';
    const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:\s/[\]]+)):(\d{1,5})$/.exec(authority);
    if (!m) {
      refuse(`CONNECT ${authority}`, 'not host:port');
      client.end(statusLine(400, 'Bad Request', 'CONNECT needs host:port'));
      return;
    }
    const port = Number(m[3]);
    let address: string;
    try {
      ({ address } = await this.resolve(m[1] ?? m[2]!, port));
    } catch (err) {
      if (!(err instanceof Refusal)) throw err;
      refuse(`CONNECT ${authority}`, err.message);
      client.end(statusLine(403, this.refusedReason(), err.message));
      return;
    }
    if (client.destroyed) return;
    const upstream = net.connect({ host: address, port });
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    let established = false;
    const timer = setTimeout(() => upstream.destroy(new Error('connect timed out')), this.opts.connectTimeoutMs ?? 30_000);
    upstream.once('connect', () => {
      clearTimeout(timer);
      established = true;
      const dest = `${normalizeHost(m[1] ?? m[2]!)}:${port}`;
      reached.set(dest, (reached.get(dest) ?? 0) + 1);
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on('error', (err) => {
      clearTimeout(timer);
      if (established) client.destroy();
      else client.end(statusLine(502, 'Bad Gateway', `cannot reach ${authority}: ${err.message}`));
    });
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => {
      if (established) client.destroy();
    });
  }

  private refusedReason(): string {
    return this.policy === 'registries' ? 'Not a package registry (algohost build egress)' : 'Not a public address (algohost egress)';
  }

  /** Plain HTTP through the proxy (an absolute http:// URI), for registries served over http. */
  private async forward(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    reached: Map<string, number>,
    refuse: (what: string, why: string) => void,
  ): Promise<void> {
    let url: URL;
    try {
      url = new URL(req.url ?? '');
    } catch {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('this is a proxy: send an absolute http:// URI or CONNECT\n');
      return;
    }
    if (url.protocol !== 'http:') {
      refuse(`${req.method} ${url.origin}`, 'only http:// is forwarded; use CONNECT for https');
      res.writeHead(400, { 'content-type': 'text/plain' }).end('only http:// is forwarded; use CONNECT for https\n');
      return;
    }
    const port = url.port ? Number(url.port) : 80;
    let address: string;
    try {
      ({ address } = await this.resolve(url.hostname, port));
    } catch (err) {
      if (!(err instanceof Refusal)) throw err;
      refuse(`${req.method} ${url.origin}`, err.message);
      res.writeHead(403, this.refusedReason(), { 'content-type': 'text/plain' }).end(`${err.message}\n`);
      return;
    }
    const headers: http.OutgoingHttpHeaders = {};
    const hopByHop = new Set(['connection', 'proxy-connection', 'proxy-authorization', 'keep-alive', 'te', 'trailer', 'upgrade']);
    for (const name of (req.headers.connection ?? '').split(',')) hopByHop.add(name.trim().toLowerCase());
    for (const [name, value] of Object.entries(req.headers)) if (!hopByHop.has(name) && value !== undefined) headers[name] = value;
    headers.host = url.host;
    const dest = `${normalizeHost(url.hostname)}:${port}`;
    const upstream = http.request(
      {
        host: address,
        port,
        method: req.method,
        path: `${url.pathname}${url.search}`,
        headers,
        timeout: this.opts.connectTimeoutMs ?? 30_000,
      },
      (up) => {
        reached.set(dest, (reached.get(dest) ?? 0) + 1);
        const out: http.OutgoingHttpHeaders = {};
        for (const [name, value] of Object.entries(up.headers)) if (!hopByHop.has(name) && value !== undefined) out[name] = value;
        res.writeHead(up.statusCode ?? 502, up.statusMessage, out);
        up.pipe(res);
      },
    );
    upstream.on('timeout', () => upstream.destroy(new Error('timed out')));
    upstream.on('error', (err) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' }).end(`${err.message}\n`);
      else res.destroy();
    });
    req.pipe(upstream);
  }
}

/** The host of a service setting: a URL (postgres://…, nats://…, http://…) or host[:port]. */
function serviceHost(entry: string): string | undefined {
  const text = entry.trim();
  if (text === '') return undefined;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) {
    try {
      const host = new URL(text).hostname;
      return host === '' ? undefined : normalizeHost(host);
    } catch {
      return undefined;
    }
  }
  try {
    return parseEgressEntry(text).host;
  } catch {
    return undefined;
  }
}

function statusLine(code: number, reason: string, body: string): string {
  const text = `${body}\n`;
  return `HTTP/1.1 ${code} ${reason}\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`;
}
