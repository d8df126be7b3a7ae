/**
 * Warm-call overhead of a no-op Python algorithm through algohost's call API, against a bare
 * Node HTTP server that forwards each request to a warm Python pipe process running the same
 * harness on the same algorithm (no auth, no sandbox, no envelope): the smallest thing that
 * serves a call over HTTP with the pipe protocol.
 * Budgets (docs/design/performance.md): overhead p50 ≤ +0.25 ms, overhead p99 ≤ 1.0 × the bare p99; calls/s ≥ 0.75 × bare.
 * Both servers run as processes of their own; the load comes from this process: flat out with
 * autocannon (calls/s, whole-ms latencies), flat out again timed to the µs, then at the same
 * fixed rate on both (p99 to the µs).
 * Run: node --import tsx bench/warm-call.ts [seconds=10] [connections=16] [turns=5]
 */
import fs from 'node:fs';
import { closedLoopLatency, deployNoop, load, median, pacedLatency, report, startAlgohost, startBaseline, tempDir } from './support.js';

const SECONDS = Number(process.argv[2] ?? 10);
const CONNECTIONS = Number(process.argv[3] ?? 16);
/** Turns of each timed-to-the-µs measurement, alternating baseline and algohost. */
const TURNS = Number(process.argv[4] ?? 5);

const work = tempDir('bench-warm-');
const h = await startAlgohost({ ALGOHOST_RUNNERS_PER_ALGORITHM: '1' });
try {
  const { target, key, dir } = await deployNoop(h, work);

  const baseline = await startBaseline(dir);
  // Both warmed up flat out first: algohost has far more code for the JIT to settle than the
  // baseline, and a cold first run measured that rather than the steady state.
  const warmUp = Math.max(2, SECONDS / 4);
  await load({ url: baseline.url, serverPid: baseline.pid, connections: CONNECTIONS, seconds: warmUp });
  await load({ url: target, key, serverPid: h.process.pid!, connections: CONNECTIONS, seconds: warmUp });
  const b = await load({ url: baseline.url, serverPid: baseline.pid, connections: CONNECTIONS, seconds: SECONDS });
  const ours = await load({ url: target, key, serverPid: h.process.pid!, connections: CONNECTIONS, seconds: SECONDS });
  // Flat out again, timed to the microsecond, then at the same offered load, each in TURNS
  // turns that alternate baseline and algohost. Each turn's pair ran back to back, so its ratio
  // compares like with like; the median pair is the figure, since a burst of other work on the
  // machine (these are 2 shared cores) can land in any one turn.
  const closedBare: { p50: number; p99: number }[] = [];
  const closedOurs: { p50: number; p99: number }[] = [];
  for (let turn = 0; turn < TURNS; turn++) {
    closedBare.push(await closedLoopLatency(baseline.url, undefined, SECONDS / 2, CONNECTIONS));
    closedOurs.push(await closedLoopLatency(target, key, SECONDS / 2, CONNECTIONS));
  }
  // The same offered load on both, half of what the baseline served flat out: latency compared
  // where neither is saturated (at saturation it mirrors calls/s: connections / rate).
  const rate = Math.round(b.rps / 2);
  const pacedBare: number[] = [];
  const pacedOurs: number[] = [];
  for (let turn = 0; turn < TURNS; turn++) {
    pacedBare.push((await pacedLatency(baseline.url, undefined, rate, SECONDS / 2)).p99);
    pacedOurs.push((await pacedLatency(target, key, rate, SECONDS / 2)).p99);
  }
  baseline.close();
  const closedRatios = closedOurs.map((o, i) => o.p99 / closedBare[i]!.p99);
  const pacedRatios = pacedOurs.map((o, i) => o / pacedBare[i]!);
  const turns = (xs: number[]) => xs.map((x) => x.toFixed(2)).join(', ');
  report([
    [`warm calls, ${CONNECTIONS} connections, ${SECONDS} s each`, ''],
    ['algohost p50 / p99', `${ours.p50} ms / ${ours.p99} ms, ${ours.rps.toFixed(0)} calls/s, ${ours.errors} errors`],
    ['algohost server CPU per call (user + system)', `${ours.cpuMsPerCall.toFixed(3)} ms`],
    ['baseline p50 / p99 (bare Node → warm Python pipe)', `${b.p50} ms / ${b.p99} ms, ${b.rps.toFixed(0)} calls/s, ${b.errors} errors`],
    ['baseline server CPU per call (user + system)', `${b.cpuMsPerCall.toFixed(3)} ms`],
    ['overhead p50 (budget ≤ 0.25 ms)', `${(ours.p50 - b.p50).toFixed(2)} ms`],
    ['overhead p99 / baseline p99 (budget ≤ 1.0)', `${((ours.p99 - b.p99) / b.p99).toFixed(2)}`],
    ['p99 ratio to baseline', `${(ours.p99 / b.p99).toFixed(2)}`],
    ['calls/s ratio to baseline (budget ≥ 0.75)', `${(ours.rps / b.rps).toFixed(2)}`],
    [
      `flat out to the µs, ${TURNS} turns each: p50 algohost; baseline`,
      `${turns(closedOurs.map((r) => r.p50))} ms; ${turns(closedBare.map((r) => r.p50))} ms`,
    ],
    ['p99 algohost; baseline', `${turns(closedOurs.map((r) => r.p99))} ms; ${turns(closedBare.map((r) => r.p99))} ms`],
    ['p99 ratio per turn', turns(closedRatios)],
    ['p99 ratio flat out, to the µs, median turn (budget ≤ 1.0)', median(closedRatios).toFixed(2)],
    [
      `at ${rate} calls/s for both (half the baseline's), ${TURNS} turns each: p99 algohost; baseline`,
      `${turns(pacedOurs)} ms; ${turns(pacedBare)} ms`,
    ],
    ['p99 ratio per turn', turns(pacedRatios)],
    ['p99 ratio at the same offered load, median turn (budget ≤ 1.0)', median(pacedRatios).toFixed(2)],
  ]);
} finally {
  await h.stop();
  fs.rmSync(work, { recursive: true, force: true });
}
