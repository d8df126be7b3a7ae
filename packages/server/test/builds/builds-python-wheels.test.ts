/**
 * Python builds with extra wheel directories (ALGOHOST_PIP_FIND_LINKS) and no package index at
 * all: the index is an empty local directory (a file: registry is mounted read-only at its own
 * path), so the only place pip can find a distribution is the wheel directory. The test builds
 * a tiny pure-Python wheel at run time; a push requiring it builds and the log shows it
 * installed from the wheel directory, and a requirement the directory lacks fails the build
 * naming it.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { environmentId } from '../support/algorithms.js';
import { createUser } from '../support/fixtures.js';
import { announcedBuildId, clone, commitAndPush, gitUrl, removeClone } from '../support/git.js';
import { client, type Client } from '../support/http.js';
import { makeTempDir, startTestServer, type TestServer } from '../support/server.js';

const exec = promisify(execFile);
const PYTHON = '/usr/bin/python3';
const PACKAGE = 'algohost_wheel_demo';
const VERSION = '0.1.0';
const WHEEL = `${PACKAGE}-${VERSION}-py3-none-any.whl`;
const MODULE = 'def greet(name):\n    return "hello " + name + " from the wheel"\n';

/**
 * Writes the wheel with pip (setuptools, no build isolation, no index); when setuptools is
 * missing, writes the zip by hand: the module, METADATA, WHEEL and RECORD.
 */
async function buildWheel(root: string): Promise<string> {
  const pkg = path.join(root, 'pkg');
  const wheels = path.join(root, 'wheels');
  fs.mkdirSync(path.join(pkg, PACKAGE), { recursive: true });
  fs.mkdirSync(wheels);
  fs.writeFileSync(path.join(pkg, PACKAGE, '__init__.py'), MODULE);
  fs.writeFileSync(
    path.join(pkg, 'pyproject.toml'),
    `[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n\n` +
      `[project]\nname = "${PACKAGE}"\nversion = "${VERSION}"\n`,
  );
  const hasSetuptools = await exec(PYTHON, ['-c', 'import setuptools']).then(
    () => true,
    () => false,
  );
  if (hasSetuptools) {
    await exec(PYTHON, ['-m', 'pip', 'wheel', '--no-deps', '--no-build-isolation', '--no-index', '-q', '-w', wheels, pkg], {
      env: { PATH: process.env.PATH, HOME: root, PIP_CONFIG_FILE: '/dev/null' },
    });
  } else {
    const script = String.raw`
import base64, hashlib, sys, zipfile
out, name, version, module = sys.argv[1:5]
info = f"{name}-{version}.dist-info"
files = {
    f"{name}/__init__.py": module.encode(),
    f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode(),
    f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: algohost-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
}
def digest(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
record = "".join(f"{p},{digest(d)},{len(d)}\n" for p, d in files.items()) + f"{info}/RECORD,,\n"
with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
    for p, d in files.items():
        z.writestr(p, d)
    z.writestr(f"{info}/RECORD", record)
`;
    await exec(PYTHON, ['-c', script, path.join(wheels, WHEEL), PACKAGE, VERSION, MODULE]);
  }
  assert.ok(fs.existsSync(path.join(wheels, WHEEL)), `no ${WHEEL} in ${wheels}: ${fs.readdirSync(wheels).join(', ')}`);
  return wheels;
}

/** Build steps run as unprivileged uids of their own: directories 0755, files 0644, from `root` down. */
function makeReadable(root: string): void {
  fs.chmodSync(root, 0o755);
  for (const entry of fs.readdirSync(root, { withFileTypes: true })) {
    const full = path.join(root, entry.name);
    if (entry.isDirectory()) makeReadable(full);
    else fs.chmodSync(full, 0o644);
  }
}

describe('Python builds install from extra wheel directories with no package index', () => {
  let srv: TestServer;
  let api: Client;
  let root: string;
  before(async () => {
    // mkdtemp under /tmp: every parent is traversable once the directory itself is 0755.
    root = await makeTempDir('algohost-wheels-');
    const wheels = await buildWheel(root);
    const index = path.join(root, 'empty-index');
    fs.mkdirSync(index);
    makeReadable(root);
    srv = await startTestServer({
      env: { ALGOHOST_PIP_FIND_LINKS: wheels, ALGOHOST_PIP_INDEX_URL: pathToFileURL(index).href },
    });
    api = client(srv.url);
  });
  after(async () => {
    await srv?.stop();
    if (root) await fs.promises.rm(root, { recursive: true, force: true });
  });

  test('a requirement in the wheel directory installs; one it lacks fails the build naming it', async () => {
    const owner = await createUser(api, srv.adminKey, 'u_wheels');
    const name = 'WheelDemo';
    const created = await api.post(`/v1/algorithms/${owner.name}`, {
      key: owner.key,
      body: { name, settings: { algorithm_environment: await environmentId(api, owner.key, 'python311') } },
    });
    assert.equal(created.status, 200, created.text);
    const { dir, result } = await clone(gitUrl(srv.url, owner.name, owner.key, owner.name, name));
    assert.equal(result.code, 0, result.stderr);
    const push = async (message: string) => {
      const out = await commitAndPush(dir, message, { wait: true });
      const id = announcedBuildId(out.stderr);
      assert.ok(id, out.stderr);
      const build = await api.get(`/v1/algorithms/${owner.name}/${name}/builds/${id}`, { key: owner.key });
      const logs = await api.get(`/v1/algorithms/${owner.name}/${name}/builds/${id}/logs`, { key: owner.key });
      assert.equal(logs.status, 200, logs.text);
      return { status: build.body.status as string, logs: logs.body.logs as string };
    };
    try {
      fs.writeFileSync(path.join(dir, 'requirements.txt'), `${PACKAGE}==${VERSION}\n`);
      fs.writeFileSync(
        path.join(dir, 'src', `${name}.py`),
        `from ${PACKAGE} import greet\n\n\ndef apply(input):\n    return greet(str(input))\n`,
      );
      const good = await push('use the wheel');
      assert.equal(good.status, 'succeeded', good.logs);
      assert.match(good.logs, new RegExp(`Processing /inputs/0/${WHEEL.replace(/\./g, '\\.')}`), good.logs);
      assert.match(good.logs, new RegExp(`Successfully installed ${PACKAGE}-${VERSION.replace(/\./g, '\\.')}`), good.logs);

      const missing = 'algohost_absent_demo';
      fs.writeFileSync(path.join(dir, 'requirements.txt'), `${PACKAGE}==${VERSION}\n${missing}==1.0\n`);
      const bad = await push('require a package the wheel directory lacks');
      assert.equal(bad.status, 'failed', bad.logs);
      assert.match(bad.logs, new RegExp(`No matching distribution found for ${missing}==1\\.0`), bad.logs);
    } finally {
      await removeClone(dir);
    }
  });
});
