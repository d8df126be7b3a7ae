/**
 * What young-generation collections cost each side at the same fixed rate of warm calls: algohost
 * against the warm-call baseline (bench/bare-baseline.ts, as in bench/warm-call.ts), both traced
 * with `--trace-gc-nvp`. The baseline gets the collector flags algohost sets for itself on this
 * machine (main/gc-tuning.ts), so both collect alike. Turns alternate sides; per side, over all
 * turns: scavenges per 1000 calls, bytes allocated, surviving a scavenge and promoted to the old
 * generation per call, the median and p90 scavenge pause, the heap's size, and full collections,
 * with algohost's figures over the baseline's; then the median of each timed part of a scavenge.
 *
 * Unlike a p99, these counts hardly move when other work shares the machine (a latency run on a
 * busy machine measures the machine: docs/performance.md, rule 10), so they show what a change to
 * what a call allocates or keeps alive does to the pauses every call in flight waits through.
 * Run: node --import tsx bench/warm-call-gc.ts [calls/s=4000] [seconds=4] [turns=3]
 */
import fs from 'node:fs';
import os from 'node:os';
import { gcFlagsFor } from '../packages/server/src/main/gc-tuning.js';
import { deployNoop, load, median, pacedLatency, percentile, report, startAlgohost, startBaseline, tempDir } from './support.js';

const RATE = Number(process.argv[2] ?? 4000);
const SECONDS = Number(process.argv[3] ?? 4);
const TURNS = Number(process.argv[4] ?? 3);

/** One collection as `--trace-gc-nvp` prints it: `… ms: pause=0.9 mutator=… gc=s … promoted=…`. */
interface Collection {
  kind: string;
  fields: Map<string, number>;
}

/** Collects a server's `--trace-gc-nvp` lines while `recording` is on. */
class GcTrace {
  recording = false;
  readonly collections: Collection[] = [];
  private partial = '';

  readonly onStdout = (text: string): void => {
    const lines = (this.partial + text).split('\n');
    this.partial = lines.pop()!;
    if (!this.recording) return;
    for (const line of lines) {
      const at = line.indexOf(' ms: pause=');
      if (at < 0) continue;
      const fields = new Map<string, number>();
      let kind = '';
      for (const pair of line.slice(at + 5).split(' ')) {
        const eq = pair.indexOf('=');
        if (eq < 0) continue;
        const name = pair.slice(0, eq);
        const value = pair.slice(eq + 1);
        if (name === 'gc') kind = value;
        else fields.set(name, Number.parseFloat(value));
      }
      this.collections.push({ kind, fields });
    }
  };
}

interface Side {
  name: string;
  url: string;
  key?: string;
  trace: GcTrace;
  calls: number;
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

function summary(side: Side) {
  const scavenges = side.trace.collections.filter((c) => c.kind === 's');
  const field = (name: string) => scavenges.map((c) => c.fields.get(name) ?? 0);
  const pauses = field('pause');
  return {
    perThousandCalls: (scavenges.length * 1000) / side.calls,
    allocatedPerCall: sum(field('allocated')) / side.calls,
    survivedPerCall: sum(field('new_space_survived')) / side.calls,
    promotedPerCall: sum(field('promoted')) / side.calls,
    pauseMedian: median(pauses),
    pauseP90: percentile(pauses, 0.9),
    heapMedian: median(field('total_size_before')),
    full: side.trace.collections.filter((c) => c.kind !== 's').length,
    phases: new Map(SCAVENGE_PHASES.map((name) => [name, median(field(name))])),
  };
}

/**
 * The parts of a scavenge's pause `--trace-gc-nvp` times (ms each): where a longer pause goes.
 * `scavenge.roots` grows with what points into the young generation from outside it (the stack,
 * handles, old-generation slots), `scavenge.parallel` with what is copied, the `sweep_array_buffers`
 * with the young ArrayBuffers (a Buffer each) and the `heap.*` ones with GC callbacks.
 */
const SCAVENGE_PHASES = [
  'time_to_safepoint',
  'heap.prologue',
  'heap.epilogue',
  'heap.external.prologue',
  'heap.external.epilogue',
  'heap.external_weak_global_handles',
  'scavenge',
  'scavenge.free_remembered_set',
  'scavenge.roots',
  'scavenge.parallel',
  'scavenge.update_refs',
  'scavenge.weak',
  'scavenge.weak_global_handles.identify',
  'scavenge.weak_global_handles.process',
  'scavenge.sweep_array_buffers',
  'complete.sweep_array_buffers',
  'background.scavenge.parallel',
  'background.unmapper',
  'unmapper',
  'fast_promote',
];

const flags = ['--trace-gc-nvp', ...gcFlagsFor({ cpus: os.availableParallelism(), nodeFlags: '' })];
const work = tempDir('bench-gc-');
const algohostTrace = new GcTrace();
const h = await startAlgohost({ ALGOHOST_RUNNERS_PER_ALGORITHM: '1' }, { nodeFlags: ['--trace-gc-nvp'], onStdout: algohostTrace.onStdout });
try {
  const { target, key, dir } = await deployNoop(h, work);
  const baselineTrace = new GcTrace();
  const baseline = await startBaseline(dir, { nodeFlags: flags, onStdout: baselineTrace.onStdout });
  try {
    // Warmed up flat out first, as bench/warm-call.ts does.
    await load({ url: baseline.url, serverPid: baseline.pid, connections: 16, seconds: 2 });
    await load({ url: target, key, serverPid: h.process.pid!, connections: 16, seconds: 2 });
    const sides: Side[] = [
      { name: 'baseline', url: baseline.url, trace: baselineTrace, calls: 0 },
      { name: 'algohost', url: target, key, trace: algohostTrace, calls: 0 },
    ];
    for (let turn = 0; turn < TURNS; turn++) {
      for (const side of sides) {
        side.trace.recording = true;
        const r = await pacedLatency(side.url, side.key, RATE, SECONDS);
        // Lines of the last collections may still be on their way through the pipe.
        await new Promise((resolve) => setTimeout(resolve, 200));
        side.trace.recording = false;
        if (r.errors) throw new Error(`${side.name}: ${r.errors} failed calls`);
        side.calls += r.calls;
      }
    }
    const [b, a] = sides.map(summary) as [ReturnType<typeof summary>, ReturnType<typeof summary>];
    const kb = (bytes: number) => `${(bytes / 1024).toFixed(2)} KB`;
    const bytes = (n: number) => `${n.toFixed(0)} B`;
    const row = (label: string, f: (s: typeof a) => number, show: (x: number) => string): [string, string] => [
      label,
      `${show(f(a))}; ${show(f(b))}; ratio ${(f(a) / f(b)).toFixed(2)}`,
    ];
    report([
      [`${TURNS} paced turns of ${SECONDS} s at ${RATE} calls/s each, algohost; baseline`, `${sides[1]!.calls}; ${sides[0]!.calls} calls`],
      [`collector flags of both`, flags.join(' ')],
      row(
        'scavenges per 1000 calls',
        (s) => s.perThousandCalls,
        (x) => x.toFixed(2),
      ),
      row('allocated per call', (s) => s.allocatedPerCall, kb),
      row('surviving a scavenge, per call', (s) => s.survivedPerCall, bytes),
      row('promoted to the old generation, per call', (s) => s.promotedPerCall, bytes),
      row(
        'scavenge pause, median',
        (s) => s.pauseMedian,
        (x) => `${x.toFixed(2)} ms`,
      ),
      row(
        'scavenge pause, p90',
        (s) => s.pauseP90,
        (x) => `${x.toFixed(2)} ms`,
      ),
      // A scavenge also visits the old generation's slots that point into the young one, so the
      // heap it keeps may weigh on each pause besides what the calls left alive (docs/performance.md,
      // rule 10: empty cache slots did not).
      row(
        'heap before a scavenge, median',
        (s) => s.heapMedian,
        (x) => `${(x / 1024 / 1024).toFixed(1)} MB`,
      ),
      ['full collections (mark-compact) during the turns', `${a.full}; ${b.full}`],
      ...SCAVENGE_PHASES.map((name): [string, string] => [
        `  ${name}, median`,
        `${a.phases.get(name)!.toFixed(3)}; ${b.phases.get(name)!.toFixed(3)} ms`,
      ]),
    ]);
  } finally {
    baseline.close();
  }
} finally {
  await h.stop();
  fs.rmSync(work, { recursive: true, force: true });
}
