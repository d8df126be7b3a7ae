/**
 * Issue 11 item 5: build steps run user code (a local Python package's build backend during
 * `pip install`, an npm `postinstall` script). That code must not reach anything on the host:
 * not the service's own port, not a loopback-only TCP or UDP listener, not an abstract Unix
 * socket, and through the egress proxy nothing but the registries. The same builds still
 * install a real dependency from the public registry, through the proxy (fresh download caches,
 * so the packages are fetched).
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import dgram from 'node:dgram';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { environmentId } from '../support/algorithms.js';
import { createUser, type TestUser } from '../support/fixtures.js';
import { announcedBuildId, clone, commitAndPush, gitUrl, removeClone, replaceWorkingFiles } from '../support/git.js';
import { client, request, type Client } from '../support/http.js';
import { makeTempDir, startTestServer, type TestServer } from '../support/server.js';

interface Targets {
  service_port: number;
  tcp_port: number;
  udp_port: number;
  abstract: string;
}

/** The attempts, in Python: run by the package's build backend while pip installs it. */
const PY_ATTACK = String.raw`
import json, os, socket

def attempt(fn):
    try:
        return "ok: " + str(fn())
    except Exception as e:
        return "%s: %s" % (type(e).__name__, e)

def tcp(port):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(b"GET /v1/users HTTP/1.0\r\n\r\n")
    return s.recv(200)

def udp(port):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.sendto(b"from the build", ("127.0.0.1", port))
    return "sent"

def abstract(name):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect("\0" + name)
    return "connected"

def via_proxy(line):
    proxy = os.environ.get("HTTPS_PROXY", "http://127.0.0.1:3128").rsplit(":", 1)
    s = socket.create_connection(("127.0.0.1", int(proxy[1])), timeout=10)
    s.sendall(line.encode() + b"\r\n\r\n")
    return s.recv(300).decode().split("\r\n")[0]

def attack(targets):
    port = targets["service_port"]
    return {
        "service": attempt(lambda: tcp(port)),
        "tcp": attempt(lambda: tcp(targets["tcp_port"])),
        "udp": attempt(lambda: udp(targets["udp_port"])),
        "abstract": attempt(lambda: abstract(targets["abstract"])),
        "proxy_other_host": attempt(lambda: via_proxy("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443")),
        "proxy_service": attempt(lambda: via_proxy("CONNECT 127.0.0.1:%d HTTP/1.1\r\nHost: 127.0.0.1:%d" % (port, port))),
        "proxy_service_http": attempt(lambda: via_proxy("GET http://127.0.0.1:%d/v1/users HTTP/1.1\r\nHost: 127.0.0.1:%d" % (port, port))),
    }
`;

/** A PEP 517 build backend in the package's own tree: its build_wheel is the user code pip runs. */
const PY_BACKEND = String.raw`
import base64, hashlib, json, os, zipfile
${PY_ATTACK}
NAME, VERSION = "localpkg_attack", "0.1.0"
DIST = "%s-%s.dist-info" % (NAME, VERSION)
METADATA = "Metadata-Version: 2.1\nName: %s\nVersion: %s\n" % (NAME, VERSION)
WHEEL = "Wheel-Version: 1.0\nGenerator: attack\nRoot-Is-Purelib: true\nTag: py3-none-any\n"

def get_requires_for_build_wheel(config_settings=None):
    return []

def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    os.makedirs(os.path.join(metadata_directory, DIST))
    for name, text in (("METADATA", METADATA), ("WHEEL", WHEEL)):
        with open(os.path.join(metadata_directory, DIST, name), "w") as f:
            f.write(text)
    return DIST

def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "targets.json")) as f:
        results = attack(json.load(f))
    files = {
        NAME + "/__init__.py": "RESULTS = %r\n" % (results,),
        DIST + "/METADATA": METADATA,
        DIST + "/WHEEL": WHEEL,
    }
    record = []
    for name, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append("%s,sha256=%s,%d" % (name, digest, len(text.encode())))
    record.append(DIST + "/RECORD,,")
    files[DIST + "/RECORD"] = "\n".join(record) + "\n"
    wheel = "%s-%s-py3-none-any.whl" % (NAME, VERSION)
    with zipfile.ZipFile(os.path.join(wheel_directory, wheel), "w") as z:
        for name, text in files.items():
            z.writestr(name, text)
    return wheel
`;

/** The same attempts from an npm postinstall script; the results land in the dependency layer. */
const JS_ATTACK = String.raw`
const fs = require('fs');
const net = require('net');
const dgram = require('dgram');
const t = JSON.parse(fs.readFileSync('/build/src/targets.json', 'utf8'));
const proxyPort = Number((process.env.HTTPS_PROXY || 'http://127.0.0.1:3128').split(':').pop());

function connect(opts, send) {
  return new Promise((resolve) => {
    const s = net.connect(opts);
    let data = '';
    s.setTimeout(10000, () => { s.destroy(); resolve('timeout: ' + data); });
    s.on('connect', () => { if (send) s.write(send); });
    s.on('data', (d) => { data += d; if (data.includes('\r\n')) { s.destroy(); resolve('ok: ' + data.split('\r\n')[0]); } });
    s.on('error', (e) => resolve(e.code + ': ' + e.message));
    s.on('close', () => resolve('closed: ' + data));
  });
}

function udp(port) {
  return new Promise((resolve) => {
    const s = dgram.createSocket('udp4');
    s.send('from the build', port, '127.0.0.1', (err) => { s.close(); resolve(err ? err.code : 'ok: sent'); });
  });
}

(async () => {
  const p = t.service_port;
  const results = {
    service: await connect({ host: '127.0.0.1', port: p }, 'GET /v1/users HTTP/1.0\r\n\r\n'),
    tcp: await connect({ host: '127.0.0.1', port: t.tcp_port }, 'hello\r\n'),
    udp: await udp(t.udp_port),
    abstract: await connect({ path: '\0' + t.abstract }),
    proxy_other_host: await connect({ host: '127.0.0.1', port: proxyPort }, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n'),
    proxy_service: await connect({ host: '127.0.0.1', port: proxyPort }, 'CONNECT 127.0.0.1:' + p + ' HTTP/1.1\r\nHost: 127.0.0.1:' + p + '\r\n\r\n'),
    proxy_service_http: await connect({ host: '127.0.0.1', port: proxyPort }, 'GET http://127.0.0.1:' + p + '/v1/users HTTP/1.1\r\nHost: 127.0.0.1:' + p + '\r\n\r\n'),
  };
  fs.writeFileSync('/deps/attack-results.json', JSON.stringify(results));
})();
`;

function write(root: string, files: Record<string, string>): void {
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
    fs.writeFileSync(path.join(root, name), text);
  }
}

function pythonTree(root: string, targets: Targets): void {
  write(root, {
    'algorithmia.conf': JSON.stringify({ username: 'mallory', algoname: 'Attack', language: 'python3' }),
    'requirements.txt': 'six==1.17.0\n./localpkg\n',
    'localpkg/pyproject.toml': '[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n',
    'localpkg/backend.py': PY_BACKEND,
    'localpkg/targets.json': JSON.stringify(targets),
    'src/__init__.py': '',
    'src/Attack.py': [
      'import localpkg_attack',
      'import six',
      '',
      '',
      'def apply(input):',
      '    return {"results": localpkg_attack.RESULTS, "six": six.__version__}',
      '',
    ].join('\n'),
  });
}

function javascriptTree(root: string, targets: Targets): void {
  write(root, {
    'algorithmia.conf': JSON.stringify({ username: 'mallory', algoname: 'AttackJs', language: 'javascript' }),
    'package.json': JSON.stringify(
      {
        name: 'attack',
        version: '1.0.0',
        private: true,
        main: 'src/AttackJs.js',
        scripts: { postinstall: 'node /build/src/attack.js' },
        dependencies: { ms: '2.1.3' },
      },
      null,
      2,
    ),
    'attack.js': JS_ATTACK,
    'targets.json': JSON.stringify(targets),
    'src/AttackJs.js': [
      "const ms = require('ms');",
      "const results = JSON.parse(require('fs').readFileSync('/deps/attack-results.json', 'utf8'));",
      "exports.apply = function (input, cb) { cb(null, { results, ms: ms('2s') }); };",
      '',
    ].join('\n'),
  });
}

describe('build steps cannot reach the host (issue 11 item 5)', () => {
  let srv: TestServer;
  let api: Client;
  let mallory: TestUser;
  let cacheDir: string;
  let tcp: net.Server;
  let abstractServer: net.Server;
  let udp: dgram.Socket;
  const seen = { tcp: 0, udp: 0, abstract: 0 };
  let targets: Targets;

  before(async () => {
    // Own download caches: the dependency is fetched from the registry, through the proxy.
    cacheDir = await makeTempDir('algohost-egress-cache-');
    srv = await startTestServer({ env: { ALGOHOST_BUILD_CACHE_DIR: cacheDir, ALGOHOST_BUILD_CACHE_SHARED: 'false' } });
    api = client(srv.url);
    mallory = await createUser(api, srv.adminKey, 'mallory');

    tcp = net.createServer((s) => {
      seen.tcp++;
      s.end('HTTP/1.0 200 OK\r\n\r\nsecret');
    });
    await new Promise<void>((r) => tcp.listen(0, '127.0.0.1', r));
    udp = dgram.createSocket('udp4');
    udp.on('message', () => seen.udp++);
    await new Promise<void>((r) => udp.bind(0, '127.0.0.1', r));
    const abstractName = `algohost-test-${crypto.randomBytes(6).toString('hex')}`;
    abstractServer = net.createServer((s) => {
      seen.abstract++;
      s.end('secret\r\n');
    });
    await new Promise<void>((r) => abstractServer.listen(`\0${abstractName}`, r));
    targets = {
      service_port: Number(new URL(srv.url).port),
      tcp_port: (tcp.address() as net.AddressInfo).port,
      udp_port: udp.address().port,
      abstract: abstractName,
    };
  });

  after(async () => {
    await srv.stop();
    await new Promise((r) => tcp.close(r));
    await new Promise((r) => abstractServer.close(r));
    udp.close();
    await fs.promises.rm(cacheDir, { recursive: true, force: true });
  });

  /** Pushes the tree as mallory's isolated algorithm `name`; returns the commit and the build log. */
  async function pushAndBuild(name: string, environment: string, tree: (root: string) => void): Promise<{ sha: string; log: string }> {
    const envId = await environmentId(api, mallory.key, environment);
    const created = await api.post('/v1/algorithms/mallory', {
      key: mallory.key,
      body: { name, settings: { algorithm_environment: envId, network_access: 'isolated' } },
    });
    assert.equal(created.status, 200, created.text);
    const { dir } = await clone(gitUrl(srv.url, 'mallory', mallory.key, 'mallory', name));
    const src = await makeTempDir('algohost-attack-');
    try {
      tree(src);
      replaceWorkingFiles(dir, src);
      const push = await commitAndPush(dir, 'attack', { wait: true });
      const id = announcedBuildId(push.stderr);
      assert.ok(id, push.stderr);
      const logs = await api.get(`/v1/algorithms/mallory/${name}/builds/${id}/logs`, { key: mallory.key });
      assert.match(push.stderr, new RegExp(`build ${id} succeeded`), logs.body.logs);
      const build = await api.get(`/v1/algorithms/mallory/${name}/builds/${id}`, { key: mallory.key });
      return { sha: build.body.commit_sha as string, log: logs.body.logs as string };
    } finally {
      await removeClone(dir);
      await fs.promises.rm(src, { recursive: true, force: true });
    }
  }

  function assertContained(results: Record<string, string>, log: string): void {
    const port = targets.service_port;
    // Direct connections find only the sandbox's own loopback: nothing listens there.
    assert.match(results.service!, /refused|ECONNREFUSED/i, `service port: ${results.service}`);
    assert.match(results.tcp!, /refused|ECONNREFUSED/i, `loopback TCP: ${results.tcp}`);
    assert.match(results.abstract!, /refused|ECONNREFUSED|No such file|ENOENT/i, `abstract socket: ${results.abstract}`);
    // Through the proxy: a 403 naming the reason.
    for (const k of ['proxy_other_host', 'proxy_service', 'proxy_service_http'])
      assert.match(results[k]!, /HTTP\/1\.1 403 Not a package registry/, `${k}: ${results[k]}`);
    assert.deepEqual(seen, { tcp: 0, udp: 0, abstract: 0 });
    // The build log shows the proxy's refusals.
    assert.match(log, /\[egress\] refused CONNECT example\.com:443: example\.com:443 is not a package registry of this cluster/);
    assert.match(
      log,
      new RegExp(`\\[egress\\] refused CONNECT 127\\.0\\.0\\.1:${port}: 127\\.0\\.0\\.1:${port} is not a package registry`),
    );
    assert.match(log, new RegExp(`\\[egress\\] refused GET http://127\\.0\\.0\\.1:${port}`));
  }

  test('Python: a local package built during pip install reaches nothing; six still comes from PyPI through the proxy', async () => {
    const { sha, log } = await pushAndBuild('Attack', 'python311', (root) => pythonTree(root, targets));
    const res = await request(srv.url, 'POST', `/v1/algo/mallory/Attack/${sha}`, { key: mallory.key, body: {} });
    assert.equal(res.status, 200, res.text);
    assertContained(res.body.result.results, log);
    assert.equal(res.body.result.six, '1.17.0');
    assert.match(log, /\[egress\] reached [^\n]*(pypi\.org|files\.pythonhosted\.org):443/, log);
  });

  test('JavaScript: an npm postinstall script reaches nothing; ms still comes from the npm registry through the proxy', async () => {
    const { sha, log } = await pushAndBuild('AttackJs', 'nodejs20', (root) => javascriptTree(root, targets));
    const res = await request(srv.url, 'POST', `/v1/algo/mallory/AttackJs/${sha}`, { key: mallory.key, body: {} });
    assert.equal(res.status, 200, res.text);
    assertContained(res.body.result.results, log);
    assert.equal(res.body.result.ms, 2000);
    assert.match(log, /\[egress\] reached [^\n]*registry\.npmjs\.org:443/, log);
  });
});
