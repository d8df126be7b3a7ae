/**
 * Issue 17, "Sandbox escapes": hostile probes (test/fixtures/hostile/escapes/src/probes.py), each
 * run as an algorithm (one call of mallory's Escape) AND as user code of a build step (a
 * compileall.py in the pushed tree shadows the standard module the compile step runs), each
 * asserting the specific refusal it gets. Pushed-tree attacks (symbolic links, `..`, hooks,
 * .gitmodules) and templates are played too. After every probe alice's well-behaved algorithm
 * answers with its result, and at the end the service is healthy.
 *
 * Related probes elsewhere, not repeated here: sandbox.test.ts (timeouts, exits, forged FIFO
 * responses, huge prints with stdout), security-sandbox.test.ts (forged manifests, mountinfo,
 * runner tmpfs sizes, artifact size), security-git.test.ts ('..', '../x', '.git' and a .git/config
 * with core.hooksPath in a pushed tree, refused by fsck at the push; push size limits),
 * security-build-network.test.ts (registries through the egress proxy), security-data.test.ts
 * and data-encoded-paths.test.ts (data names over HTTP).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { environmentId } from '../support/algorithms.js';
import { createUser, type TestUser } from '../support/fixtures.js';
import { git, gitUrl } from '../support/git.js';
import { client, request, type Client } from '../support/http.js';
import { makeTempDir, startTestServer, type TestServer } from '../support/server.js';
import { readCatalog, CATALOG_DIR } from '../../src/storage/catalog-files.js';

const FIXTURE = fileURLToPath(new URL('../../../../test/fixtures/hostile/escapes/', import.meta.url));
const RUNNER_MEMORY_MIB = 256;
const BUILD_MEMORY_MIB = 256;
const PIDS = 64;
const OPEN_FILES = 200;

type Result = Record<string, any>;
type Entry = string | Buffer | { symlink: string } | { gitlink: string };

/** The fixture's files; `withBuildProbe` adds the compileall.py that runs one probe in the compile step. */
function fixtureTree(probe?: { probe: string; args?: Result }): Record<string, Entry> {
  const files: Record<string, Entry> = {};
  for (const rel of ['algorithmia.conf', 'requirements.txt', 'src/__init__.py', 'src/Escape.py', 'src/probes.py']) {
    files[rel] = fs.readFileSync(path.join(FIXTURE, rel));
  }
  if (probe) {
    files['compileall.py'] = fs.readFileSync(path.join(FIXTURE, 'compileall.py'));
    files['src/probe.json'] = JSON.stringify(probe);
  }
  return files;
}

describe('sandbox escapes: hostile probes as algorithms and as build steps', () => {
  let srv: TestServer;
  let api: Client;
  let alice: TestUser;
  let mallory: TestUser;
  let work: string;
  let pythonEnv: string;
  let escapeSha: string;
  let aliceSha: string;
  let aliceArtifact: string;
  let servicePort: number;
  let commits = 0;
  let wellBehavedCalls = 0;

  const create = async (user: TestUser, name: string, settings: Result = {}) => {
    const res = await api.post(`/v1/algorithms/${user.name}`, {
      key: user.key,
      body: { name, settings: { algorithm_environment: pythonEnv, ...settings } },
    });
    assert.equal(res.status, 200, res.text);
  };

  /** One commit of exactly `files`, force-pushed; the build's outcome, or the push's refusal. */
  const push = async (user: TestUser, name: string, files: Record<string, Entry>) => {
    const dir = path.join(work, `c${++commits}`);
    fs.mkdirSync(dir);
    assert.equal((await git(['init', '-q', '-b', 'main', dir])).code, 0);
    for (const [file, content] of Object.entries(files)) {
      const p = path.join(dir, file);
      fs.mkdirSync(path.dirname(p), { recursive: true });
      if (typeof content === 'string' || Buffer.isBuffer(content)) fs.writeFileSync(p, content);
      else if ('symlink' in content) fs.symlinkSync(content.symlink, p);
    }
    await git(['add', '-A'], dir);
    // A gitlink (a submodule's commit) is an index entry only: no working file.
    for (const [file, content] of Object.entries(files)) {
      if (typeof content === 'object' && 'gitlink' in content) {
        assert.equal((await git(['update-index', '--add', '--cacheinfo', `160000,${content.gitlink},${file}`], dir)).code, 0);
      }
    }
    assert.equal((await git(['commit', '-q', '-m', `probe ${commits}`], dir)).code, 0);
    const sha = (await git(['rev-parse', 'HEAD'], dir)).stdout.trim();
    const pushed = await git(
      ['push', '-q', '--force', '-o', 'wait', gitUrl(srv.url, user.name, user.key, user.name, name), 'HEAD:main'],
      dir,
    );
    const id = /build ([0-9a-f-]{36}) queued/.exec(pushed.stderr)?.[1];
    if (!id) return { pushed, sha, dir, status: 'refused', error: pushed.stderr, log: '' };
    const build = await api.get(`/v1/algorithms/${user.name}/${name}/builds/${id}`, { key: user.key });
    const logs = await api.get(`/v1/algorithms/${user.name}/${name}/builds/${id}/logs`, { key: user.key });
    return {
      pushed,
      sha,
      dir,
      status: build.body.status as string,
      error: (build.body.error ?? '') as string,
      log: String(logs.body.logs ?? ''),
    };
  };

  /** A probe in mallory's warm runner: the call's envelope. */
  const inRunner = (probe: string, args: Result = {}, query = '') =>
    request(srv.url, 'POST', `/v1/algo/mallory/Escape/${escapeSha}${query}`, { key: mallory.key, body: { probe, args } });
  /** A probe in mallory's runner whose call must itself succeed: what the probe got. */
  const runnerResult = async (probe: string, args: Result = {}): Promise<Result> => {
    const res = await inRunner(probe, args);
    assert.equal(res.status, 200, res.text.slice(0, 500));
    assert.equal(res.body.error, undefined, res.text.slice(0, 500));
    return res.body.result as Result;
  };
  /** A probe as user code of a build step: the build (always failed) and what the probe got, if it printed. */
  const inBuild = async (probe: string, args: Result = {}) => {
    const r = await push(mallory, 'BuildProbe', fixtureTree({ probe, args }));
    assert.equal(r.status, 'failed', `${r.status}: ${r.log.slice(-2000)}`);
    const line = /PROBE-RESULT (.*)/.exec(r.log)?.[1];
    return { ...r, result: line ? (JSON.parse(line) as Result) : undefined };
  };
  const buildResult = async (probe: string, args: Result = {}): Promise<Result> => {
    const r = await inBuild(probe, args);
    assert.ok(r.result, `the probe printed nothing: ${r.error}\n${r.log.slice(-2000)}`);
    return r.result;
  };

  /** Alice's algorithm answers with its result: whatever mallory did did not reach it. */
  const aliceStillServed = async () => {
    const n = ++wellBehavedCalls;
    const res = await request(srv.url, 'POST', `/v1/algo/alice/Calm/${aliceSha}`, { key: alice.key, body: { n } });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.result, { echo: { n } }, res.text);
  };

  before(async () => {
    srv = await startTestServer({
      env: {
        ALGOHOST_RUNNER_MEMORY: String(RUNNER_MEMORY_MIB),
        ALGOHOST_BUILD_MEMORY: String(BUILD_MEMORY_MIB),
        ALGOHOST_RUNNER_PIDS: String(PIDS),
        ALGOHOST_SANDBOX_OPEN_FILES: String(OPEN_FILES),
        ALGOHOST_RUNNERS_PER_ALGORITHM: '1',
      },
    });
    api = client(srv.url);
    servicePort = Number(new URL(srv.url).port);
    alice = await createUser(api, srv.adminKey, 'alice');
    mallory = await createUser(api, srv.adminKey, 'mallory');
    pythonEnv = await environmentId(api, alice.key, 'python311');
    work = await makeTempDir('algohost-escapes-');
    await create(alice, 'Calm');
    const calm = await push(alice, 'Calm', fixtureTree());
    assert.equal(calm.status, 'succeeded', calm.log);
    aliceSha = calm.sha;
    await create(mallory, 'Escape', { pipeline_enabled: true });
    const escape = await push(mallory, 'Escape', fixtureTree());
    assert.equal(escape.status, 'succeeded', escape.log);
    escapeSha = escape.sha;
    await create(mallory, 'BuildProbe');
    const row = await srv.server.services.db
      .selectFrom('builds')
      .select('artifact')
      .where('commit_sha', '=', aliceSha)
      .where('status', '=', 'succeeded')
      .executeTakeFirstOrThrow();
    aliceArtifact = srv.server.services.builder.artifactPath(row.artifact!);
    await aliceStillServed();
  });
  after(async () => {
    await srv?.stop();
    if (work) await fs.promises.rm(work, { recursive: true, force: true });
  });

  // ---- the service's files -------------------------------------------------------------------

  const hostFiles = () => [
    path.join(aliceArtifact, 'tree', 'src', 'Escape.py'),
    path.join(aliceArtifact, 'manifest.json'),
    path.join(srv.dataDir, 'algohost.sqlite'),
    path.join(srv.dataDir, 'initial-admin-key'),
    path.join(srv.dataDir, 'cluster-key'),
  ];

  test("1-2. reading another algorithm's artifact, the database or the keys: ENOENT (not even the names exist inside)", async () => {
    assert.ok(fs.existsSync(path.join(srv.dataDir, 'algohost.sqlite')), 'the database is where the probe looks');
    for (const p of hostFiles()) {
      assert.deepEqual(pick(await runnerResult('read', { path: p })), { ok: false, errno: 'ENOENT' }, `runner: ${p}`);
      await aliceStillServed();
    }
    for (const p of hostFiles().slice(0, 3)) {
      assert.deepEqual(pick(await buildResult('read', { path: p })), { ok: false, errno: 'ENOENT' }, `build: ${p}`);
    }
    await aliceStillServed();
  });

  test('3. listing the data directory, its repositories and artifacts, /root: ENOENT', async () => {
    const dirs = [srv.dataDir, path.join(srv.dataDir, 'repositories'), path.join(srv.dataDir, 'builds', 'artifacts'), '/root'];
    for (const p of dirs) {
      assert.deepEqual(pick(await runnerResult('listdir', { path: p })), { ok: false, errno: 'ENOENT' }, `runner: ${p}`);
    }
    assert.deepEqual(pick(await buildResult('listdir', { path: srv.dataDir })), { ok: false, errno: 'ENOENT' });
    await aliceStillServed();
  });

  test("4. the host's processes and their environment: a pid namespace of a few processes, no service secret", async () => {
    const args = { host_pid: process.pid, secret: srv.adminKey };
    for (const [where, r] of [
      ['runner', await runnerResult('processes', args)],
      ['build', await buildResult('processes', args)],
    ] as const) {
      assert.equal(r.ok, false, `${where} sees the service: ${JSON.stringify(r).slice(0, 1000)}`);
      assert.ok(r.max_pid < 20, `${where} sees pids up to ${r.max_pid}`);
      const env = r.own_environ as Record<string, string>;
      assert.deepEqual(
        Object.keys(env).filter((k) => /ADMIN|DATABASE|CLUSTER_KEY|S3_SECRET/.test(k)),
        [],
        `${where} environment: ${Object.keys(env).join(' ')}`,
      );
    }
    await aliceStillServed();
  });

  // ---- network --------------------------------------------------------------------------------

  test("5. an isolated algorithm reaches neither the link-local metadata address nor the service's own port", async () => {
    // No route at all in the runner's own network namespace: the metadata address is unreachable
    // and loopback there is the sandbox's own, where nothing listens.
    assert.deepEqual(pick(await runnerResult('connect', { host: '169.254.169.254', port: 80 })), { ok: false, errno: 'ENETUNREACH' });
    assert.deepEqual(pick(await runnerResult('connect', { host: '127.0.0.1', port: servicePort })), { ok: false, errno: 'ECONNREFUSED' });
    await aliceStillServed();
  });

  test("6. a build step reaches neither the metadata address nor the service's port (only the registry proxy)", async () => {
    assert.deepEqual(pick(await buildResult('connect', { host: '169.254.169.254', port: 80 })), { ok: false, errno: 'ENETUNREACH' });
    assert.deepEqual(pick(await buildResult('connect', { host: '127.0.0.1', port: servicePort })), { ok: false, errno: 'ECONNREFUSED' });
  });

  // ---- privileges -----------------------------------------------------------------------------

  // mount, ptrace and unshare are refused by the seccomp filter first (EPERM) before what also
  // refuses them: no capability in the sandbox's user namespace (mount); no such process in the
  // sandbox's pid namespace, whose own pid 1 is a copy of bwrap with no rights (ptrace of the
  // service's pid); bwrap --disable-userns, which sets the namespace's user-namespace count to
  // zero (unshare(CLONE_NEWUSER)). setuid(0): uid 0 is not mapped in the sandbox's user namespace.
  for (const [n, probe, errno] of [
    ['7', 'mount', 'EPERM'],
    ['8', 'ptrace', 'EPERM'],
    ['9', 'setuid', 'EINVAL'],
    ['10', 'userns', 'EPERM'],
  ] as const) {
    test(`${n}. ${probe}: refused with ${errno} in a runner and in a build step`, async () => {
      const args = { pid: process.pid };
      assert.deepEqual(pick(await runnerResult(probe, args)), { ok: false, errno }, 'runner');
      assert.deepEqual(pick(await buildResult(probe, args)), { ok: false, errno }, 'build');
      await aliceStillServed();
    });
  }

  test('11. a set-user-id binary gives no root (no_new_privs)', async () => {
    for (const r of [await runnerResult('setuid_binary'), await buildResult('setuid_binary')]) {
      assert.equal(r.ok, false, JSON.stringify(r));
      assert.notEqual(r.code, 0, JSON.stringify(r));
    }
    await aliceStillServed();
  });

  test('12. kernel keyrings: add_key and keyctl are refused with EPERM by the seccomp filter', async () => {
    for (const r of [await runnerResult('keyring'), await buildResult('keyring')]) {
      assert.deepEqual(pick(r), { ok: false, errno: 'EPERM' }, JSON.stringify(r));
      assert.deepEqual(pick(r.user_keyring), { ok: false, errno: 'EPERM' }, JSON.stringify(r));
    }
    await aliceStillServed();
  });

  // ---- bombs ----------------------------------------------------------------------------------

  test(`13. a fork bomb stops at the process limit (EAGAIN) and fails only itself`, async () => {
    const r = await runnerResult('fork_bomb');
    assert.deepEqual(pick(r), { ok: false, errno: 'EAGAIN' });
    assert.ok(r.forked < PIDS, JSON.stringify(r));
    const b = await buildResult('fork_bomb');
    assert.deepEqual(pick(b), { ok: false, errno: 'EAGAIN' });
    await aliceStillServed();
  });

  test('14. a file-descriptor bomb stops at the open-files limit (EMFILE; the hard limit cannot be raised)', async () => {
    for (const r of [await runnerResult('fd_bomb'), await buildResult('fd_bomb')]) {
      assert.deepEqual(pick(r), { ok: false, errno: 'EMFILE' }, JSON.stringify(r));
      assert.ok(r.opened < OPEN_FILES, JSON.stringify(r));
    }
    await aliceStillServed();
  });

  test('15. a memory bomb is an OutOfMemoryError naming the limit (runner) and an out-of-memory build failure', async () => {
    const call = await inRunner('memory_bomb', {}, '?timeout=60');
    assert.equal(call.body.error?.error_type, 'OutOfMemoryError', call.text.slice(0, 500));
    assert.match(call.body.error.message, new RegExp(`${RUNNER_MEMORY_MIB} MiB`));
    const build = await inBuild('memory_bomb');
    assert.match(build.error, /out of memory/, build.log.slice(-1000));
    await aliceStillServed();
  });

  test('16. a /tmp disk bomb: ENOSPC in a runner (sized tmpfs); in a build step the memory limit it counts against', async () => {
    const r = await runnerResult('disk_bomb');
    assert.deepEqual(pick(r), { ok: false, errno: 'ENOSPC' });
    assert.ok(r.written <= (RUNNER_MEMORY_MIB * 1024 * 1024) / 4, JSON.stringify(r));
    const build = await inBuild('disk_bomb');
    assert.ok(/out of memory/.test(build.error) || build.result?.errno === 'ENOSPC', `${build.error} ${JSON.stringify(build.result)}`);
    await aliceStillServed();
  });

  test('17. an output bomb: the call keeps a bounded stdout; the build step is killed, naming the limit', async () => {
    // The call succeeds; what the owner sees of its 64 MiB of prints is capped (1 MiB kept).
    const call = await inRunner('output_bomb', { mib: 64 }, '?stdout=true');
    assert.deepEqual(call.body.result, { ok: true, value: 'printed' }, call.text.slice(0, 300));
    const stdout = call.body.metadata.stdout as string;
    assert.ok(stdout.length > 0 && stdout.length <= 2 * 1024 * 1024, `stdout of ${stdout.length} characters`);
    const build = await inBuild('output_bomb', { mib: 64 });
    assert.match(build.error, /printed more than 20 MB/, build.error);
    await aliceStillServed();
  });

  // ---- the file system ------------------------------------------------------------------------

  test('18. writing outside /tmp: the artifact, /usr, /etc and the sandbox root are read-only', async () => {
    const paths = ['/app/planted', '/app/src/Escape.py', '/usr/planted', '/etc/planted', '/planted', '/opt/algohost/runner/planted'];
    const r = await runnerResult('write_outside', { paths });
    assert.equal(r.ok, false, JSON.stringify(r));
    for (const p of paths) assert.equal(r.value[p], 'EROFS', `${p}: ${r.value[p]}`);
    // In a build step only the checkout (and the layer being made) is writable; the data
    // directory's name (under /tmp in tests) is not even there.
    const b = await buildResult('write_outside', { paths: ['/usr/planted', '/etc/planted', '/planted', `${srv.dataDir}/planted`] });
    assert.deepEqual(b.value, {
      '/usr/planted': 'EROFS',
      '/etc/planted': 'EROFS',
      '/planted': 'EROFS',
      [`${srv.dataDir}/planted`]: 'ENOENT',
    });
    for (const p of ['/usr', '/etc', '/', srv.dataDir]) assert.ok(!fs.existsSync(path.join(p, 'planted')), p);
    await aliceStillServed();
  });

  // The node removes empty, old sandbox groups of nodes that are gone (sandbox.cgroup-sweep): what
  // it decides on is the host's cgroup tree, which user code must not be able to see or shape.
  test("24. the host's cgroup tree is not in the sandbox: no group to list, make or plant in a runner or a build step", async () => {
    const paths = ['/sys/fs/cgroup/memory/algohost/planted', '/sys/fs/cgroup/cpu/algohost/cgroup.procs'];
    for (const [where, result] of [
      ['runner', runnerResult],
      ['build', buildResult],
    ] as const) {
      assert.deepEqual(pick(await result('listdir', { path: '/sys/fs/cgroup' })), { ok: false, errno: 'ENOENT' }, where);
      const w = await result('write_outside', { paths });
      assert.deepEqual(w.value, Object.fromEntries(paths.map((p) => [p, 'ENOENT'])), `${where}: ${JSON.stringify(w)}`);
    }
    assert.ok(!fs.existsSync('/sys/fs/cgroup/memory/algohost/planted'));
    await aliceStillServed();
  });

  test('19. a symbolic link in a pushed repository to a host secret reads nothing in the runner or the build step', async () => {
    const secret = path.join(srv.dataDir, 'initial-admin-key');
    await create(mallory, 'Linked');
    const files = { ...fixtureTree(), 'src/leak': { symlink: secret }, 'src/shadow': { symlink: '/etc/shadow' } };
    const built = await push(mallory, 'Linked', files);
    assert.equal(built.status, 'succeeded', built.log);
    for (const link of ['/app/src/leak', '/app/src/shadow']) {
      const res = await request(srv.url, 'POST', `/v1/algo/mallory/Linked/${built.sha}`, {
        key: mallory.key,
        body: { probe: 'follow_link', args: { link } },
      });
      const r = res.body.result as Result;
      assert.equal(r.is_link, true, res.text);
      assert.match(r.errno, /^(ENOENT|EACCES)$/, res.text);
      assert.ok(!JSON.stringify(r).includes(srv.adminKey), 'the admin key leaked');
    }
    const b = await push(mallory, 'BuildProbe', {
      ...fixtureTree({ probe: 'follow_link', args: { link: 'src/leak' } }),
      'src/leak': { symlink: secret },
    });
    const r = JSON.parse(/PROBE-RESULT (.*)/.exec(b.log)![1]!) as Result;
    assert.deepEqual(pick(r), { ok: false, errno: 'ENOENT' }, JSON.stringify(r));
    await aliceStillServed();
  });

  test('20. a tar climbing out with ../ or through a link it plants writes nothing outside /tmp', async () => {
    const args = { names: ['../../../../etc/planted', '../../../../usr/planted', 'ok'], link_target: '/etc' };
    for (const r of [await runnerResult('tar_slip', args), await buildResult('tar_slip', args)]) {
      assert.equal(r.value.ok, 'extracted', JSON.stringify(r));
      for (const name of ['../../../../etc/planted', '../../../../usr/planted', 'escape/planted']) {
        assert.match(r.value[name], /^(EROFS|EACCES)$/, `${name}: ${JSON.stringify(r)}`);
      }
    }
    assert.ok(!fs.existsSync('/etc/planted') && !fs.existsSync('/usr/planted'));
    await aliceStillServed();
  });

  test("21. data paths climbing with '..' (plain or encoded) are refused by the data API inside an algorithm", async () => {
    const urls = ['data://.my/../alice/x', 'data://.my/c/../../x', 'data://alice/../../etc/passwd', 'data://.algo/perm/../../../x'];
    const r = await runnerResult('data_path', { urls });
    assert.equal(r.ok, false, JSON.stringify(r));
    for (const url of urls) assert.match(r.value[url], /\.\./, `${url}: ${r.value[url]}`);
    await aliceStillServed();
  });

  test('22. Git hooks and .gitmodules in a pushed repository are never executed or followed', async () => {
    const marker = path.join(work, 'hook-ran');
    await create(mallory, 'Submodular');
    const hook = `#!/bin/sh\ntouch ${marker}\n`;
    const files: Record<string, Entry> = {
      ...fixtureTree(),
      '.gitmodules': `[submodule "evil"]\n\tpath = src/evil\n\turl = ext::sh -c touch% ${marker}\n[submodule "host"]\n\tpath = src/host\n\turl = file://${srv.dataDir}/repositories\n`,
      'src/evil': { gitlink: 'a'.repeat(40) },
      'src/host': { gitlink: 'b'.repeat(40) },
      'hooks/post-checkout': hook,
      'hooks/post-receive': hook,
      'githooks/pre-commit': hook,
    };
    const built = await push(mallory, 'Submodular', files);
    assert.equal(built.status, 'succeeded', built.log);
    assert.ok(!fs.existsSync(marker), 'a pushed hook or submodule command ran on the host');
    // The gitlinks are empty directories of the checkout: nothing was fetched from anywhere.
    for (const dir of ['/app/src/evil', '/app/src/host']) {
      const r = await request(srv.url, 'POST', `/v1/algo/mallory/Submodular/${built.sha}`, {
        key: mallory.key,
        body: { probe: 'listdir', args: { path: dir } },
      });
      assert.deepEqual(r.body.result, { ok: true, value: [] }, r.text);
    }
    assert.ok(!fs.existsSync(marker), 'a pushed hook or submodule command ran on the host');
    await aliceStillServed();
  });

  test('23. a template holding a symbolic link: the catalog reader never follows it', async () => {
    const copy = path.join(work, 'catalog');
    fs.cpSync(CATALOG_DIR, copy, { recursive: true });
    fs.symlinkSync('/etc/shadow', path.join(copy, 'templates', 'python', 'shadow'));
    fs.symlinkSync(srv.dataDir, path.join(copy, 'templates', 'python', 'data'));
    const catalog = readCatalog(copy);
    const files = catalog.templates.get('python')!.map((f) => f.path);
    assert.ok(files.length > 0);
    assert.deepEqual(
      files.filter((f) => f.startsWith('shadow') || f.startsWith('data')),
      [],
    );
  });

  test('after every probe: the service is healthy and a well-behaved call returns its result', async () => {
    const health = await api.get('/healthz');
    assert.equal(health.status, 200, health.text);
    await aliceStillServed();
    const res = await inRunner('read', { path: '/app/src/Escape.py' });
    assert.equal(res.body.result?.ok, true, res.text.slice(0, 300));
  });
});

/** The part of a probe's answer a test pins: whether it worked and which errno refused it. */
function pick(r: Result): { ok: boolean; errno: string | null } {
  return { ok: r.ok, errno: r.errno ?? null };
}
