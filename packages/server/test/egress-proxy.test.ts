/**
 * The build egress proxy on its own: a channel lets CONNECT and plain-HTTP forwarding through to
 * an allowed registry, refuses every other destination with 403 (and never connects there), and
 * refuses loopback and private addresses reached through a name.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  classifyAddress,
  EgressConfigError,
  EgressProxy,
  type EgressChannel,
  parseEgressEntry,
  registryTargets,
} from '../src/runtime/sandbox/egress-proxy.js';
import { loadConfig } from '../src/config/config.js';
import { startServer } from '../src/main/server.js';
import { makeTempDir } from './support/server.js';

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
    assert.match(viaDefault.body, /pypi\.test resolves to 127\.0\.0\.1: loopback, link-local, private and this host's own addresses/);
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
