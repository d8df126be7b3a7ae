/**
 * Two checkouts of algohost side by side (say, main and a change), each serving the same warm
 * no-op Python algorithm, loaded in turns at the same fixed rate: server CPU time per call and
 * p99 (timed to the µs) for each, round by round, and B's p99 over A's in each round. On a shared machine whose load comes and goes, turns of a few
 * seconds see the same noise, so the difference between A and B shows where a flat-out run of
 * bench/warm-call.ts on each would not.
 * Run: node --import tsx bench/warm-call-ab.ts <checkout A> <checkout B> [rounds=6] [seconds=4] [calls/s=2000]
 * (each checkout needs node_modules: a worktree can link this one's.)
 */
import fs from 'node:fs';
import { cpuSeconds, deployNoop, load, median, pacedLatency, report, startAlgohost, tempDir } from './support.js';

const [rootA, rootB] = [process.argv[2], process.argv[3]];
if (!rootA || !rootB) throw new Error('usage: warm-call-ab.ts <checkout A> <checkout B> [rounds] [seconds] [calls/s]');
const ROUNDS = Number(process.argv[4] ?? 6);
const SECONDS = Number(process.argv[5] ?? 4);
const RATE = Number(process.argv[6] ?? 2000);

const work = tempDir('bench-ab-');
const sides = [
  { name: 'A', root: rootA },
  { name: 'B', root: rootB },
].map((s) => ({ ...s, cpu: [] as number[], p99: [] as number[] }));
const servers = [];
try {
  for (const side of sides) {
    const h = await startAlgohost({ ALGOHOST_RUNNERS_PER_ALGORITHM: '1' }, { root: side.root });
    servers.push(h);
    const { target, key } = await deployNoop(h, fs.mkdtempSync(`${work}/${side.name}-`));
    Object.assign(side, { h, target, key });
  }
  // Warmed up flat out first, as bench/warm-call.ts does: the JIT settles before the rounds.
  for (const side of sides) {
    const s = side as typeof side & { h: { process: { pid: number } }; target: string; key: string };
    await load({ url: s.target, key: s.key, serverPid: s.h.process.pid, connections: 16, seconds: SECONDS });
  }
  for (let round = 0; round < ROUNDS; round++) {
    // Alternate who goes first, so neither side always follows the other's warm-up.
    for (const side of round % 2 ? [...sides].reverse() : sides) {
      const s = side as typeof side & { h: { process: { pid: number } }; target: string; key: string };
      const cpu0 = cpuSeconds(s.h.process.pid);
      const r = await pacedLatency(s.target, s.key, RATE, SECONDS);
      if (r.errors) throw new Error(`${side.name}: ${r.errors} failed calls`);
      side.cpu.push(((cpuSeconds(s.h.process.pid) - cpu0) * 1000) / r.calls);
      side.p99.push(r.p99);
    }
  }
  const [a, b] = sides as [(typeof sides)[0], (typeof sides)[0]];
  // Each round's pair ran back to back: its ratio compares like with like.
  const ratios = b.p99.map((x, i) => x / a.p99[i]!);
  const turns = (xs: number[]) => xs.map((x) => x.toFixed(2)).join(' ');
  report([
    [`${ROUNDS} rounds of ${SECONDS} s at ${RATE} calls/s, 16 connections`, ''],
    ...sides.map((s): [string, string] => [
      `${s.name} (${s.root}) server CPU per call, median`,
      `${median(s.cpu).toFixed(3)} ms  [${s.cpu.map((x) => x.toFixed(3)).join(' ')}]`,
    ]),
    ...sides.map((s): [string, string] => [`${s.name} p99, median`, `${median(s.p99).toFixed(2)} ms  [${turns(s.p99)}]`]),
    ['B / A server CPU per call', (median(b.cpu) / median(a.cpu)).toFixed(2)],
    ['B / A p99 per round, median', `${median(ratios).toFixed(2)}  [${turns(ratios)}]`],
  ]);
} finally {
  for (const h of servers) await h.stop();
  fs.rmSync(work, { recursive: true, force: true });
}
