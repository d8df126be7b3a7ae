/**
 * Cgroup detection and, on cgroup v2, the delegation of controllers to the sandboxes' groups
 * (runtime/sandbox/cgroups.ts), run against fake cgroup trees in temporary directories: this
 * machine offers only v1 controllers, so the kernel's side of v2 (the "no internal processes"
 * rule, EBUSY) cannot be exercised here. A fake file takes any write, so a refusal is made by
 * putting a directory where the kernel's file would be (the write fails with EISDIR, handled
 * as EACCES, EROFS or EBUSY are). The real v1 hierarchy of this machine is only read, except
 * by the sweep of stale groups, which the kernel's own rules decide (a group with a process
 * cannot go): its test works in a group of its own, out of the way of other nodes' sandboxes.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import { after, describe, test } from 'node:test';
import { detectCgroups, sandboxGroupInUse, sandboxGroupName, SERVER_LEAF } from '../../src/runtime/sandbox/cgroups.js';
import { SandboxUnavailableError } from '../../src/runtime/sandbox/supervisor.js';
import { preparedSupervisor } from '../support/supervisor.js';

const temps: string[] = [];
after(() => {
  for (const t of temps) fs.rmSync(t, { recursive: true, force: true });
});

/** A fake cgroup file system: `files` maps paths relative to its root to their contents. */
function fakeTree(files: Record<string, string>, procSelf: string): { root: string; procSelfCgroup: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'algohost-cgroups-'));
  temps.push(dir);
  const root = path.join(dir, 'cgroup');
  for (const [rel, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), content);
  }
  fs.mkdirSync(root, { recursive: true });
  const procSelfCgroup = path.join(dir, 'proc-self-cgroup');
  fs.writeFileSync(procSelfCgroup, procSelf);
  return { root, procSelfCgroup };
}

/** A v2 group as the kernel shows it: a non-root group has cgroup.type. */
function v2Group(prefix: string, controllers: string, procs: number[], subtree = ''): Record<string, string> {
  const p = prefix ? `${prefix}/` : '';
  return {
    [`${p}cgroup.controllers`]: controllers,
    [`${p}cgroup.subtree_control`]: subtree,
    [`${p}cgroup.procs`]: procs.map((n) => `${n}\n`).join(''),
    [`${p}cgroup.type`]: 'domain\n',
  };
}

/** Every file under a directory with its contents (to show that nothing changed). */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const visit = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) {
        out[`${path.relative(dir, p)}/`] = '';
        visit(p);
      } else out[path.relative(dir, p)] = fs.readFileSync(p, 'utf8');
    }
  };
  visit(dir);
  return out;
}

const read = (f: string) => fs.readFileSync(f, 'utf8');
const ALL = 'cpuset cpu io memory hugetlb pids rdma misc\n';

describe('cgroup v2: the service delegates controllers to its sandboxes at start-up', () => {
  test("a container's own group (cgroup namespace root): its processes move to the leaf, then memory, pids and cpu are enabled", async () => {
    const t = fakeTree(v2Group('', ALL, [1, 7, 42]), '0::/\n');
    const cg = detectCgroups(t);
    assert.equal(cg.version, 2);
    assert.deepEqual(cg.limits, { memory: true, pids: true, cpu: true });
    assert.equal(cg.problem, undefined);
    // One pid per write, each into the leaf.
    assert.equal(read(path.join(t.root, SERVER_LEAF, 'cgroup.procs')), '1\n7\n42\n');
    assert.equal(read(path.join(t.root, 'cgroup.subtree_control')), '+memory +pids +cpu');
    assert.equal(read(path.join(t.root, 'algohost', 'cgroup.subtree_control')), '+memory +pids +cpu');
    assert.match(cg.actions.join('\n'), /moved 3 processes .* into algohost-server/);

    // A sandbox group under an account's CPU parent gets every limit.
    const group = await cg.create('s-1', { memoryBytes: 1 << 20, pids: 9, cpus: 0.5, cpuGroup: 'acct-1' });
    const dir = path.join(t.root, 'algohost', 'acct-1', 's-1');
    assert.deepEqual(group?.procsFiles, [path.join(dir, 'cgroup.procs')]);
    assert.equal(read(path.join(dir, 'memory.max')), String(1 << 20));
    assert.equal(read(path.join(dir, 'pids.max')), '9');
    assert.equal(read(path.join(dir, 'cpu.max')), '50000 100000');
    assert.equal(read(path.join(t.root, 'algohost', 'acct-1', 'cgroup.subtree_control')), '+memory +pids +cpu');
  });

  test('a nested own group (a pod under /kubepods) is found from /proc/self/cgroup; a second start from the leaf uses the group above it', () => {
    const own = 'kubepods/pod-a/ctr-b';
    const t = fakeTree({ ...v2Group('', ALL, [], 'cpu memory pids'), ...v2Group(own, ALL, [5]) }, `0::/${own}\n`);
    const cg = detectCgroups(t);
    assert.deepEqual(cg.limits, { memory: true, pids: true, cpu: true });
    assert.equal(read(path.join(t.root, own, SERVER_LEAF, 'cgroup.procs')), '5\n');
    assert.equal(read(path.join(t.root, own, 'cgroup.subtree_control')), '+memory +pids +cpu');
    // The root group was not touched.
    assert.equal(read(path.join(t.root, 'cgroup.subtree_control')), 'cpu memory pids');

    // The container's shell, moved into the leaf, starts the server again: nothing nests deeper.
    fs.writeFileSync(path.join(t.procSelfCgroup), `0::/${own}/${SERVER_LEAF}\n`);
    const again = detectCgroups(t);
    assert.deepEqual(again.limits, { memory: true, pids: true, cpu: true });
    assert.deepEqual(again.actions, []);
    assert.equal(fs.existsSync(path.join(t.root, own, SERVER_LEAF, SERVER_LEAF)), false);
  });

  test('controllers already enabled: no process is moved', () => {
    const t = fakeTree(v2Group('', ALL, [1, 2], 'cpu memory pids\n'), '0::/\n');
    const cg = detectCgroups(t);
    assert.deepEqual(cg.limits, { memory: true, pids: true, cpu: true });
    assert.deepEqual(cg.actions, []);
    assert.equal(fs.existsSync(path.join(t.root, SERVER_LEAF)), false);
  });

  test("the host's root group (no cgroup.type) may hold processes: controllers are enabled without moving any", () => {
    const files = v2Group('', ALL, [1, 2]);
    delete files['cgroup.type'];
    const t = fakeTree(files, '0::/\n');
    const cg = detectCgroups(t);
    assert.deepEqual(cg.limits, { memory: true, pids: true, cpu: true });
    assert.equal(fs.existsSync(path.join(t.root, SERVER_LEAF)), false);
    assert.equal(read(path.join(t.root, 'cgroup.subtree_control')), '+memory +pids +cpu');
  });

  test('memory and pids not delegated by the host: only cpu holds, the warning says what to do, and the supervisor refuses user code', async () => {
    const t = fakeTree(v2Group('', 'cpu io\n', [1]), '0::/\n');
    const cg = detectCgroups(t);
    assert.deepEqual(cg.limits, { memory: false, pids: false, cpu: true });
    assert.match(
      cg.problem ?? '',
      /controllers memory, pids are not delegated to this process's group \/ \(its cgroup.controllers lists: cpu io\)/,
    );
    assert.match(cg.problem ?? '', /privileged container/);
    assert.equal(read(path.join(t.root, 'cgroup.subtree_control')), '+cpu');
    // Groups are still made, with the limit that holds and without the files that do not exist.
    await cg.create('s-2', { memoryBytes: 1 << 20, pids: 9, cpus: 1 });
    const dir = path.join(t.root, 'algohost', 's-2');
    assert.equal(read(path.join(dir, 'cpu.max')), '100000 100000');
    assert.equal(fs.existsSync(path.join(dir, 'memory.max')), false);
    assert.equal(fs.existsSync(path.join(dir, 'pids.max')), false);

    const strict = preparedSupervisor({ cgroups: t });
    assert.deepEqual(strict.cgroupReport.limits, { memory: false, pids: false, cpu: true });
    assert.throws(
      () => strict.check(),
      (err: Error) => err instanceof SandboxUnavailableError && /ALGOHOST_REQUIRE_CGROUPS=false/.test(err.message),
    );
    // The operator's choice: run without them (bubblewrap is installed on this machine).
    preparedSupervisor({ cgroups: t, requireCgroups: false }).check();
  });

  test('a refused write (read-only or busy cgroup file system) warns and falls back to no limits, without a crash', async () => {
    const t = fakeTree(v2Group('', ALL, [1]), '0::/\n');
    // Where the kernel's file would be, a directory: the write fails (EISDIR here; EROFS, EACCES or EBUSY on a host).
    fs.rmSync(path.join(t.root, 'cgroup.subtree_control'));
    fs.mkdirSync(path.join(t.root, 'cgroup.subtree_control'));
    const cg = detectCgroups(t);
    assert.equal(cg.version, 2);
    assert.deepEqual(cg.limits, { memory: false, pids: false, cpu: false });
    assert.match(cg.problem ?? '', /enabling memory, pids, cpu for sandboxes under \/ was refused \(EISDIR/);
    assert.match(cg.problem ?? '', /writable cgroup file system/);
    assert.equal(await cg.create('s-3', { memoryBytes: 1 << 20, pids: 9 }), undefined);
    assert.throws(() => preparedSupervisor({ cgroups: t }).check(), SandboxUnavailableError);
  });

  test('the base group refusing its controllers is a refusal too', () => {
    const t = fakeTree({ ...v2Group('', ALL, [1]), 'algohost/cgroup.subtree_control/x': '' }, '0::/\n');
    const cg = detectCgroups(t);
    assert.deepEqual(cg.limits, { memory: false, pids: false, cpu: false });
    assert.match(cg.problem ?? '', /was refused/);
  });
});

describe('cgroup v1 and none', () => {
  test('v1 (this machine kind): detected, every limit holds, nothing is written at detection', async () => {
    const files: Record<string, string> = {};
    for (const c of ['memory', 'pids', 'cpu']) files[`${c}/cgroup.procs`] = '1\n';
    files['memory/svc/cgroup.procs'] = '1\n';
    const t = fakeTree(files, '5:pids:/\n4:memory:/svc\n1:cpu,cpuacct:/\n0::/\n');
    const before = snapshot(t.root);
    const cg = detectCgroups(t);
    assert.equal(cg.version, 1);
    assert.deepEqual(cg.limits, { memory: true, pids: true, cpu: true });
    assert.equal(cg.problem, undefined);
    assert.deepEqual(snapshot(t.root), before);
    const group = await cg.create('s-4', { memoryBytes: 1 << 20, pids: 9 });
    assert.equal(read(path.join(t.root, 'memory/svc/algohost/s-4/memory.limit_in_bytes')), String(1 << 20));
    assert.equal(read(path.join(t.root, 'pids/algohost/s-4/pids.max')), '9');
    assert.equal(group?.procsFiles.length, 3);
  });

  test("this machine's real hierarchy is v1 with memory and pids (read only)", () => {
    const cg = preparedSupervisor().cgroupReport;
    assert.equal(cg.version, 1);
    assert.equal(cg.limits.memory && cg.limits.pids, true);
  });

  test('no hierarchy: no limits, a clear problem, refused unless ALGOHOST_REQUIRE_CGROUPS is false', () => {
    const t = fakeTree({}, '0::/\n');
    const cg = detectCgroups(t);
    assert.equal(cg.version, 0);
    assert.match(cg.problem ?? '', /no cgroup hierarchy with memory and pids controllers/);
    assert.throws(() => preparedSupervisor({ cgroups: t }).check(), /refuses to run user code without memory and pids limits/);
    preparedSupervisor({ cgroups: t, requireCgroups: false }).check();
  });

  test('a node that runs no sandbox (cgroups: false) reads nothing and reports no limits', () => {
    const s = preparedSupervisor({ cgroups: false, requireCgroups: false });
    assert.equal(s.cgroupReport.version, 0);
  });
});

describe('which sandbox groups the sweep leaves: those of a node that still runs', () => {
  const id = '0f0e0d0c-0b0a-4908-8706-050403020100';
  const runs = (pid: number) => pid === 4242;
  const live = new Set([sandboxGroupName(process.pid, id)]);
  test("this node's: while it has not removed them", () => {
    assert.equal(sandboxGroupInUse(sandboxGroupName(process.pid, id), process.pid, live, runs), true);
    assert.equal(sandboxGroupInUse(sandboxGroupName(process.pid, id.replace('0f', '1f')), process.pid, live, runs), false);
  });
  test("another node's: while that node runs", () => {
    assert.equal(sandboxGroupInUse(sandboxGroupName(4242, id), process.pid, live, runs), true);
    assert.equal(sandboxGroupInUse(sandboxGroupName(4243, id), process.pid, live, runs), false);
  });
  test('a name from before groups carried their node, or no sandbox group at all: not in use', () => {
    assert.equal(sandboxGroupInUse(`s-${id}`, process.pid, live, runs), false);
    assert.equal(sandboxGroupInUse('account-x', process.pid, live, runs), false);
  });
});

describe("the sweep of stale groups, on this machine's real v1 hierarchy", () => {
  const CONTROLLERS = ['memory', 'pids', 'cpu'];
  // A group of this test's own stands for the service's group: the base is <it>/algohost.
  const own = `algohost-sweep-test-${crypto.randomBytes(4).toString('hex')}`;
  const procSelf = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'algohost-sweep-')), 'cgroup');
  temps.push(path.dirname(procSelf));
  fs.writeFileSync(procSelf, CONTROLLERS.map((c, i) => `${i + 1}:${c}:/${own}`).join('\n'));
  const base = (c: string) => path.join('/sys/fs/cgroup', c, own, 'algohost');
  const groupsUnder = (c: string) =>
    fs
      .readdirSync(base(c), { recursive: true, withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => path.relative(base(c), path.join(e.parentPath, e.name)))
      .sort();
  after(() => {
    // Deepest first: a cgroup directory goes with rmdir only, once its children are gone.
    for (const c of CONTROLLERS) {
      const dirs = fs.existsSync(base(c)) ? groupsUnder(c).reverse() : [];
      for (const d of [...dirs.map((d) => path.join(base(c), d)), base(c), path.dirname(base(c))]) if (fs.existsSync(d)) fs.rmdirSync(d);
    }
  });
  const limits = { memoryBytes: 64 << 20, pids: 16, cpus: 1, cpuGroup: 'account-sweep' };
  const exited = async (child: ReturnType<typeof spawn>) => {
    if (child.exitCode === null && child.signalCode === null) await new Promise((resolve) => child.once('exit', resolve));
  };

  test("left groups go once old enough, with their emptied parent; fresh ones, ones with a process, a running node's and the service leaf stay", async () => {
    const cg = detectCgroups({ procSelfCgroup: procSelf });
    assert.equal(cg.version, 1);
    // This test stands for a node; `live` holds its groups it has not removed yet.
    const live = new Set<string>();
    const inUse = (group: string) =>
      sandboxGroupInUse(group, process.pid, live, (pid) => {
        try {
          process.kill(pid, 0);
          return true;
        } catch {
          return false;
        }
      });
    // A node killed before it removed its sandbox's groups.
    const gone = spawn('/bin/true');
    await exited(gone);
    const left = sandboxGroupName(gone.pid!, crypto.randomUUID());
    await cg.create(left, limits);
    assert.deepEqual(groupsUnder('cpu'), ['account-sweep', `account-sweep/${left}`]);
    // Made a moment ago: a node may be about to move its process in.
    assert.equal(await cg.sweepStale(60_000, inUse), 0);
    assert.deepEqual(groupsUnder('memory'), [left]);

    // A node that runs (the sleeper stands for it), with an empty group, and a sandbox that runs:
    // its process is in its groups, as the supervisor's prelude puts it.
    const sleeper = spawn('/bin/sleep', ['60'], { stdio: 'ignore' });
    const othersEmpty = sandboxGroupName(sleeper.pid!, crypto.randomUUID());
    await cg.create(othersEmpty, limits);
    const running = sandboxGroupName(gone.pid!, crypto.randomUUID());
    const group = await cg.create(running, limits);
    for (const file of group!.procsFiles) fs.writeFileSync(file, String(sleeper.pid));
    // This node's own, not removed yet (between its process's exit and its removal).
    const mine = sandboxGroupName(process.pid, crypto.randomUUID());
    live.add(mine);
    await cg.create(mine, limits);
    fs.mkdirSync(path.join(base('memory'), SERVER_LEAF));

    try {
      // Only the left group goes, from each controller.
      assert.equal(await cg.sweepStale(0, inUse), 3);
      assert.deepEqual(groupsUnder('memory'), [SERVER_LEAF, mine, othersEmpty, running].sort());
      assert.deepEqual(groupsUnder('pids'), [mine, othersEmpty, running].sort());
      assert.deepEqual(groupsUnder('cpu'), ['account-sweep', ...[mine, othersEmpty, running].sort().map((g) => `account-sweep/${g}`)]);
    } finally {
      sleeper.kill('SIGKILL');
      await exited(sleeper);
    }
    // The sleeper's node is gone, its sandbox's process too (and never removed, as after a kill -9
    // of its node), and this node gave its own group up (a removal that gave up): all swept, and
    // the account's parent with them.
    live.delete(mine);
    assert.equal(await cg.sweepStale(0, inUse), 10);
    assert.deepEqual(groupsUnder('memory'), [SERVER_LEAF]);
    assert.deepEqual(groupsUnder('pids'), []);
    assert.deepEqual(groupsUnder('cpu'), []);
  });
});
