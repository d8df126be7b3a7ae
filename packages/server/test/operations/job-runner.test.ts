/**
 * The job runner's rules (jobs/job-runner.ts): jobs start in order and stop in reverse order,
 * stop waits for a run in progress, a throwing run is logged with the job's name and the job
 * keeps its schedule, a queue job runs at start and again when woken (wakes during a run
 * coalesce into one more run), and a failing prepare stops what already started.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type Job, type JobLogger, JobRunner, JobTrigger } from '../../src/jobs/job-runner.js';

interface Entry {
  level: 'debug' | 'warn' | 'error';
  obj: Record<string, unknown>;
  msg: string;
}

function recordingLogger(): JobLogger & { entries: Entry[] } {
  const entries: Entry[] = [];
  const at = (level: Entry['level']) => (obj: object, msg: string) => entries.push({ level, obj: obj as Record<string, unknown>, msg });
  return { entries, debug: at('debug'), warn: at('warn'), error: at('error') };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, check: () => boolean): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (check()) return;
    await sleep(10);
  }
  throw new Error(`gave up waiting for ${what}`);
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('job runner', () => {
  test('starts jobs in order (prepare awaited before the next) and stops them in reverse order', async () => {
    const events: string[] = [];
    const job = (name: string): Job => ({
      name,
      kind: 'interval',
      description: name,
      everyMs: 0,
      prepare: async () => {
        events.push(`prepare ${name}`);
        await sleep(5);
        events.push(`prepared ${name}`);
      },
      run: async () => {},
      stop: async () => {
        events.push(`stop ${name}`);
      },
    });
    const runner = new JobRunner([job('a'), job('b'), job('c')], recordingLogger());
    await runner.start();
    assert.deepEqual(events, ['prepare a', 'prepared a', 'prepare b', 'prepared b', 'prepare c', 'prepared c']);
    events.length = 0;
    await runner.stop();
    assert.deepEqual(events, ['stop c', 'stop b', 'stop a']);
  });

  test('stop waits for the running job before stopping it and the jobs started before it', async () => {
    const events: string[] = [];
    const gate = deferred();
    let signal: AbortSignal | undefined;
    const slow: Job = {
      name: 'slow',
      kind: 'queue',
      description: 'a run that takes until released',
      trigger: new JobTrigger(),
      run: async (s) => {
        signal = s;
        events.push('run started');
        await gate.promise;
        events.push('run ended');
      },
      stop: async () => {
        events.push('stop slow');
      },
    };
    const first: Job = {
      name: 'first',
      kind: 'interval',
      description: 'first',
      everyMs: 0,
      run: async () => {},
      stop: async () => void events.push('stop first'),
    };
    const runner = new JobRunner([first, slow], recordingLogger());
    await runner.start();
    await until('the run to start', () => events.includes('run started'));
    let stopped = false;
    const stopping = runner.stop().then(() => (stopped = true));
    await sleep(50);
    assert.equal(stopped, false, 'stop returned while the job was still running');
    assert.equal(signal?.aborted, true, 'the running job was asked to stop');
    gate.resolve();
    await stopping;
    assert.deepEqual(events, ['run started', 'run ended', 'stop slow', 'stop first']);
  });

  test('a throwing run is logged with the job name and error, and the job keeps its schedule', async () => {
    const log = recordingLogger();
    let runs = 0;
    const runner = new JobRunner(
      [
        {
          name: 'flaky.sweep',
          kind: 'interval',
          description: 'fails every time',
          everyMs: 10,
          run: async () => {
            runs++;
            throw new Error(`disk on fire (run ${runs})`);
          },
        },
      ],
      log,
    );
    await runner.start();
    await until('three runs', () => runs >= 3);
    await runner.stop();
    const errors = log.entries.filter((e) => e.level === 'error');
    assert.ok(errors.length >= 3, `expected every failure logged, got ${errors.length}`);
    assert.equal(errors[0]!.obj.job, 'flaky.sweep');
    assert.match(errors[0]!.msg, /flaky\.sweep/);
    assert.match((errors[0]!.obj.err as Error).message, /disk on fire \(run 1\)/);
    const after = runs;
    await sleep(50);
    assert.equal(runs, after, 'no run after stop');
  });

  test('a queue job drains at start and when woken; wakes during a run make exactly one more run', async () => {
    const trigger = new JobTrigger();
    trigger.wake(); // before start: dropped (the start drains anyway)
    let runs = 0;
    let gate = deferred();
    const runner = new JobRunner(
      [
        {
          name: 'queue',
          kind: 'queue',
          description: 'counts its runs',
          trigger,
          run: async () => {
            runs++;
            await gate.promise;
          },
        },
      ],
      recordingLogger(),
    );
    await runner.start();
    await until('the start run', () => runs === 1);
    trigger.wake();
    trigger.wake();
    trigger.wake();
    const held = gate;
    gate = deferred();
    held.resolve();
    await until('the rerun', () => runs === 2);
    gate.resolve();
    await sleep(30);
    assert.equal(runs, 2, 'three wakes during one run make one more run');
    trigger.wake();
    await until('the woken run', () => runs === 3);
    await runner.stop();
    trigger.wake();
    await sleep(30);
    assert.equal(runs, 3, 'a stopped job is not woken');
  });

  test('a run past its timeout has its signal aborted and is logged', async () => {
    const log = recordingLogger();
    let aborted = false;
    const runner = new JobRunner(
      [
        {
          name: 'slow.job',
          kind: 'queue',
          description: 'waits for its signal',
          trigger: new JobTrigger(),
          timeoutMs: 20,
          run: (signal) =>
            new Promise<void>((resolve) =>
              signal.addEventListener('abort', () => {
                aborted = true;
                resolve();
              }),
            ),
        },
      ],
      log,
    );
    await runner.start();
    await until('the timeout', () => aborted);
    await runner.stop();
    assert.ok(log.entries.some((e) => e.level === 'warn' && e.obj.job === 'slow.job' && /timeout/.test(e.msg)));
  });

  test('a failing prepare fails the start, logged, after stopping the jobs already started', async () => {
    const log = recordingLogger();
    const events: string[] = [];
    const runner = new JobRunner(
      [
        { name: 'ok', kind: 'interval', description: 'ok', everyMs: 0, run: async () => {}, stop: async () => void events.push('stop ok') },
        {
          name: 'broken',
          kind: 'interval',
          description: 'cannot recover',
          everyMs: 10,
          prepare: async () => {
            throw new Error('database unreachable');
          },
          run: async () => void events.push('run broken'),
        },
      ],
      log,
    );
    await assert.rejects(runner.start(), /database unreachable/);
    assert.deepEqual(events, ['stop ok']);
    assert.ok(log.entries.some((e) => e.level === 'error' && e.obj.job === 'broken'));
    await sleep(30);
    assert.deepEqual(events, ['stop ok'], 'the job that failed to prepare never runs');
  });

  test('two jobs may not share a name', () => {
    const job: Job = { name: 'twice', kind: 'interval', description: '', everyMs: 0, run: async () => {} };
    assert.throws(() => new JobRunner([job, { ...job }], recordingLogger()), /two jobs are named twice/);
  });
});
