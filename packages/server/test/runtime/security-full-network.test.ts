/**
 * Issue 36 item 1: a `network_access: "full"` runner ran in the node's own network namespace
 * (bubblewrap --share-net). From there mallory's algorithm listed every listening port in
 * /proc/net/tcp, reached PostgreSQL, NATS, S3 and the metrics address on loopback, could bind
 * ports on the host's addresses, and in a cloud would have reached the metadata service and the
 * node's instance credentials.
 *
 * Now a full-network runner has a namespace of its own whose only way out is the node's egress
 * proxy, which reaches public addresses only (and hosts an operator named). Mallory's algorithm
 * plays the attack: it reads /proc/net/tcp, connects straight to a loopback listener of the
 * test, the server's port, the database's, the node's own address and the metadata address,
 * asks the proxy for the same and for private and metadata addresses in several spellings, and
 * binds a port. Every attempt fails; through the proxy an operator-allowed host is reached
 * (by CONNECT, and by Python's urllib from the proxy variables alone), so `full` still gives
 * outbound access. Alice's next call returns alice's own result.
 *
 * Then the same on a node that runs in a network namespace the test makes, with a stand-in
 * metadata service on 169.254.169.254 and fd00:ec2::254 (which answers from the node itself) and
 * a public-looking host (198.51.100.7) in another namespace: the runner never reaches the
 * metadata service and does reach the public host, with no allow entry.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import { after, before, describe, test } from 'node:test';
import { createAndBuild, writePythonAlgorithm } from '../support/algorithms.js';
import { startChildServer, type ChildServer } from '../support/child-server.js';
import { createUser, type TestUser } from '../support/fixtures.js';
import { client, request, type Client } from '../support/http.js';
import { available as netnsAvailable } from '../support/netns.js';
import { DATABASES, makeTempDir, POSTGRES_URL, startTestServer, type TestServer } from '../support/server.js';

/** Mallory's algorithm: each attempt's outcome, as text ("ok: …" or the error). */
const ATTACK = String.raw`
import os, socket, urllib.request

HELD = []

def attempt(fn):
    try:
        return "ok: " + str(fn())
    except Exception as e:
        return "%s: %s" % (type(e).__name__, e)

def listening_ports():
    ports = set()
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = open(name).read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if fields[3] == "0A":
                ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return sorted(ports)

def direct(host, port):
    s = socket.create_connection((host, port), timeout=3)
    s.close()
    return "connected"

def proxy_address():
    host, port = os.environ["HTTPS_PROXY"][len("http://"):].rstrip("/").rsplit(":", 1)
    return host, int(port)

def through_proxy(head, then=b""):
    s = socket.create_connection(proxy_address(), timeout=15)
    s.sendall(head.encode() + b"\r\n\r\n")
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    status = data.split(b"\r\n")[0].decode()
    if not status.startswith("HTTP/1.1 200") or not then:
        return status
    s.sendall(then)
    body = b""
    while True:
        chunk = s.recv(4096)
        if not chunk:
            break
        body += chunk
    return status + " | " + body.decode(errors="replace").split("\r\n\r\n", 1)[-1]

def connect_via(authority, then=b""):
    return through_proxy("CONNECT %s HTTP/1.1\r\nHost: %s" % (authority, authority), then)

def bind(port):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", port))
    s.listen(8)
    HELD.append(s)
    return s.getsockname()[1]

def apply(t):
    out = {"listening": listening_ports(), "proxy_env": os.environ.get("HTTPS_PROXY", "")}
    for name, (host, port) in t.get("direct", {}).items():
        out["direct " + name] = attempt(lambda: direct(host, port))
    for authority in t.get("connect", []):
        out["CONNECT " + authority] = attempt(lambda: connect_via(authority))
    for url in t.get("get", []):
        out["GET " + url] = attempt(lambda: through_proxy("GET %s HTTP/1.1\r\nHost: %s" % (url, url.split("/")[2])))
    for authority in t.get("reach", []):
        out["reach " + authority] = attempt(lambda: connect_via(authority, b"GET / HTTP/1.0\r\nHost: x\r\n\r\n"))
    for url in t.get("urllib", []):
        out["urllib " + url] = attempt(lambda: urllib.request.urlopen(url, timeout=15).read().decode())
    if "bind" in t:
        out["bind"] = attempt(lambda: bind(t["bind"]))
    return out
`;

/** Alice's algorithm: her own answer, to see that mallory's runner changed nothing of hers. */
const ALICE = String.raw`
def apply(input):
    return "alice's answer to " + str(input)
`;

/**
 * A Java algorithm that fetches a URL with the JDK's own HTTP client, which knows nothing of
 * HTTPS_PROXY: it gets through only if the runner gave the JVM the proxy properties.
 */
const JAVA_FETCH = String.raw`
package algorithmia.Fetch;

import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.URL;
import java.nio.charset.StandardCharsets;

public class Fetch {
    public String apply(String url) throws Exception {
        HttpURLConnection c = (HttpURLConnection) new URL(url).openConnection();
        c.setConnectTimeout(10000);
        c.setReadTimeout(10000);
        try (InputStream in = c.getInputStream()) {
            return System.getProperty("http.proxyHost") + ":" + System.getProperty("http.proxyPort") + " " + new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }
}
`;

/** A port nothing listens on now (picked by the kernel, then released). */
async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as net.AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

async function listen(server: net.Server, port: number, host: string): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return (server.address() as net.AddressInfo).port;
}

/** Whether a TCP connection from the test (the host) to host:port is accepted. */
function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host, port, timeout: 3000 });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
    s.once('timeout', () => {
      s.destroy();
      resolve(false);
    });
  });
}

const refused = (outcome: string | undefined) => /^ok: HTTP\/1\.1 403 /.test(outcome ?? '');

/** Builds the algorithm; returns the path its owner calls it by (the built commit). */
async function buildPython(
  base: string,
  api: Client,
  user: TestUser,
  name: string,
  source: string,
  networkAccess: string,
): Promise<string> {
  const tree = await makeTempDir('algohost-fullnet-');
  try {
    writePythonAlgorithm(tree, user.name, name, source);
    const sha = await createAndBuild(base, api, user, user.name, name, tree, {
      environment: 'python311',
      settings: { network_access: networkAccess },
    });
    return `/v1/algo/${user.name}/${name}/${sha}`;
  } finally {
    await fs.promises.rm(tree, { recursive: true, force: true });
  }
}

/** The node's own addresses that are not loopback (its interfaces'). */
function ownAddresses(): string[] {
  return Object.values(os.networkInterfaces())
    .flat()
    .filter((i): i is os.NetworkInterfaceInfo => i !== undefined && !i.internal && i.family === 'IPv4')
    .map((i) => i.address);
}

for (const database of DATABASES) {
  describe(`a full-network runner reaches public addresses only, through the egress proxy (${database})`, () => {
    let srv: TestServer;
    let api: Client;
    let alice: TestUser;
    let mallory: TestUser;
    let probe = '';
    let answer = '';
    /** Stands for every service of the node: listens on all of the host's addresses. */
    const nodeService = net.createServer((s) => s.end('a service of the node\n'));
    let nodePort = 0;
    /** A host the operator allows runners to reach (ALGOHOST_RUNNER_EGRESS_ALLOW). */
    const allowedHost = http.createServer((_req, res) => res.end('the allowed host answered'));
    let allowedPort = 0;
    let bindPort = 0;
    let result: Record<string, string | number[]> = {};

    before(async () => {
      nodePort = await listen(nodeService, 0, '0.0.0.0');
      allowedPort = await listen(allowedHost, 0, '127.0.0.2');
      bindPort = await freePort();
      srv = await startTestServer({
        database,
        env: { ALGOHOST_RUNNER_EGRESS_ALLOW: `127.0.0.2:${allowedPort}`, ALGOHOST_RUNNERS_PER_ALGORITHM: '1' },
      });
      api = client(srv.url);
      alice = await createUser(api, srv.adminKey, 'alice');
      mallory = await createUser(api, srv.adminKey, 'mallory');
      answer = await buildPython(srv.url, api, alice, 'Answer', ALICE, 'isolated');
      probe = await buildPython(srv.url, api, mallory, 'Probe', ATTACK, 'full');

      const serverPort = Number(new URL(srv.url).port);
      const direct: Record<string, [string, number]> = {
        'loopback listener': ['127.0.0.1', nodePort],
        'server port': ['127.0.0.1', serverPort],
        metadata: ['169.254.169.254', 80],
      };
      const connect = [
        `127.0.0.1:${nodePort}`,
        `127.0.0.1:${serverPort}`,
        `localhost:${serverPort}`,
        `[::ffff:127.0.0.1]:${nodePort}`,
        `[::ffff:7f00:1]:${nodePort}`,
        `2130706433:${nodePort}`,
        `0177.0.0.1:${nodePort}`,
        // The allowed host's address, on another port than the allowed one.
        `127.0.0.2:${nodePort}`,
        '10.0.0.5:5432',
        '192.168.0.1:80',
        '169.254.169.254:80',
        '[fd00:ec2::254]:80',
        '[::ffff:169.254.169.254]:80',
        'metadata.google.internal:80',
      ];
      for (const address of ownAddresses()) {
        direct[`own address ${address}`] = [address, nodePort];
        connect.push(`${address}:${nodePort}`);
      }
      if (database === 'postgres' && POSTGRES_URL) {
        const db = new URL(POSTGRES_URL);
        direct.database = [db.hostname, Number(db.port || 5432)];
        connect.push(`${db.hostname}:${db.port || 5432}`);
      }
      const res = await request(srv.url, 'POST', probe, {
        key: mallory.key,
        body: {
          direct,
          connect,
          get: ['http://169.254.169.254/latest/meta-data/iam/security-credentials/', `http://127.0.0.1:${nodePort}/`],
          reach: [`127.0.0.2:${allowedPort}`],
          urllib: [`http://127.0.0.2:${allowedPort}/`],
          bind: bindPort,
        },
      });
      assert.equal(res.status, 200, res.text);
      assert.ok(res.body.result, res.text);
      result = res.body.result as Record<string, string | number[]>;
    });

    after(async () => {
      await srv?.stop();
      await new Promise((r) => nodeService.close(r));
      await new Promise((r) => allowedHost.close(r));
    });

    test("/proc/net/tcp shows the runner's own namespace: none of the host's listening ports", () => {
      const listening = result.listening as number[];
      const serverPort = Number(new URL(srv.url).port);
      assert.ok(!listening.includes(nodePort), `the host's listener shows: ${JSON.stringify(listening)}`);
      assert.ok(!listening.includes(serverPort), `the server's port shows: ${JSON.stringify(listening)}`);
      // Only the proxy forwarder of its own namespace listens.
      assert.deepEqual(listening, [3128]);
      assert.equal(result.proxy_env, 'http://127.0.0.1:3128');
    });

    test('no direct connection reaches the host: loopback, the server, the database, its own address, metadata', () => {
      const attempts = Object.entries(result).filter(([k]) => k.startsWith('direct '));
      assert.ok(attempts.length >= 4);
      for (const [what, outcome] of attempts) assert.doesNotMatch(String(outcome), /^ok:/, `${what}: ${String(outcome)}`);
    });

    test("through the proxy: loopback, private, metadata and the node's own addresses are refused in every spelling", () => {
      const attempts = Object.entries(result).filter(([k]) => k.startsWith('CONNECT ') || k.startsWith('GET '));
      assert.ok(attempts.length >= 15);
      for (const [what, outcome] of attempts) assert.ok(refused(String(outcome)), `${what}: ${String(outcome)}`);
    });

    test('through the proxy an operator-allowed host is reached, by CONNECT and by a client that reads the proxy variables', () => {
      assert.match(String(result[`reach 127.0.0.2:${allowedPort}`]), /^ok: HTTP\/1\.1 200 .*\| the allowed host answered$/);
      assert.equal(result[`urllib http://127.0.0.2:${allowedPort}/`], 'ok: the allowed host answered');
    });

    test("a port the runner binds is its own namespace's: the host does not see it", async () => {
      assert.equal(result.bind, `ok: ${bindPort}`);
      // The runner still holds it (it is warm); nothing on the host answers there.
      assert.equal(await accepts('127.0.0.1', bindPort), false);
      for (const address of ownAddresses()) assert.equal(await accepts(address, bindPort), false, address);
    });

    test(
      "a Java runner reaches the allowed host through the proxy with the JDK's own client (the JVM gets the proxy properties)",
      {
        // The runner and the proxy, not the database: once.
        skip: database !== DATABASES[0],
      },
      async () => {
        const tree = await makeTempDir('algohost-fullnet-java-');
        try {
          fs.mkdirSync(`${tree}/src/main/java/algorithmia/Fetch`, { recursive: true });
          fs.writeFileSync(`${tree}/algorithmia.conf`, JSON.stringify({ username: 'mallory', algoname: 'Fetch', language: 'java' }));
          fs.writeFileSync(`${tree}/src/main/java/algorithmia/Fetch/Fetch.java`, JAVA_FETCH);
          const sha = await createAndBuild(srv.url, api, mallory, 'mallory', 'Fetch', tree, {
            environment: 'java17',
            settings: { network_access: 'full' },
          });
          const res = await request(srv.url, 'POST', `/v1/algo/mallory/Fetch/${sha}`, {
            key: mallory.key,
            raw: `http://127.0.0.2:${allowedPort}/`,
            headers: { 'content-type': 'text/plain' },
          });
          assert.equal(res.body.result, '127.0.0.1:3128 the allowed host answered', res.text);
          const refusedRes = await request(srv.url, 'POST', `/v1/algo/mallory/Fetch/${sha}`, {
            key: mallory.key,
            raw: 'http://169.254.169.254/latest/meta-data/',
            headers: { 'content-type': 'text/plain' },
          });
          assert.match(refusedRes.body.error?.message ?? '', /403/, refusedRes.text);
        } finally {
          await fs.promises.rm(tree, { recursive: true, force: true });
        }
      },
    );

    test("alice's next call returns alice's own result; mallory's runner still serves her", async () => {
      const res = await request(srv.url, 'POST', answer, { key: alice.key, body: 'ping' });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.result, "alice's answer to ping");
      const again = await request(srv.url, 'POST', probe, {
        key: mallory.key,
        body: { connect: ['169.254.169.254:80'] },
      });
      assert.ok(refused(again.body.result['CONNECT 169.254.169.254:80']), again.text);
    });
  });
}

/**
 * A node in a network namespace the test makes, where the cloud's metadata addresses answer
 * (a stand-in on a dummy interface) and a public-looking address answers from a second namespace.
 * Needs root and iproute2 (test/support/netns.ts); SQLite, since this is the runner and the proxy.
 */
describe('on a node where a metadata service answers, a full-network runner reaches the internet but not the metadata service', () => {
  const skip = netnsAvailable() ? false : 'needs root, iproute2 and network namespaces';
  const tag = crypto.randomBytes(2).toString('hex');
  const nodeNs = `ahm${tag}n`;
  const publicNs = `ahm${tag}p`;
  const hostSide = `ahm${tag}h`;
  const nodeSide = `ahm${tag}i`;
  const link = { node: `ahm${tag}a`, public: `ahm${tag}b` };
  /** The bridge between the test (root namespace) and the node. */
  const subnet = `10.${200 + crypto.randomInt(50)}.${crypto.randomInt(250)}`;
  const nodeAddress = `${subnet}.2`;
  const children: ChildProcess[] = [];
  let node: ChildServer | undefined;
  let api: Client;
  let alice: TestUser;
  let mallory: TestUser;
  let probe = '';
  let answer = '';
  const ip = (...args: string[]) => execFileSync('/usr/sbin/ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  const inNs = (ns: string) => ['/usr/bin/nsenter', `--net=/run/netns/${ns}`, '--'];

  /** A Node one-liner in a namespace, serving `text` over HTTP on each address; resolves once it listens. */
  async function standIn(ns: string, addresses: string[], port: number, text: string): Promise<void> {
    const program = `
      const http = require('node:http');
      let n = 0;
      for (const a of ${JSON.stringify(addresses)}) http.createServer((q, r) => r.end(${JSON.stringify(text)})).listen(${port}, a, () => { if (++n === ${addresses.length}) console.log('ready'); });
      process.stdin.on('end', () => process.exit(0));
      process.stdin.resume();`;
    const [cmd, ...args] = [...inNs(ns), process.execPath, '-e', program];
    const child = spawn(cmd!, args, { stdio: ['pipe', 'pipe', 'inherit'] });
    children.push(child);
    await new Promise<void>((resolve, reject) => {
      child.stdout!.once('data', () => resolve());
      child.once('exit', (code) => reject(new Error(`the stand-in in ${ns} exited (${code})`)));
    });
  }

  /** What a process in the node's namespace gets from an HTTP URL: the control that the stand-in is really there. */
  function fetchInNodeNs(url: string): string {
    const [cmd, ...args] = [
      ...inNs(nodeNs),
      process.execPath,
      '-e',
      `fetch(${JSON.stringify(url)}).then((r) => r.text()).then((t) => process.stdout.write(t))`,
    ];
    return execFileSync(cmd!, args, { encoding: 'utf8', timeout: 10_000 });
  }

  before(async () => {
    if (skip) return;
    ip('netns', 'add', nodeNs);
    ip('netns', 'add', publicNs);
    ip('-n', nodeNs, 'link', 'set', 'lo', 'up');
    ip('-n', publicNs, 'link', 'set', 'lo', 'up');
    // The test reaches the node over a veth pair (the node listens on its address there).
    ip('link', 'add', hostSide, 'type', 'veth', 'peer', 'name', nodeSide);
    ip('link', 'set', nodeSide, 'netns', nodeNs);
    ip('addr', 'add', `${subnet}.1/30`, 'dev', hostSide);
    ip('link', 'set', hostSide, 'up');
    ip('-n', nodeNs, 'addr', 'add', `${nodeAddress}/30`, 'dev', nodeSide);
    ip('-n', nodeNs, 'link', 'set', nodeSide, 'up');
    // The metadata service answers from the node's own namespace, as in a cloud (on its
    // loopback interface: it holds any address, and needs no kernel module).
    ip('-n', nodeNs, 'addr', 'add', '169.254.169.254/32', 'dev', 'lo');
    ip('-n', nodeNs, 'addr', 'add', 'fd00:ec2::254/128', 'dev', 'lo', 'nodad');
    // A public-looking address (TEST-NET-2) in another namespace, routed from the node.
    ip('link', 'add', link.node, 'netns', nodeNs, 'type', 'veth', 'peer', 'name', link.public, 'netns', publicNs);
    ip('-n', nodeNs, 'addr', 'add', '198.51.100.1/24', 'dev', link.node);
    ip('-n', publicNs, 'addr', 'add', '198.51.100.7/24', 'dev', link.public);
    ip('-n', nodeNs, 'link', 'set', link.node, 'up');
    ip('-n', publicNs, 'link', 'set', link.public, 'up');
    await standIn(nodeNs, ['169.254.169.254', 'fd00:ec2::254'], 80, 'instance credentials of the node');
    await standIn(publicNs, ['198.51.100.7'], 8080, 'a public host answered');
    assert.equal(fetchInNodeNs('http://169.254.169.254/latest/meta-data/'), 'instance credentials of the node');
    assert.equal(fetchInNodeNs('http://[fd00:ec2::254]/latest/meta-data/'), 'instance credentials of the node');

    node = await startChildServer({ prefix: inNs(nodeNs), env: { ALGOHOST_HOST: nodeAddress, ALGOHOST_RUNNERS_PER_ALGORITHM: '1' } });
    api = client(node.url);
    alice = await createUser(api, node.adminKey, 'alice');
    mallory = await createUser(api, node.adminKey, 'mallory');
    answer = await buildPython(node.url, api, alice, 'Answer', ALICE, 'isolated');
    probe = await buildPython(node.url, api, mallory, 'Probe', ATTACK, 'full');
  });

  after(async () => {
    if (skip) return;
    await node?.stop();
    await Promise.all(
      children.map(async (c) => {
        if (c.exitCode !== null || c.signalCode !== null) return;
        const exited = new Promise((r) => c.once('exit', r));
        c.stdin!.end();
        await exited;
      }),
    );
    // Each step on its own: a set-up that failed half-way leaves some of these absent.
    for (const args of [
      ['netns', 'del', nodeNs],
      ['netns', 'del', publicNs],
      ['link', 'del', hostSide],
    ]) {
      try {
        ip(...args);
      } catch {
        // Never made, or gone with the namespace of its peer.
      }
    }
    if (node) await fs.promises.rm(node.dataDir, { recursive: true, force: true });
  });

  test('the metadata service is refused in every form; the public host is reached with no allow entry', { skip }, async () => {
    const res = await request(node!.url, 'POST', probe, {
      key: mallory.key,
      body: {
        direct: { metadata: ['169.254.169.254', 80], 'public host': ['198.51.100.7', 8080] },
        connect: ['169.254.169.254:80', '[fd00:ec2::254]:80', '[::ffff:a9fe:a9fe]:80', '2852039166:80', `${nodeAddress}:80`],
        get: ['http://169.254.169.254/latest/meta-data/iam/security-credentials/', 'http://[fd00:ec2::254]/latest/meta-data/'],
        reach: ['198.51.100.7:8080'],
        urllib: ['http://198.51.100.7:8080/'],
      },
    });
    assert.equal(res.status, 200, res.text);
    const result = res.body.result as Record<string, string>;
    assert.ok(result, res.text);
    // Straight out of its namespace: nothing at all.
    assert.doesNotMatch(result['direct metadata']!, /^ok:/);
    assert.doesNotMatch(result['direct public host']!, /^ok:/);
    for (const [what, outcome] of Object.entries(result).filter(([k]) => k.startsWith('CONNECT ') || k.startsWith('GET ')))
      assert.ok(refused(outcome), `${what}: ${outcome}`);
    assert.doesNotMatch(JSON.stringify(result), /instance credentials/);
    // Outbound access to a public address, with no allow entry.
    assert.match(result['reach 198.51.100.7:8080']!, /^ok: HTTP\/1\.1 200 .*\| a public host answered$/);
    assert.equal(result['urllib http://198.51.100.7:8080/'], 'ok: a public host answered');
    const alices = await request(node!.url, 'POST', answer, { key: alice.key, body: 'pong' });
    assert.equal(alices.body.result, "alice's answer to pong", alices.text);
  });
});
