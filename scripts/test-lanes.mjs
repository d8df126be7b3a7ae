/**
 * Runs test files in lanes: each file in a `node --test` process of its own (TypeScript through
 * scripts/test-loader.mjs), at most ALGOHOST_TEST_CONCURRENCY (default 3) at once, longest first
 * by the last run's times.
 * scripts/run-tests.sh calls it; it prints each file's report whole when the file ends, then the
 * slowest files, each failing file with what it said about its failures (so the log's last lines
 * show them), and the line "N passed, N failed, N skipped", and exits non-zero when a test
 * failed or a file did not finish.
 *
 * Why not `node --test a b c --test-concurrency=2`: Node runs the files in name order whatever
 * order they are given in (so a long file can start last and leave one lane idle), a file that
 * hangs holds its lane until the whole run is killed, and the reports of two files interleave
 * line by line. Here the order is ours, a file has a time limit (ALGOHOST_TEST_FILE_TIMEOUT_S,
 * default 1800), after which its process group is killed and it counts as failed, and no more
 * than the lanes' number of files ever run at once.
 *
 * Three lanes on 2 cores: many tests wait on a broker, a restart, a timer or another file's build
 * of the same tree (test/support/shared-builds.ts), and with two the cores stood idle: the run
 * took 2256 s of tests with two lanes, 1705 s with three (the cores 78% busy). Four took 1569 s
 * with the cores 92% busy, and that load made nodes too slow to log in to NATS in time. The
 * summary says how busy the machine's cores were over the run (from /proc/stat, so sandboxes and
 * services count): the figure that says whether more lanes could help.
 *
 * Times: ALGOHOST_TEST_TIMINGS_FILE (JSON, relative path → ms of wall time) orders the files
 * (a file not timed yet counts as long) and is updated with this run's times at the end; where it
 * has no time for a file, scripts/test-timings.json (a run's times, kept in the repository) does.
 * Plain JavaScript: it runs before anything is compiled.
 */
import { Buffer } from 'node:buffer';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import process from 'node:process';
import { clearTimeout, setTimeout } from 'node:timers';
import { URL } from 'node:url';

const LOADER = new URL('test-loader.mjs', import.meta.url).href;
const lanes = Math.max(1, Number(process.env.ALGOHOST_TEST_CONCURRENCY) || 3);
const fileTimeoutMs = (Number(process.env.ALGOHOST_TEST_FILE_TIMEOUT_S) || 1800) * 1000;
const timingsFile = process.env.ALGOHOST_TEST_TIMINGS_FILE;
const SHOWN = 15;
const DETAIL_LINES = 60;

// A machine without times of its own (a fresh one) orders by the times kept in the repository:
// rough, but they start the long files first.
const known = { ...readJson(new URL('test-timings.json', import.meta.url)), ...readTimings() };
const files = process.argv
  .slice(2)
  .map((file, index) => ({ file: path.relative(process.cwd(), file), index }))
  .sort((a, b) => (known[b.file] ?? Infinity) - (known[a.file] ?? Infinity) || a.index - b.index)
  .map((f) => f.file);

/** @type {Map<string, import('node:child_process').ChildProcess>} */
const running = new Map();
/** @type {{ file: string, ms: number, pass: number, fail: number, skipped: number, status: string, failures: string }[]} */
const results = [];
const tapDir = fs.mkdtempSync(path.join(os.tmpdir(), 'algohost-tap-'));
const started = Date.now();
let stopping = false;
const cpuAtStart = machineCpu();

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    stopping = true;
    process.stdout.write(`\n${signal}: stopping; these files were running:\n`);
    for (const [file, child] of running) {
      process.stdout.write(`  ${file}\n`);
      killGroup(child, 'SIGTERM');
    }
    setTimeout(() => process.exit(130), 5000).unref();
  });
}

const queue = [...files];
await Promise.all(
  Array.from({ length: Math.min(lanes, queue.length) }, async () => {
    for (let file = queue.shift(); file !== undefined && !stopping; file = queue.shift()) results.push(await runFile(file));
  }),
);
fs.rmSync(tapDir, { recursive: true, force: true });
report();

/** Runs one file in its own process group and prints its report when it ends. */
function runFile(file) {
  const tap = path.join(tapDir, `${file.replace(/[^\w.-]/g, '_')}.tap`);
  const fileStarted = Date.now();
  const child = spawn(
    process.execPath,
    [
      // TypeScript through scripts/test-loader.mjs (tsx's transform, in-thread and cached), with
      // stack traces in the sources' lines as tsx gives them.
      '--enable-source-maps',
      '--import',
      LOADER,
      // Three reporters put one more 'end' listener on the runner's stream than Node's default of
      // ten allows, and Node warns of a leak that is none.
      '--disable-warning=MaxListenersExceededWarning',
      '--test',
      '--test-reporter=spec',
      '--test-reporter-destination=stdout',
      '--test-reporter=tap',
      `--test-reporter-destination=${tap}`,
      file,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], detached: true },
  );
  running.set(file, child);
  const output = [Buffer.from(`▶ ${file}\n`)];
  child.stdout.on('data', (chunk) => output.push(chunk));
  child.stderr.on('data', (chunk) => output.push(chunk));
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    output.push(Buffer.from(`\n✖ ${file} did not finish within ${fileTimeoutMs / 1000} s: its processes were killed\n`));
    killGroup(child, 'SIGTERM');
    setTimeout(() => killGroup(child, 'SIGKILL'), 10_000).unref();
  }, fileTimeoutMs);
  return new Promise((resolve) => {
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      running.delete(file);
      // What the file's tests started and left behind (servers, builds) goes with it.
      killGroup(child, 'SIGKILL');
      const ms = Date.now() - fileStarted;
      const counts = tapCounts(tap);
      const failedFile = code !== 0 || timedOut;
      const status = timedOut ? 'timed out' : signal ? `killed by ${signal}` : code !== 0 ? `exit ${code}` : 'ok';
      // A file that failed without a failing test (it did not load, or it was killed) still counts once.
      const fail = counts.fail + (failedFile && counts.fail === 0 ? 1 : 0);
      const text = Buffer.concat(output).toString('utf8');
      process.stdout.write(text);
      process.stdout.write(`■ ${file}: ${status}, ${(ms / 1000).toFixed(1)} s, ${counts.pass} passed, ${fail} failed\n`);
      resolve({ file, ms, pass: counts.pass, fail, skipped: counts.skipped, status, failures: fail > 0 ? failureDetails(text) : '' });
    });
  });
}

/**
 * What a failing file said about its failures, to repeat at the end of the run where a reader of
 * the log's last lines sees it: Node's "failing tests" section, or the file's last lines when it
 * has none (it did not load, a hook failed outside a test, or it was killed).
 */
function failureDetails(text) {
  const at = text.lastIndexOf('✖ failing tests:');
  const lines = (at >= 0 ? text.slice(at) : text).trimEnd().split('\n');
  const shown = at >= 0 ? lines.slice(0, DETAIL_LINES) : lines.slice(-DETAIL_LINES);
  const cut = lines.length > DETAIL_LINES ? `    … ${lines.length - DETAIL_LINES} more lines in the file's report above\n` : '';
  return `${shown.map((line) => `    ${line}`).join('\n')}\n${cut}`;
}

/** The machine's CPU time so far, busy and in all, in clock ticks (Linux; undefined elsewhere). */
function machineCpu() {
  try {
    const fields = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal: idle and iowait are the idle ones.
    const all = fields.slice(0, 8).reduce((x, y) => x + y, 0);
    return { busy: all - fields[3] - fields[4], all };
  } catch {
    return undefined;
  }
}

function killGroup(child, signal) {
  try {
    process.kill(-child.pid, signal);
  } catch {
    // The group is gone already.
  }
}

/** The counts at the end of a file's TAP report (cancelled tests count as failed). */
function tapCounts(tap) {
  let text = '';
  try {
    text = fs.readFileSync(tap, 'utf8');
  } catch {
    // No report: the file did not start its tests.
  }
  const count = (name) =>
    Number(
      text
        .match(new RegExp(`^# ${name} (\\d+)$`, 'gm'))
        ?.pop()
        ?.split(' ')[2] ?? 0,
    );
  return { pass: count('pass'), fail: count('fail') + count('cancelled'), skipped: count('skipped') };
}

function report() {
  const sum = (key) => results.reduce((total, r) => total + r[key], 0);
  const failed = results.filter((r) => r.fail > 0 || r.status !== 'ok');
  const notRun = files.length - results.length;
  const slowest = [...results].sort((a, b) => b.ms - a.ms).slice(0, SHOWN);
  const wall = (Date.now() - started) / 1000;
  const end = machineCpu();
  const busy =
    cpuAtStart && end ? `, the cores ${Math.round((100 * (end.busy - cpuAtStart.busy)) / (end.all - cpuAtStart.all))}% busy` : '';
  process.stdout.write(
    `\nslowest test files (wall time; ${(sum('ms') / 1000).toFixed(0)} s in all over ${results.length} files, ${lanes} at a time, ${wall.toFixed(0)} s elapsed${busy}):\n`,
  );
  for (const r of slowest) process.stdout.write(`${(r.ms / 1000).toFixed(1).padStart(8)} s  ${r.file}\n`);
  if (failed.length > 0) {
    process.stdout.write('\nfiles with failures:\n');
    for (const r of failed) process.stdout.write(`  ${r.file} (${r.status}, ${r.fail} failed)\n${r.failures}`);
  }
  if (notRun > 0) process.stdout.write(`\n${notRun} files did not run (the run was stopped)\n`);
  if (timingsFile && !stopping) writeTimings();
  process.stdout.write(`${sum('pass')} passed, ${sum('fail') + notRun} failed, ${sum('skipped')} skipped\n`);
  process.exitCode = failed.length > 0 || notRun > 0 ? 1 : 0;
}

function readTimings() {
  return timingsFile ? readJson(timingsFile) : {};
}

function readJson(file) {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    // No times yet (or a file from an interrupted write): every file counts as long.
    return {};
  }
}

/** Merges this run's times into the file (files not run keep their earlier time). */
function writeTimings() {
  const merged = { ...readTimings() };
  for (const r of results) merged[r.file] = r.ms;
  fs.mkdirSync(path.dirname(timingsFile), { recursive: true });
  fs.writeFileSync(`${timingsFile}.tmp`, `${JSON.stringify(merged, null, 1)}\n`);
  fs.renameSync(`${timingsFile}.tmp`, timingsFile);
}
