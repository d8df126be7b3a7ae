/**
 * Per language: cold start of a runner (sandbox + harness + loading the fixture algorithm, up
 * to PIPE_INIT_COMPLETE) against starting the same interpreter on trivial code inside the same
 * sandbox, and the memory (RSS of the whole sandboxed process tree) of an idle warm runner
 * against the bare interpreter idling in the same sandbox.
 * Budgets (docs/design/performance.md): Python cold start ≤ 1.5 × `python3 -c 'import algo'` in the sandbox;
 * idle Python runner ≤ 15 MB RSS.
 * Run: node --import tsx bench/runners.ts [rounds=5] [languages=python,javascript,…]
 */
import fs from 'node:fs';
import { algorithmFixtures } from '../packages/server/test/support/fixtures-algorithms.js';
import { buildFixture } from '../packages/server/test/support/runners.js';
import { preparedSupervisor } from '../packages/server/test/support/supervisor.js';
import { startTestServer } from '../packages/server/test/support/server.js';
import { median, report } from './support.js';

const ROUNDS = Number(process.argv[2] ?? 5);
const ONLY = process.argv[3]?.split(',');

/** Trivial programs for the baseline, per fixture language: the interpreter, on the algorithm's code. */
const BASELINE: Record<string, string[]> = {
  python: ['/usr/bin/python3', '-c', 'import sys; sys.path.insert(0, "/app"); import src.Hello'],
  javascript: ['/usr/bin/node', '-e', 'require("/app/src/Hello.js")'],
  ruby: ['/usr/bin/ruby', '-e', 'load "/app/src/Hello.rb"'],
  r: ['/usr/bin/Rscript', '--vanilla', '-e', 'source("/app/src/Hello.r")'],
  java: ['/usr/lib/jvm/java-17-openjdk-amd64/bin/java', '-cp', '/app/target/algorithm.jar', '-version'],
  scala2: ['/usr/lib/jvm/java-17-openjdk-amd64/bin/java', '-cp', '/app/target/algorithm.jar', '-version'],
  scala3: ['/usr/lib/jvm/java-17-openjdk-amd64/bin/java', '-cp', '/app/target/algorithm.jar', '-version'],
  rust: ['/usr/bin/true'],
};

/** RSS in MB of a process and all its descendants. */
function treeRssMb(root: number): number {
  const children = new Map<number, number[]>();
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(d)]);
    } catch {
      // gone
    }
  }
  let kb = 0;
  const walk = (pid: number) => {
    try {
      kb += Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
    } catch {
      // gone
    }
    for (const c of children.get(pid) ?? []) walk(c);
  };
  walk(root);
  return kb / 1024;
}

const srv = await startTestServer();
const supervisor = preparedSupervisor();
const rows: [string, string][] = [];
try {
  for (const fx of algorithmFixtures().filter((f) => !ONLY || ONLY.includes(f.language))) {
    const { build } = await buildFixture(srv, fx, `b_${fx.language}`);
    const services = srv.server.services;
    const environment = services.catalog.environmentByName(build.environment)!;
    const artifact = build.artifact;
    const starts: number[] = [];
    let idleMb = 0;
    for (let i = 0; i < ROUNDS; i++) {
      const runner = services.runners.create({ artifact, algorithmName: fx.name, environment, network: 'none' })!;
      const t = performance.now();
      await runner.start();
      starts.push(performance.now() - t);
      if (i === ROUNDS - 1) {
        await new Promise((r) => setTimeout(r, 300));
        idleMb = treeRssMb(runner.pid!);
      }
      await runner.stop();
    }
    // The baseline: the same interpreter on the same code, in the same sandbox, same mounts.
    const base: number[] = [];
    let baseMb = 0;
    const artifactDir = services.builder.artifactPath(artifact);
    for (let i = 0; i < ROUNDS; i++) {
      const t = performance.now();
      const p = await supervisor.start({
        argv: BASELINE[fx.language] ?? ['/usr/bin/true'],
        env: { PATH: '/usr/bin:/bin', HOME: '/tmp' },
        cwd: '/app',
        mounts: [{ host: artifactDir, inside: '/app' }],
        network: 'none',
        limits: { memoryBytes: 2 * 1024 ** 3, pids: 256 },
        wallTimeMs: 60_000,
        outputLimitBytes: 1e7,
      });
      p.stdin.end();
      p.stdout.resume();
      p.stderr.resume();
      await p.done;
      base.push(performance.now() - t);
    }
    if (fx.language === 'python') {
      const idle = await supervisor.start({
        argv: ['/usr/bin/python3', '-c', 'import sys; sys.stdin.read()'],
        env: { PATH: '/usr/bin:/bin', HOME: '/tmp' },
        cwd: '/',
        mounts: [],
        network: 'none',
        limits: { memoryBytes: 2 * 1024 ** 3, pids: 256 },
        wallTimeMs: 60_000,
        outputLimitBytes: 1e7,
      });
      await new Promise((r) => setTimeout(r, 500));
      baseMb = treeRssMb(idle.pid!);
      idle.stdin.end();
      await idle.done;
    }
    const m = median(starts);
    const b = median(base);
    rows.push([
      `${fx.language}: cold start (median of ${ROUNDS})`,
      `${m.toFixed(0)} ms; baseline ${b.toFixed(0)} ms (${BASELINE[fx.language]?.[0]}); ratio ${(m / b).toFixed(2)}×`,
    ]);
    rows.push([
      `${fx.language}: idle warm runner RSS (sandbox tree)`,
      `${idleMb.toFixed(1)} MB${baseMb ? `; bare python3 idling in the sandbox ${baseMb.toFixed(1)} MB` : ''}`,
    ]);
  }
  report(rows);
} finally {
  await srv.stop();
}
