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
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';

export interface Lan {
  /** The host's address on the bridge: what nodes use to reach the forwarded services. */
  gateway: string;
  /** Makes a namespace with the next address; returns the command prefix that runs in it and the address. */
  join(): { prefix: string[]; address: string };
  /** Forwards `gateway:<returned port>` to `127.0.0.1:<port>`. */
  forward(port: number): Promise<number>;
  /** Rewrites a URL on 127.0.0.1 to its forwarded address on the bridge. */
  forwardUrl(url: string): Promise<string>;
  close(): Promise<void>;
}

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
  return {
    gateway,
    join() {
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
    async forwardUrl(url) {
      const u = new URL(url);
      u.port = String(await this.forward(Number(u.port)));
      u.hostname = gateway;
      return u.toString().replace(/\/$/, '');
    },
    async close() {
      for (const s of sockets) s.destroy();
      await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
      for (const ns of namespaces) ip('netns', 'del', ns);
      ip('link', 'del', bridge);
    },
  };
}
