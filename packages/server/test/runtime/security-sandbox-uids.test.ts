/**
 * Issue 36, items 9 and 13, played as mallory's algorithm and build would:
 *   9. every sandbox ran as host uid 65534, so the kernel's per-uid limits were one for all
 *      tenants: mallory's runner took every inotify instance and another tenant's build failed.
 *      Now each runner and build step has a host uid of its own, freed only once its processes
 *      are gone and the directories it wrote are handed back.
 *  13. the seccomp filter refused only the keyring calls; io_uring, perf events, bpf and
 *      userfaultfd reached the kernel. Now it refuses what a container runtime's default
 *      profile refuses, in runners and build steps.
 * The probes are test/fixtures/hostile/escapes/src/probes.py (as in sandbox-escapes.test.ts).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../src/config/config.js';
import { seccompFilter } from '../../src/runtime/sandbox/seccomp.js';
import { SandboxUnavailableError, Supervisor, type SandboxSpec } from '../../src/runtime/sandbox/supervisor.js';
import { DEFAULT_SANDBOX_UID_RANGE, parseUidRange, SandboxUids, uidRangeProblem } from '../../src/runtime/sandbox/uids.js';
import { environmentId } from '../support/algorithms.js';
import { createUser, type TestUser } from '../support/fixtures.js';
import { git, gitUrl } from '../support/git.js';
import { client, request, type Client } from '../support/http.js';
import { DATABASES, makeTempDir, startTestServer, type TestServer } from '../support/server.js';
import { preparedSupervisor } from '../support/supervisor.js';

const FIXTURE = fileURLToPath(new URL('../../../../test/fixtures/hostile/escapes/', import.meta.url));
const MAX_INOTIFY_INSTANCES = Number(fs.readFileSync('/proc/sys/fs/inotify/max_user_instances', 'utf8'));
/** Above the per-uid inotify limit, so that running out of instances is not running out of files. */
const OPEN_FILES = MAX_INOTIFY_INSTANCES + 200;

type Result = Record<string, any>;

function fixtureTree(probe?: { probe: string; args?: Result }): Record<string, Buffer | string> {
  const files: Record<string, Buffer | string> = {};
  for (const rel of ['algorithmia.conf', 'requirements.txt', 'src/__init__.py', 'src/Escape.py', 'src/probes.py']) {
    files[rel] = fs.readFileSync(path.join(FIXTURE, rel));
  }
  if (probe) {
    files['compileall.py'] = fs.readFileSync(path.join(FIXTURE, 'compileall.py'));
    files['src/probe.json'] = JSON.stringify(probe);
  }
  return files;
}

/** Whether a thread of process `pid` is neither a zombie nor dead. */
function threadRuns(pid: string): boolean {
  let tids: string[];
  try {
    tids = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    return false;
  }
  return tids.some((tid) => {
    try {
      return !/^State:\s*[ZX]/m.test(fs.readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8'));
    } catch {
      return false;
    }
  });
}

/** The host's processes running as `uid` (real, effective, saved or file-system uid). */
function hostProcessesOf(uid: number): number[] {
  const pids: number[] = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let status: string;
    try {
      status = fs.readFileSync(`/proc/${name}/status`, 'utf8');
    } catch {
      continue;
    }
    // A zombie has exited (it runs nothing) unless a thread of it other than the first runs on.
    if (/^State:\s*[ZX]/m.test(status) && !threadRuns(name)) continue;
    if (/^Uid:\s*(.*)$/m.exec(status)?.[1]?.split(/\s+/).includes(String(uid))) pids.push(Number(name));
  }
  return pids;
}

/** The host uid of the process whose command line holds `nonce`, if one runs. */
function hostUidOf(nonce: string): number | undefined {
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (!fs.readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').includes(nonce)) continue;
      const uid = /^Uid:\s*(\d+)/m.exec(fs.readFileSync(`/proc/${name}/status`, 'utf8'))?.[1];
      if (uid !== undefined) return Number(uid);
    } catch {
      // gone meanwhile
    }
  }
  return undefined;
}

for (const database of DATABASES) {
  describe(`each sandbox has a host uid of its own, and the kernel surface is refused (${database})`, () => {
    let srv: TestServer;
    let api: Client;
    let alice: TestUser;
    let mallory: TestUser;
    let work: string;
    let pythonEnv: string;
    let escapeSha: string;
    let calmSha: string;
    let commits = 0;
    let wellBehavedCalls = 0;

    const create = async (user: TestUser, name: string) => {
      const res = await api.post(`/v1/algorithms/${user.name}`, {
        key: user.key,
        body: { name, settings: { algorithm_environment: pythonEnv } },
      });
      assert.equal(res.status, 200, res.text);
    };

    /** One commit of exactly `files`, force-pushed; the build's status and log. */
    const push = async (user: TestUser, name: string, files: Record<string, Buffer | string>) => {
      const dir = path.join(work, `c${++commits}`);
      fs.mkdirSync(dir);
      assert.equal((await git(['init', '-q', '-b', 'main', dir])).code, 0);
      for (const [file, content] of Object.entries(files)) {
        fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
        fs.writeFileSync(path.join(dir, file), content);
      }
      await git(['add', '-A'], dir);
      assert.equal((await git(['commit', '-q', '-m', `probe ${commits}`], dir)).code, 0);
      const sha = (await git(['rev-parse', 'HEAD'], dir)).stdout.trim();
      const pushed = await git(
        ['push', '-q', '--force', '-o', 'wait', gitUrl(srv.url, user.name, user.key, user.name, name), 'HEAD:main'],
        dir,
      );
      const id = /build ([0-9a-f-]{36}) queued/.exec(pushed.stderr)?.[1];
      assert.ok(id, pushed.stderr);
      const build = await api.get(`/v1/algorithms/${user.name}/${name}/builds/${id}`, { key: user.key });
      const logs = await api.get(`/v1/algorithms/${user.name}/${name}/builds/${id}/logs`, { key: user.key });
      return { sha, status: build.body.status as string, log: String(logs.body.logs ?? '') };
    };

    /** A probe in a warm runner of `user`'s algorithm: what it got. */
    const runnerResult = async (user: TestUser, algorithm: string, sha: string, probe: string, args: Result = {}) => {
      const res = await request(srv.url, 'POST', `/v1/algo/${user.name}/${algorithm}/${sha}`, { key: user.key, body: { probe, args } });
      assert.equal(res.status, 200, res.text.slice(0, 500));
      assert.equal(res.body.error, undefined, res.text.slice(0, 500));
      return res.body.result as Result;
    };
    /** A probe as user code of a build step of `user`'s (the build fails by design): what it got. */
    const buildResult = async (user: TestUser, probe: string, args: Result = {}) => {
      const r = await push(user, 'BuildProbe', fixtureTree({ probe, args }));
      assert.equal(r.status, 'failed', r.log.slice(-2000));
      const line = /PROBE-RESULT (.*)/.exec(r.log)?.[1];
      assert.ok(line, `the probe printed nothing:\n${r.log.slice(-2000)}`);
      return JSON.parse(line) as Result;
    };
    const mallorys = (probe: string, args: Result = {}) => runnerResult(mallory, 'Escape', escapeSha, probe, args);
    const alices = (probe: string, args: Result = {}) => runnerResult(alice, 'Calm', calmSha, probe, args);

    /** Alice's algorithm answers with her own result. */
    const aliceStillServed = async () => {
      const n = ++wellBehavedCalls;
      const res = await request(srv.url, 'POST', `/v1/algo/alice/Calm/${calmSha}`, { key: alice.key, body: { n } });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body.result, { echo: { n } }, res.text);
    };

    before(async () => {
      srv = await startTestServer({
        database,
        env: { ALGOHOST_SANDBOX_OPEN_FILES: String(OPEN_FILES), ALGOHOST_RUNNERS_PER_ALGORITHM: '1' },
      });
      api = client(srv.url);
      alice = await createUser(api, srv.adminKey, 'alice');
      mallory = await createUser(api, srv.adminKey, 'mallory');
      pythonEnv = await environmentId(api, alice.key, 'python311');
      work = await makeTempDir('algohost-sandbox-uids-');
      await create(alice, 'Calm');
      await create(alice, 'BuildProbe');
      await create(mallory, 'Escape');
      await create(mallory, 'BuildProbe');
      const calm = await push(alice, 'Calm', fixtureTree());
      assert.equal(calm.status, 'succeeded', calm.log);
      calmSha = calm.sha;
      const escape = await push(mallory, 'Escape', fixtureTree());
      assert.equal(escape.status, 'succeeded', escape.log);
      escapeSha = escape.sha;
      await aliceStillServed();
    });
    after(async () => {
      await srv?.stop();
      if (work) await fs.promises.rm(work, { recursive: true, force: true });
    });

    test("9. mallory's runner takes every inotify instance of its uid; alice's runner and build step still make theirs", async () => {
      const taken = await mallorys('inotify_fill');
      // The kernel's per-uid limit, not the open-files limit (which is higher here).
      assert.deepEqual(taken, { ok: false, errno: 'EMFILE', held: MAX_INOTIFY_INSTANCES });
      // Mallory's runner stays warm and keeps them while alice works.
      assert.equal((await alices('inotify_one')).ok, true, 'alice’s runner makes an inotify instance');
      assert.equal((await buildResult(alice, 'inotify_one')).ok, true, 'alice’s build step makes an inotify instance');
      // Mallory's own next build step has a uid of its own too: the limit was her runner's alone.
      assert.equal((await buildResult(mallory, 'inotify_one')).ok, true);
      assert.deepEqual(await mallorys('inotify_one'), { ok: false, errno: 'EMFILE', error: 'Too many open files' });
      await aliceStillServed();
    });

    test('9. sandboxes running at once have distinct host uids of the range, each seen inside as 65534', async () => {
      const a = await alices('identity', { nonce: 'algohost-probe-alice-runner' });
      const m = await mallorys('identity', { nonce: 'algohost-probe-mallory-runner' });
      // The build step holds its process a while, for the host to look at it while it runs.
      const building = buildResult(mallory, 'identity', { nonce: 'algohost-probe-mallory-build', wait: 15 });
      let buildUid: number | undefined;
      for (let i = 0; i < 600 && buildUid === undefined; i++) {
        buildUid = hostUidOf('algohost-probe-mallory-build');
        if (buildUid === undefined) await new Promise((r) => setTimeout(r, 100));
      }
      const b = await building;
      for (const r of [a, m, b]) assert.deepEqual(r, { ok: true, uid: 65534, gid: 65534 });
      const uids = [hostUidOf('algohost-probe-alice-runner'), hostUidOf('algohost-probe-mallory-runner'), buildUid];
      const { first, last } = DEFAULT_SANDBOX_UID_RANGE;
      for (const uid of uids) assert.ok(uid !== undefined && uid >= first && uid <= last, JSON.stringify(uids));
      assert.equal(new Set(uids).size, 3, JSON.stringify(uids));
      // The build step ended: no process of its uid is left on the host.
      assert.deepEqual(hostProcessesOf(buildUid!), []);
      await aliceStillServed();
    });

    test('13. io_uring, perf events, bpf, userfaultfd, keyctl and the rest are refused in a runner and a build step', async () => {
      const expected = {
        io_uring_setup: 'ENOSYS',
        perf_event_open: 'EPERM',
        bpf: 'EPERM',
        userfaultfd: 'EPERM',
        keyctl: 'EPERM',
        open_by_handle_at: 'EPERM',
        process_vm_readv: 'EPERM',
        clone_newuts: 'EPERM',
        personality_no_aslr: 'EPERM',
        personality_query: 'ok',
      };
      assert.deepEqual((await mallorys('kernel_surface')).value, expected, 'runner');
      await aliceStillServed();
      assert.deepEqual((await buildResult(mallory, 'kernel_surface')).value, expected, 'build step');
      await aliceStillServed();
    });
  });
}

describe('sandbox uids: recycling, exhaustion, the range', () => {
  // A range of one uid, outside the default range that test servers use, with entries of its own.
  const RANGE = { first: 69990, last: 69990 };
  let dir: string;
  let lockDir: string;
  let supervisor: Supervisor;

  before(async () => {
    dir = await makeTempDir('algohost-uid-recycle-');
    // The sandbox users pass through it to their owned directory.
    fs.chmodSync(dir, 0o711);
    lockDir = path.join(dir, 'locks');
    supervisor = preparedSupervisor({ uidRange: RANGE, uidLockDir: lockDir, requireCgroups: false });
  });
  after(async () => {
    await fs.promises.rm(dir, { recursive: true, force: true });
  });

  const spec = (script: string, owned: string): SandboxSpec => ({
    argv: ['/bin/sh', '-c', script],
    env: { PATH: '/usr/bin:/bin' },
    cwd: '/',
    mounts: [{ host: owned, inside: '/out', owned: true }],
    network: 'none',
    limits: { memoryBytes: 256 * 1024 * 1024, pids: 32 },
    wallTimeMs: 30_000,
    outputLimitBytes: 1024 * 1024,
  });

  test('9. a uid is given again only once its processes are gone and its files handed back; none free is a clear refusal', async () => {
    const out = path.join(dir, 'out');
    fs.mkdirSync(out);
    // Mallory's step leaves a process behind (its own session, ignoring SIGTERM) and files only
    // her uid could change: a private file, a set-user-id file, a world-writable directory.
    const first = await supervisor.start(
      spec(
        'mkdir /out/d && chmod 0777 /out/d && echo secret > /out/d/f && chmod 0600 /out/d/f && ' +
          'cp /bin/true /out/s && chmod 4755 /out/s && (trap "" TERM; setsid sleep 300 &) ; sleep 300',
        out,
      ),
    );
    first.stdin.end();
    assert.equal(first.uid, RANGE.first);
    // While it runs, its one uid is taken: the next sandbox is refused, saying why.
    await assert.rejects(
      supervisor.start(spec('true', out)),
      (err: Error) => err instanceof SandboxUnavailableError && /sandbox uids .* are in use/.test(err.message),
    );
    for (let i = 0; i < 100 && !fs.existsSync(path.join(out, 's')); i++) await new Promise((r) => setTimeout(r, 50));
    assert.ok(hostProcessesOf(first.uid).length >= 2, 'its processes run as its uid');
    first.kill('cancelled');
    await first.done;
    // Gone before `done`: no process of the uid, its files the service's, with plain modes.
    assert.deepEqual(hostProcessesOf(first.uid), []);
    for (const [file, mode] of [
      ['d', 0o755],
      ['d/f', 0o644],
      ['s', 0o755],
    ] as const) {
      const st = fs.lstatSync(path.join(out, file));
      assert.equal(st.uid, process.getuid!(), file);
      assert.equal(st.mode & 0o7777, mode, file);
    }
    // The same uid again (the only one): it starts with nothing of the first sandbox's.
    const second = await supervisor.start(spec('ls -ln /out/d', out));
    second.stdin.end();
    let printed = '';
    second.stdout.on('data', (d: Buffer) => (printed += d.toString()));
    assert.equal(second.uid, first.uid);
    assert.deepEqual(await second.done, { kind: 'exited', code: 0 });
    // Its owned directory was handed to it: inside, it owns what the first sandbox wrote.
    assert.match(printed, /-rw-r--r-- +1 65534 65534 .* f\n/);
  });

  test("a zombie of the uid (exited, its parent not collecting it) does not hold the uid or a sandbox's end", async () => {
    const uid = RANGE.first;
    // A root parent that never collects its child: the child, dropped to the uid, exits and
    // stays a zombie as long as the parent sleeps. A sandbox's orphaned bwrap waits so for the
    // host's init, which may collect it late or, as Node does when it is a container's PID 1, never.
    const parent = spawn('/bin/sh', ['-c', `setpriv --reuid=${uid} --regid=${uid} --clear-groups /bin/true & exec sleep 60`], {
      stdio: 'ignore',
    });
    try {
      const zombie = async () => {
        for (const name of await fs.promises.readdir('/proc')) {
          const status = await fs.promises.readFile(`/proc/${name}/status`, 'utf8').catch(() => '');
          if (new RegExp(`^PPid:\\s*${parent.pid}$`, 'm').test(status) && /^State:\s*Z/m.test(status)) return status;
        }
        return undefined;
      };
      let status: string | undefined;
      for (let i = 0; i < 100 && !(status = await zombie()); i++) await new Promise((r) => setTimeout(r, 50));
      assert.ok(status, 'the child is a zombie of the sleeping parent');
      assert.match(status, new RegExp(`^Uid:\\s*${uid}\\s`, 'm'));
      // Gone as far as the uid is concerned: reaped at once, where it used to wait out the limit.
      const t = performance.now();
      assert.equal(await new SandboxUids(RANGE, path.join(dir, 'zombie-locks')).reap(uid, 5_000), true);
      assert.ok(performance.now() - t < 1_000, `reap took ${performance.now() - t} ms`);
      // And a sandbox of that uid ends as soon as its process does.
      const p = await supervisor.start(spec('true', fs.mkdtempSync(path.join(dir, 'zombie-out-'))));
      p.stdin.end();
      const started = performance.now();
      assert.deepEqual(await p.done, { kind: 'exited', code: 0 });
      assert.ok(performance.now() - started < 1_000, `the sandbox ended ${performance.now() - started} ms after its start`);
    } finally {
      parent.kill('SIGKILL');
    }
  });

  test('a process whose first thread exited while another runs on is not a zombie: the reap kills it before the uid is free', async () => {
    const uid = RANGE.first;
    // Mallory's process ends its main thread alone (pthread_exit): /proc shows it as a zombie,
    // while a second thread, still her uid, would run on into the next tenant's sandbox.
    const child = spawn(
      '/usr/bin/setpriv',
      [
        `--reuid=${uid}`,
        `--regid=${uid}`,
        '--clear-groups',
        '/usr/bin/python3',
        '-c',
        'import threading, time, ctypes\nthreading.Thread(target=time.sleep, args=(300,)).start()\nctypes.CDLL(None).pthread_exit(None)\n',
      ],
      { stdio: 'ignore' },
    );
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      const states = async () => {
        const tids = await fs.promises.readdir(`/proc/${child.pid}/task`).catch(() => [] as string[]);
        const out: string[] = [];
        for (const tid of tids) {
          const status = await fs.promises.readFile(`/proc/${child.pid}/task/${tid}/status`, 'utf8').catch(() => '');
          out.push(/^State:\s*(\S)/m.exec(status)?.[1] ?? '?');
        }
        return out.sort();
      };
      let seen: string[] = [];
      for (let i = 0; i < 100 && (seen = await states()).join('') !== 'SZ'; i++) await new Promise((r) => setTimeout(r, 50));
      assert.deepEqual(seen, ['S', 'Z'], 'a zombie first thread and a sleeping second one');
      assert.equal(await new SandboxUids(RANGE, path.join(dir, 'thread-locks')).reap(uid, 5_000), true);
      // The reap killed it: no thread of it runs (the parent, this test, collects it).
      const killed = await Promise.race([exited.then(() => true), new Promise((r) => setTimeout(() => r(false), 5_000))]);
      assert.equal(killed, true, 'its second thread still runs after the reap');
      assert.deepEqual(hostProcessesOf(uid), []);
    } finally {
      child.kill('SIGKILL');
    }
  });

  test('the range: refused where it holds an account, a subordinate range or too few uids', async () => {
    const etc = await makeTempDir('algohost-uid-etc-');
    try {
      fs.writeFileSync(path.join(etc, 'passwd'), 'root:x:0:0::/root:/bin/sh\nbob:x:70005:70005::/home/bob:/bin/sh\n');
      fs.writeFileSync(path.join(etc, 'subuid'), 'carol:100000:65536\n');
      assert.match(uidRangeProblem({ first: 70000, last: 70010 }, { etc }) ?? '', /account bob \(70005\)/);
      assert.match(uidRangeProblem({ first: 99000, last: 100000 }, { etc }) ?? '', /subordinate ids 100000-165535 of carol/);
      assert.match(uidRangeProblem({ first: 0, last: 10 }, { etc }) ?? '', /root/);
      assert.equal(uidRangeProblem({ first: 70006, last: 99999 }, { etc, uidMap: '/proc/self/uid_map' }), undefined);
      assert.throws(() => parseUidRange('9-1'), /ends before it starts/);
      assert.throws(
        () => loadConfig({ ALGOHOST_SANDBOX_UID_RANGE: '70000-70010', ALGOHOST_MAX_RUNNERS: '32' }, []),
        /ALGOHOST_SANDBOX_UID_RANGE \(70000-70010\) .* at least 66 uids/,
      );
    } finally {
      await fs.promises.rm(etc, { recursive: true, force: true });
    }
  });

  test('13. the filter assembles for x86_64 and arm64 (every jump in range)', () => {
    assert.ok(seccompFilter('x64')!.length > 60 * 8);
    assert.ok(seccompFilter('arm64')!.length > 50 * 8);
    assert.equal(seccompFilter('riscv64'), undefined);
  });
});
