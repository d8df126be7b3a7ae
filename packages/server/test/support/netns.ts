/**
 * A small network for cluster tests: each node in a network namespace of its own with its own
 * address on a bridge, so nothing passes between nodes but what goes through the services. The
 * services (PostgreSQL, NATS, S3 from scripts/with-services.sh) listen on loopback of the host;
 * the test process forwards a port on the bridge's address to each (plain TCP, both ways).
 *
 * Needs root and iproute2; `available()` says whether this machine can. Nodes are started through
 * `nsenter --net` (only the network namespace changes: `ip netns exec` would also remount /sys
 * and hide the cgroup mounts the sandbox needs).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';

export interface Lan {
  /** The host's address on the bridge: what nodes use to reach the forwarded services. */
  gateway: string;
  /** Makes a namespace with the next address; returns the command prefix that runs in it and the address. */
  join(): Promise<{ prefix: string[]; address: string }>;
  /** Forwards `gateway:<returned port>` to `127.0.0.1:<port>`. */
  forward(port: number): Promise<number>;
  /** Rewrites a URL on 127.0.0.1 to its forwarded address on the bridge. */
  forwardUrl(url: string): Promise<string>;
  /**
   * Makes `127.0.0.1:<port>` inside every namespace (those made before and after) reach the
   * host's `127.0.0.1:<port>`: for a service that hands its own address to clients (a Kafka
   * broker's metadata names the listener it advertises, which the clients connect to next).
   */
  loopback(port: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * The relay's program (argv: port, gateway, forwarded port): says "ready" once it listens, and
 * ends when its stdin closes, so it never outlives the test process.
 */
const RELAY = `
const net = require('node:net');
const [port, host, forwarded] = process.argv.slice(1);
const server = net.createServer((client) => {
  const upstream = net.connect(Number(forwarded), host);
  const drop = () => { client.destroy(); upstream.destroy(); };
  client.on('error', drop);
  upstream.on('error', drop);
  client.pipe(upstream).pipe(client);
});
server.listen(Number(port), '127.0.0.1', () => console.log('ready'));
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
`;

export function available(): boolean {
  if (process.getuid?.() !== 0 || !fs.existsSync('/usr/sbin/ip') || !fs.existsSync('/usr/bin/nsenter')) return false;
  const probe = `ahp${crypto.randomBytes(3).toString('hex')}`;
  try {
    ip('netns', 'add', probe);
    ip('netns', 'del', probe);
    return true;
  } catch {
    return false;
  }
}

function ip(...args: string[]): void {
  execFileSync('/usr/sbin/ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

export function createLan(): Lan {
  const tag = crypto.randomBytes(2).toString('hex');
  const subnet = `10.${200 + crypto.randomInt(50)}.${crypto.randomInt(250)}`;
  const gateway = `${subnet}.1`;
  const bridge = `ahb${tag}`;
  ip('link', 'add', bridge, 'type', 'bridge');
  ip('addr', 'add', `${gateway}/24`, 'dev', bridge);
  ip('link', 'set', bridge, 'up');
  const namespaces: string[] = [];
  const servers: net.Server[] = [];
  const sockets = new Set<net.Socket>();
  /** Host loopback port → its forwarded port on the bridge, relayed from inside each namespace. */
  const loopbacks = new Map<number, number>();
  const relays: ChildProcess[] = [];

  /** A small Node process in the namespace: 127.0.0.1:port there → gateway:forwarded (→ 127.0.0.1:port of the host). */
  async function relay(ns: string, port: number, forwarded: number): Promise<void> {
    const child = spawn(
      '/usr/bin/nsenter',
      [`--net=/run/netns/${ns}`, '--', process.execPath, '-e', RELAY, String(port), gateway, String(forwarded)],
      {
        stdio: ['pipe', 'pipe', 'inherit'],
      },
    );
    relays.push(child);
    await new Promise<void>((resolve, reject) => {
      child.stdout!.once('data', () => resolve());
      child.once('exit', (code) => reject(new Error(`the loopback relay of port ${port} in ${ns} exited (${code})`)));
    });
  }

  return {
    gateway,
    async join() {
      const i = namespaces.length;
      const ns = `ah${tag}n${i}`;
      const hostSide = `ahv${tag}${i}`;
      const inside = `ahi${tag}${i}`;
      const address = `${subnet}.${10 + i}`;
      ip('netns', 'add', ns);
      namespaces.push(ns);
      ip('link', 'add', hostSide, 'type', 'veth', 'peer', 'name', inside);
      ip('link', 'set', inside, 'netns', ns);
      ip('link', 'set', hostSide, 'master', bridge, 'up');
      ip('-n', ns, 'addr', 'add', `${address}/24`, 'dev', inside);
      ip('-n', ns, 'link', 'set', inside, 'up');
      ip('-n', ns, 'link', 'set', 'lo', 'up');
      ip('-n', ns, 'route', 'add', 'default', 'via', gateway);
      await Promise.all([...loopbacks].map(([port, forwarded]) => relay(ns, port, forwarded)));
      return { prefix: ['/usr/bin/nsenter', `--net=/run/netns/${ns}`, '--'], address };
    },
    async forward(port) {
      const server = net.createServer((client) => {
        const upstream = net.connect(port, '127.0.0.1');
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.once('close', () => sockets.delete(s));
          s.on('error', () => {
            client.destroy();
            upstream.destroy();
          });
        }
        client.pipe(upstream).pipe(client);
      });
      servers.push(server);
      await new Promise<void>((resolve) => server.listen(0, gateway, resolve));
      return (server.address() as net.AddressInfo).port;
    },
    async loopback(port) {
      if (loopbacks.has(port)) return;
      const forwarded = await this.forward(port);
      loopbacks.set(port, forwarded);
      await Promise.all(namespaces.map((ns) => relay(ns, port, forwarded)));
    },
    async forwardUrl(url) {
      const u = new URL(url);
      u.port = String(await this.forward(Number(u.port)));
      u.hostname = gateway;
      return u.toString().replace(/\/$/, '');
    },
    async close() {
      await Promise.all(
        relays.map(async (r) => {
          if (r.exitCode !== null || r.signalCode !== null) return;
          const exited = new Promise((resolve) => r.once('exit', resolve));
          r.kill();
          await exited;
        }),
      );
      for (const s of sockets) s.destroy();
      await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
      for (const ns of namespaces) ip('netns', 'del', ns);
      ip('link', 'del', bridge);
    },
  };
}
