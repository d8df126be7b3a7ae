/**
 * The egress proxy on its own. Build policy: a channel lets CONNECT and plain-HTTP forwarding
 * through to an allowed registry, refuses every other destination with 403 (and never connects
 * there), and refuses loopback and private addresses reached through a name. Internet policy
 * (full-network runners): public addresses only, in whatever spelling a target or a name's
 * answer comes, never the metadata addresses or the node's own services, a bounded number of
 * connections per channel.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  canonicalAddress,
  classifyAddress,
  EgressConfigError,
  isMetadataAddress,
  isNumericHostForm,
  EgressProxy,
  type EgressChannel,
  parseEgressEntry,
} from '../../src/runtime/sandbox/egress-proxy.js';
import { registryTargets } from '../../src/runtime/languages/registries.js';
import { loadConfig } from '../../src/config/config.js';
import { startServer } from '../../src/main/server.js';
import { makeTempDir } from '../support/server.js';

interface Reply {
  status: number;
  body: string;
}

/** CONNECT through the channel; on 200, one GET through the tunnel. */
function connectThrough(socketPath: string, authority: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request({ socketPath, method: 'CONNECT', path: authority, headers: { host: authority } });
    req.on('connect', (res, socket, head: Buffer) => {
      if (res.statusCode !== 200) {
        let body = head.toString();
        socket.on('data', (d: Buffer) => (body += d.toString()));
        socket.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        socket.on('error', reject);
        return;
      }
      // A plain HTTP request inside the tunnel (the registry stand-in speaks HTTP, not TLS).
      const inner = http.request({ createConnection: () => socket, path: '/simple/', headers: { host: authority } }, (r) => {
        let body = '';
        r.on('data', (d: Buffer) => (body += d.toString()));
        r.on('end', () => {
          socket.destroy();
          resolve({ status: r.statusCode ?? 0, body });
        });
      });
      inner.on('error', reject);
      inner.end();
    });
    req.on('response', (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** A plain-HTTP proxy request (absolute URI) through the channel. */
function getThrough(socketPath: string, url: string): Promise<Reply & { reason: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ socketPath, method: 'GET', path: url, headers: { host: new URL(url).host } }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, reason: res.statusMessage ?? '' }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('build egress proxy', () => {
  let dir: string;
  let registry: http.Server;
  let registryPort: number;
  /** A loopback listener that is no registry: it must never see a connection. */
  let victim: net.Server;
  let victimPort: number;
  let victimConnections = 0;
  let proxy: EgressProxy;
  let channel: EgressChannel;
  const log: string[] = [];
  const lookups: string[] = [];

  before(async () => {
    dir = await makeTempDir('algohost-egress-');
    registry = http.createServer((req, res) => res.end(`registry ${req.method} ${req.url}`));
    await new Promise<void>((r) => registry.listen(0, '127.0.0.1', r));
    registryPort = (registry.address() as net.AddressInfo).port;
    victim = net.createServer((s) => {
      victimConnections++;
      s.destroy();
    });
    await new Promise<void>((r) => victim.listen(0, '127.0.0.1', r));
    victimPort = (victim.address() as net.AddressInfo).port;
    proxy = new EgressProxy({
      dir: path.join(dir, 'egress'),
      allow: [
        // The operator named this address: a local mirror.
        { host: '127.0.0.1', port: registryPort, configured: true },
        // Names that resolve to loopback (a built-in default and a configured one) and a private address.
        { host: 'pypi.test', port: registryPort, configured: false },
        { host: 'mirror.test', port: victimPort, configured: true },
        { host: 'private.test', port: 443, configured: false },
      ],
      lookup: async (host) => {
        lookups.push(host);
        if (host === 'private.test') return [{ address: '10.1.2.3', family: 4 }];
        return [{ address: '127.0.0.1', family: 4 }];
      },
    });
    proxy.prepare();
    channel = await proxy.open((t) => log.push(t));
  });

  after(async () => {
    await proxy.stop();
    await new Promise((r) => registry.close(r));
    await new Promise((r) => victim.close(r));
    await fs.promises.rm(dir, { recursive: true, force: true });
  });

  test('the channel socket is a socket the sandbox user can connect to', () => {
    const st = fs.statSync(channel.socket);
    assert.ok(st.isSocket());
    assert.equal(st.mode & 0o777, 0o666);
  });

  test('CONNECT to an allowed registry goes through', async () => {
    const reply = await connectThrough(channel.socket, `127.0.0.1:${registryPort}`);
    assert.deepEqual(reply, { status: 200, body: 'registry GET /simple/' });
  });

  test('plain HTTP to an allowed registry is forwarded', async () => {
    const reply = await getThrough(channel.socket, `http://127.0.0.1:${registryPort}/simple/six/`);
    assert.equal(reply.status, 200);
    assert.equal(reply.body, 'registry GET /simple/six/');
  });

  test('CONNECT to a host that is not a registry gets 403 without a lookup', async () => {
    const reply = await connectThrough(channel.socket, 'example.com:443');
    assert.equal(reply.status, 403);
    assert.match(reply.body, /example\.com:443 is not a package registry of this cluster/);
    assert.ok(!lookups.includes('example.com'));
  });

  test('loopback: another port of an allowed address, and plain HTTP to it, get 403 and no connection', async () => {
    const tunnel = await connectThrough(channel.socket, `127.0.0.1:${victimPort}`);
    assert.equal(tunnel.status, 403);
    assert.match(tunnel.body, new RegExp(`127\\.0\\.0\\.1:${victimPort} is not a package registry`));
    const plain = await getThrough(channel.socket, `http://127.0.0.1:${victimPort}/v1/users`);
    assert.equal(plain.status, 403);
    assert.match(plain.reason, /Not a package registry/);
    const localhost = await connectThrough(channel.socket, `localhost:${victimPort}`);
    assert.equal(localhost.status, 403);
    assert.equal(victimConnections, 0);
  });

  test('an allowed name that resolves to loopback or a private address is refused', async () => {
    const viaDefault = await connectThrough(channel.socket, `pypi.test:${registryPort}`);
    assert.equal(viaDefault.status, 403);
    assert.match(
      viaDefault.body,
      /pypi\.test resolves to 127\.0\.0\.1: loopback, link-local, metadata, private, this host's own addresses/,
    );
    const viaConfigured = await connectThrough(channel.socket, `mirror.test:${victimPort}`);
    assert.equal(viaConfigured.status, 403);
    // A built-in public registry never reaches a private range (no connection is attempted).
    const privateDefault = await connectThrough(channel.socket, 'private.test:443');
    assert.equal(privateDefault.status, 403);
    assert.match(privateDefault.body, /resolves to 10\.1\.2\.3/);
    assert.equal(victimConnections, 0);
  });

  test('refusals are written to the step log, and on close what it reached', async () => {
    const c = await proxy.open((t) => log.push(t));
    await connectThrough(c.socket, `127.0.0.1:${registryPort}`);
    await connectThrough(c.socket, '127.0.0.1:1');
    await c.close();
    assert.ok(!fs.existsSync(c.socket));
    const text = log.join('');
    assert.match(text, /\[egress\] refused CONNECT 127\.0\.0\.1:1: 127\.0\.0\.1:1 is not a package registry/);
    assert.match(text, new RegExp(`\\[egress\\] reached 127\\.0\\.0\\.1:${registryPort} \\(1×\\)`));
  });

  test('address classes', () => {
    for (const a of ['127.0.0.1', '127.9.9.9', '::1', '0.0.0.0', '169.254.169.254', 'fe80::1', '::ffff:127.0.0.1', '224.0.0.1'])
      assert.equal(classifyAddress(a), 'local', a);
    for (const a of ['10.0.0.1', '172.20.0.1', '192.168.1.1', '100.64.0.1', 'fd12::1']) assert.equal(classifyAddress(a), 'private', a);
    for (const a of ['151.101.0.223', '2a04:4e42::223']) assert.equal(classifyAddress(a), 'public', a);
  });

  test('allow entries and the registries decide the destinations', () => {
    assert.deepEqual(parseEgressEntry('GitHub.com'), { host: 'github.com', port: 443, configured: true });
    assert.deepEqual(parseEgressEntry('nexus.internal:8081'), { host: 'nexus.internal', port: 8081, configured: true });
    assert.deepEqual(parseEgressEntry('[::1]:4873'), { host: '::1', port: 4873, configured: true });
    assert.deepEqual(parseEgressEntry('http://mirror.example/pypi/'), { host: 'mirror.example', port: 80, configured: true });
    for (const bad of ['a b', 'host:0', 'host:99999', 'file:///srv/x', 'host/path'])
      assert.throws(() => parseEgressEntry(bad), EgressConfigError, bad);

    const defaults = registryTargets({ pipFindLinks: [] }, []).map((t) => `${t.host}:${t.port}:${t.configured}`);
    for (const h of [
      'pypi.org',
      'files.pythonhosted.org',
      'registry.npmjs.org',
      'repo.maven.apache.org',
      'repo1.maven.org',
      'index.crates.io',
    ])
      assert.ok(defaults.includes(`${h}:443:false`), h);

    const configured = registryTargets(
      {
        pipFindLinks: [],
        pipIndexUrl: 'http://127.0.0.1:3141/root/pypi/+simple/',
        npmRegistry: 'https://npm.internal/',
        cranRepository: 'file:///srv/cran',
        cargoRegistry: 'sparse+https://crates.internal:8443/index/',
      },
      ['github.com'],
    ).map((t) => `${t.host}:${t.port}:${t.configured}`);
    assert.ok(configured.includes('127.0.0.1:3141:true'));
    assert.ok(configured.includes('npm.internal:443:true'));
    assert.ok(configured.includes('crates.internal:8443:true'));
    assert.ok(configured.includes('github.com:443:true'));
    // A configured registry replaces its default; a file: one needs no network.
    assert.ok(!configured.some((t) => t.startsWith('pypi.org') || t.startsWith('registry.npmjs.org') || t.startsWith('index.crates.io')));
    assert.ok(!configured.some((t) => t.startsWith('cloud.r-project.org')));
  });

  test('a malformed ALGOHOST_BUILD_EGRESS_ALLOW stops the start, naming the setting and the form', async () => {
    const dataDir = await makeTempDir();
    try {
      const config = loadConfig(
        { ALGOHOST_DATA_DIR: dataDir, ALGOHOST_PORT: '0', ALGOHOST_BUILD_EGRESS_ALLOW: 'github.com, nexus internal' },
        [],
      );
      await assert.rejects(startServer(config, false), /ALGOHOST_BUILD_EGRESS_ALLOW: "nexus internal" is not host\[:port\]/);
    } finally {
      await fs.promises.rm(dataDir, { recursive: true, force: true });
    }
  });
});

/** A one-line banner server: what a successful tunnel reads. */
async function bannerServer(text: string, host = '127.0.0.1'): Promise<{ server: net.Server; port: number; connections: () => number }> {
  let n = 0;
  const server = net.createServer((s) => {
    n++;
    s.on('error', () => {});
    s.end(`${text}\n`);
  });
  await new Promise<void>((r) => server.listen(0, host, r));
  return { server, port: (server.address() as net.AddressInfo).port, connections: () => n };
}

/** CONNECT through the channel; the status, and (unless `statusOnly`) what the destination sent until it closed. */
function tunnelStatus(socketPath: string, authority: string, statusOnly = false): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ socketPath, method: 'CONNECT', path: authority, headers: { host: authority } });
    req.on('connect', (res, socket, head: Buffer) => {
      if (statusOnly && res.statusCode === 200) {
        socket.destroy();
        resolve({ status: 200, body: '' });
        return;
      }
      let body = head.toString();
      socket.on('data', (d: Buffer) => (body += d.toString()));
      socket.on('close', () => resolve({ status: res.statusCode ?? 0, body }));
      socket.on('error', () => {});
    });
    req.on('response', (res) => resolve({ status: res.statusCode ?? 0, body: '' }));
    req.on('error', reject);
    req.end();
  });
}

describe('runner egress proxy (internet policy)', () => {
  let dir: string;
  /** A loopback listener standing in for everything on the node: never connected to. */
  let victim: Awaited<ReturnType<typeof bannerServer>>;
  /** A loopback listener the operator named in the allow list. */
  let named: Awaited<ReturnType<typeof bannerServer>>;
  let proxy: EgressProxy;
  let channel: EgressChannel;
  const answers: Record<string, string[]> = {
    'loop.test': ['127.0.0.1'],
    'mapped.test': ['::ffff:127.0.0.1'],
    'mapped-hex.test': ['::ffff:7f00:1'],
    'nat64.test': ['64:ff9b::a00:5'],
    'sixtofour.test': ['2002:a00:5::1'],
    'internal.test': ['10.0.0.5'],
    'metadata.google.internal': ['169.254.169.254'],
    'aws-v6-metadata.test': ['fd00:ec2::254'],
    // A public-looking name whose every answer is refused, and one with a usable answer second.
    'mixed.test': ['10.0.0.5', '127.0.0.1'],
    'db.test': ['203.0.113.7'],
    'allowed-private.test': ['10.255.255.1'],
    's3.test': ['10.255.255.2'],
  };

  before(async () => {
    dir = await makeTempDir('algohost-egress-net-');
    victim = await bannerServer('the node');
    named = await bannerServer('allowed');
    proxy = new EgressProxy({
      dir: path.join(dir, 'egress'),
      policy: 'internet',
      allow: [
        parseEgressEntry(`127.0.0.1:${named.port}`),
        parseEgressEntry('allowed-private.test:9'),
        // Named by the operator, yet the node's S3 endpoint: still refused.
        parseEgressEntry('s3.test:9000'),
      ],
      services: ['postgres://algohost:secret@db.test:5432/algohost', 'nats://127.0.0.9:4222', 'http://s3.test:9000'],
      maxConnectionsPerChannel: 4,
      connectTimeoutMs: 300,
      lookup: async (host) => {
        const list = answers[host];
        if (!list) throw new Error(`no answer for ${host}`);
        return list.map((address) => ({ address, family: net.isIPv6(address) ? 6 : 4 }));
      },
    });
    proxy.prepare();
    channel = await proxy.open();
  });

  after(async () => {
    await proxy.stop();
    await new Promise((r) => victim.server.close(r));
    await new Promise((r) => named.server.close(r));
    await fs.promises.rm(dir, { recursive: true, force: true });
  });

  test('IPv6 spellings of IPv4 addresses are the IPv4 address they reach', () => {
    assert.equal(canonicalAddress('::ffff:127.0.0.1'), '127.0.0.1');
    assert.equal(canonicalAddress('::FFFF:7f00:1'), '127.0.0.1');
    assert.equal(canonicalAddress('0:0:0:0:0:ffff:a9fe:a9fe'), '169.254.169.254');
    assert.equal(canonicalAddress('::127.0.0.1'), '127.0.0.1');
    assert.equal(canonicalAddress('64:ff9b::a00:5'), '10.0.0.5');
    assert.equal(canonicalAddress('2002:c0a8:101::1'), '192.168.1.1');
    assert.equal(canonicalAddress('::1'), '0:0:0:0:0:0:0:1');
    for (const a of ['::ffff:127.0.0.1', '::ffff:7f00:1', '::127.0.0.1', '2002:7f00:1::', '::ffff:169.254.169.254'])
      assert.equal(classifyAddress(a), 'local', a);
    for (const a of ['::ffff:10.0.0.1', '64:ff9b::a00:1', '2002:ac10::1', '::ffff:100.64.0.1', 'fec0::1'])
      assert.equal(classifyAddress(a), 'private', a);
    for (const a of ['169.254.169.254', 'fd00:ec2::254', '::ffff:a9fe:a9fe', '168.63.129.16', '100.100.100.200', '169.254.170.2'])
      assert.ok(isMetadataAddress(a), a);
    assert.ok(!isMetadataAddress('151.101.0.223'));
  });

  test("the node's own non-loopback addresses are local", () => {
    const own = Object.values(os.networkInterfaces())
      .flat()
      .filter((i) => i && !i.internal);
    for (const i of own) assert.equal(classifyAddress(i!.address), 'local', i!.address);
  });

  test('decimal, octal and hex IPv4 forms are not names', () => {
    for (const h of ['2130706433', '0177.0.0.1', '0x7f.1', '127.1', '0x7f000001', '017700000001', '10.1'])
      assert.ok(isNumericHostForm(h), h);
    for (const h of ['127.0.0.1', 'example.com', '1password.com', '0x.example', 'deadbeef.io']) assert.ok(!isNumericHostForm(h), h);
  });

  test("loopback, private, metadata and the node's own addresses get 403 in every spelling, and no connection", async () => {
    const port = victim.port;
    const targets = [
      `127.0.0.1:${port}`,
      `localhost:${port}`,
      `[::1]:${port}`,
      `[::ffff:127.0.0.1]:${port}`,
      `[::ffff:7f00:1]:${port}`,
      `[::127.0.0.1]:${port}`,
      `2130706433:${port}`,
      `0177.0.0.1:${port}`,
      `0x7f.1:${port}`,
      `127.1:${port}`,
      `loop.test:${port}`,
      `mapped.test:${port}`,
      `mapped-hex.test:${port}`,
      `nat64.test:${port}`,
      `sixtofour.test:${port}`,
      `internal.test:${port}`,
      `mixed.test:${port}`,
      '10.0.0.5:5432',
      '192.168.1.1:80',
      '172.16.0.1:80',
      '100.64.0.1:80',
      '[fd12::1]:80',
      '169.254.169.254:80',
      '[fd00:ec2::254]:80',
      'metadata.google.internal:80',
      'aws-v6-metadata.test:80',
      '168.63.129.16:80',
      '0.0.0.0:80',
      '224.0.0.1:80',
    ];
    for (const i of Object.values(os.networkInterfaces()).flat()) {
      if (i && !i.internal) targets.push(i.family === 'IPv6' ? `[${i.address.replace(/%.*$/, '')}]:${port}` : `${i.address}:${port}`);
    }
    for (const t of targets) {
      const reply = await tunnelStatus(channel.socket, t);
      assert.equal(reply.status, 403, `${t}: ${reply.status} ${reply.body}`);
    }
    const plain = await getThrough(channel.socket, 'http://169.254.169.254/latest/meta-data/iam/security-credentials/');
    assert.equal(plain.status, 403);
    assert.match(plain.reason, /Not a public address/);
    const plainLoop = await getThrough(channel.socket, `http://127.0.0.1:${port}/`);
    assert.equal(plainLoop.status, 403);
    assert.equal(victim.connections(), 0);
  });

  test("the node's services are refused at their addresses, even when public or named by the operator", async () => {
    // db.test (the database) resolves to a public address: refused there, by name and by address.
    for (const t of ['db.test:5432', '203.0.113.7:443', 's3.test:9000', '127.0.0.9:4222']) {
      const reply = await tunnelStatus(channel.socket, t);
      assert.equal(reply.status, 403, t);
      assert.match(reply.body, /node's services are not reached/);
    }
  });

  test('an allow entry reaches its host: a named address, and a name at a private address', async () => {
    const reply = await tunnelStatus(channel.socket, `127.0.0.1:${named.port}`);
    assert.deepEqual(reply, { status: 200, body: 'allowed\n' });
    // The policy lets it through: the proxy connects (200, or 502 where nothing answers; not 403).
    const privateNamed = await tunnelStatus(channel.socket, 'allowed-private.test:9', true);
    assert.notEqual(privateNamed.status, 403);
    // The entry is for that port only.
    assert.equal((await tunnelStatus(channel.socket, 'allowed-private.test:10')).status, 403);
  });

  test('a public address is let through (the proxy connects: 200, or 502 where nothing answers; not 403)', async () => {
    const reply = await tunnelStatus(channel.socket, '192.0.2.1:443', true);
    assert.notEqual(reply.status, 403);
  });

  test('a malformed ALGOHOST_RUNNER_EGRESS_ALLOW stops the start, naming the setting and the form', async () => {
    const dataDir = await makeTempDir();
    try {
      const config = loadConfig(
        { ALGOHOST_DATA_DIR: dataDir, ALGOHOST_PORT: '0', ALGOHOST_RUNNER_EGRESS_ALLOW: 'api.internal:8443, a b' },
        [],
      );
      await assert.rejects(startServer(config, false), /ALGOHOST_RUNNER_EGRESS_ALLOW: "a b" is not host\[:port\]/);
    } finally {
      await fs.promises.rm(dataDir, { recursive: true, force: true });
    }
  });

  test('one channel holds a bounded number of connections; closing one frees a place', async () => {
    const open: net.Socket[] = [];
    const connect = () =>
      new Promise<{ socket: net.Socket; closedAtOnce: boolean }>((resolve) => {
        const s = net.connect(channel.socket);
        s.on('error', () => {});
        let closed = false;
        s.on('close', () => (closed = true));
        // An idle connection the server keeps stays open; one past the limit is closed at once.
        s.on('connect', () => setTimeout(() => resolve({ socket: s, closedAtOnce: closed }), 150));
      });
    for (let i = 0; i < 4; i++) {
      const c = await connect();
      assert.equal(c.closedAtOnce, false, `connection ${i + 1} was closed`);
      open.push(c.socket);
    }
    const fifth = await connect();
    assert.equal(fifth.closedAtOnce, true, 'a fifth connection was kept');
    open[0]!.destroy();
    await new Promise((r) => setTimeout(r, 100));
    const again = await connect();
    assert.equal(again.closedAtOnce, false);
    for (const s of [...open, again.socket]) s.destroy();
  });
});
