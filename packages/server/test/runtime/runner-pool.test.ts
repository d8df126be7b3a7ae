/**
 * The runner pool's rules with a fake runner factory (no sandbox): scale-out per algorithm,
 * hand-off to waiting calls, least-recently-used eviction, the idle sweep, stopAll racing
 * runner starts, dying runners never handed out again, the per-account and per-node limits
 * on runners and their memory, and calls written behind a busy runner (pipelining).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Environment } from '../../src/domain/catalog/model.js';
import type { PipeRequest, RunTarget } from '../../src/domain/calls/ports.js';
import { DomainError } from '../../src/domain/errors.js';
import type { RunnerRequest } from '../../src/runtime/runner/runner-factory.js';
import type { PoolRunner, PoolSettings } from '../../src/runtime/runner/pool-records.js';
import { RunnerPool } from '../../src/runtime/runner/runner-pool.js';
import { CallNotStarted, type CallOutcome, RunnerFailure } from '../../src/runtime/runner/runner-outcome.js';

const MiB = 1024 * 1024;

function deferred<T = void>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

class FakeRunner implements PoolRunner {
  alive = false;
  lastUsed = Date.now();
  stopCalls = 0;
  /** Calls written to it (a second one while it runs one, when it pipelines). */
  calls = 0;
  readonly pipelines: boolean;
  /** As a harness: one call at a time, in the order written. */
  private previous: Promise<unknown> = Promise.resolve();

  constructor(
    readonly id: number,
    readonly req: RunnerRequest,
    private readonly factory: FakeFactory,
  ) {
    this.pipelines = factory.pipelines;
  }

  async start(): Promise<void> {
    if (this.factory.startGate) await this.factory.startGate;
    if (this.factory.startFails) throw new RunnerFailure('LoadingError', 'the algorithm did not load');
    this.alive = true;
  }

  call(request: PipeRequest): Promise<CallOutcome> {
    this.calls++;
    const behind = this.previous;
    const done = behind.then(
      () => this.run(request),
      () => this.run(request),
    );
    this.previous = done.catch(() => {});
    return done;
  }

  private async run(request: PipeRequest): Promise<CallOutcome> {
    // Died while this call waited behind another: it never began, as RunnerProcess says.
    if (!this.alive) throw new CallNotStarted();
    const data = request.data as { hold?: boolean; who?: string; fail?: boolean; tooLarge?: 'refused' | 'killed'; dieAfter?: boolean };
    if (data?.fail) throw new RunnerFailure('OutOfMemoryError', 'the algorithm ran out of memory');
    if (data?.hold) {
      const gate = deferred();
      this.factory.held.push({ runner: this, release: gate.resolve });
      await gate.promise;
    }
    if (data?.tooLarge) {
      // As RunnerProcess: past 1.4 × the cap it kills its process (not alive from then on, though
      // the process lingers until stop() resolves); under that it only refuses the response.
      if (data.tooLarge === 'killed') this.alive = false;
      throw new RunnerFailure('TooLargeError', 'the output exceeds the limit of 15 MB');
    }
    if (data?.dieAfter) this.alive = false; // answered, then died (an OOM kill right after, say)
    return { response: { result: { runner: this.id, artifact: this.req.artifact, who: data?.who } }, stdout: '' };
  }

  async stop(): Promise<void> {
    this.stopCalls++;
    if (this.factory.stopGate) await this.factory.stopGate;
    this.alive = false;
  }

  kill(): void {
    this.alive = false;
  }
}

class FakeFactory {
  readonly created: FakeRunner[] = [];
  readonly held: { runner: FakeRunner; release: () => void }[] = [];
  stopGate: Promise<void> | undefined;
  startGate: Promise<void> | undefined;
  startFails = false;
  /** Whether its runners take a second call while they run one. */
  pipelines = false;

  create(req: RunnerRequest): FakeRunner {
    const r = new FakeRunner(this.created.length + 1, req, this);
    this.created.push(r);
    return r;
  }

  /** Resolves once `n` calls are being held inside runners. */
  async heldCount(n: number): Promise<void> {
    while (this.held.length < n) await new Promise((r) => setImmediate(r));
  }

  releaseAll(): void {
    for (const h of this.held.splice(0)) h.release();
  }
}

const environment = { name: 'python311', language: 'python3' } as Environment;

function target(owner: string, artifact: string): RunTarget {
  return {
    algorithmId: `algo-${artifact}`,
    artifact,
    algorithmName: artifact,
    environment,
    network: 'none',
    pipeline: false,
    owner: { id: `id-${owner}`, name: owner },
  };
}

function makePool(settings: Partial<PoolSettings> = {}, pipelines = false): { pool: RunnerPool; factory: FakeFactory } {
  const factory = new FakeFactory();
  factory.pipelines = pipelines;
  const pool = new RunnerPool(factory, { maxPerArtifact: 4, maxTotal: 32, idleMs: 60_000, memoryOf: () => 256 * MiB, ...settings });
  return { pool, factory };
}

const call = (pool: RunnerPool, t: RunTarget, data: unknown = {}) => pool.execute(t, { content_type: 'json', data }, 60_000);
const hold = (pool: RunnerPool, t: RunTarget) => call(pool, t, { hold: true });

function refused(kind: 'limit' | 'unavailable', message: RegExp) {
  return (err: unknown) => {
    assert.ok(err instanceof DomainError, `expected a DomainError, got ${String(err)}`);
    assert.equal(err.kind, kind);
    assert.match(err.message, message);
    return true;
  };
}

describe('runner pool: scaling, hand-off, eviction, idle sweep', () => {
  test('a warm runner is reused; concurrent calls scale out to the per-algorithm maximum, then wait for a hand-off', async () => {
    const { pool, factory } = makePool({ maxPerArtifact: 2 });
    const t = target('alice', 'A');
    const first = await call(pool, t);
    assert.equal(first.cold, true);
    const warm = await call(pool, t);
    assert.equal(warm.cold, false);
    assert.equal(factory.created.length, 1);

    const a = hold(pool, t);
    const b = hold(pool, t);
    await factory.heldCount(2);
    assert.equal(factory.created.length, 2, 'scaled out to two runners');
    const third = call(pool, t, { who: 'third' });
    await new Promise((r) => setImmediate(r));
    assert.equal(factory.created.length, 2, 'no third runner past the per-algorithm maximum');
    factory.held[0]!.release();
    const handed = await third;
    assert.equal(handed.cold, false, 'handed the released runner');
    assert.equal((handed.response.result as { who: string }).who, 'third');
    factory.releaseAll();
    await Promise.all([a, b]);
    await pool.stopAll();
  });

  test('at the node cap the least recently used idle runner stops for a new one', async () => {
    const { pool, factory } = makePool({ maxTotal: 2 });
    await call(pool, target('alice', 'A'));
    await call(pool, target('alice', 'B'));
    const [ra, rb] = factory.created;
    ra!.lastUsed = 1;
    rb!.lastUsed = 2;
    await call(pool, target('alice', 'C'));
    assert.equal(ra!.stopCalls, 1, 'the least recently used runner stopped');
    assert.equal(rb!.stopCalls, 0);
    assert.equal(factory.created.length, 3);
    await pool.stopAll();
  });

  test('the idle sweep stops runners idle past the idle time and leaves busy ones', async () => {
    const { pool, factory } = makePool({ idleMs: 1000 });
    await call(pool, target('alice', 'A'));
    const busy = hold(pool, target('alice', 'B'));
    await factory.heldCount(1);
    pool.sweep(Date.now() + 5000);
    assert.equal(factory.created[0]!.stopCalls, 1);
    assert.equal(factory.created[1]!.stopCalls, 0);
    factory.releaseAll();
    await busy;
    const again = await call(pool, target('alice', 'A'));
    assert.equal(again.cold, true, 'a swept runner is started afresh');
    await pool.stopAll();
  });

  test("idle times are read from the pool's clock", async () => {
    let now = 1_000_000;
    const { pool, factory } = makePool({ idleMs: 1000, now: () => now });
    await call(pool, target('alice', 'A'));
    assert.equal(factory.created[0]!.lastUsed, 1_000_000, 'stamped with the injected clock');
    now += 999;
    pool.sweep();
    assert.equal(factory.created[0]!.stopCalls, 0, 'not idle long enough by that clock');
    now += 2;
    pool.sweep();
    assert.equal(factory.created[0]!.stopCalls, 1, 'idle past the idle time by that clock');
    await pool.stopAll();
  });

  test('a failed runner is discarded and the next call starts a new one', async () => {
    const { pool, factory } = makePool();
    await call(pool, target('alice', 'A'));
    await assert.rejects(call(pool, target('alice', 'A'), { fail: true }), /ran out of memory/);
    assert.equal(factory.created[0]!.alive, false);
    assert.equal(factory.created[0]!.stopCalls, 1);
    const next = await call(pool, target('alice', 'A'));
    assert.equal(next.cold, true);
    assert.equal(factory.created.length, 2);
    factory.created[1]!.kill(); // died while idle: not handed to the next call
    assert.equal((await call(pool, target('alice', 'A'))).cold, true);
    assert.equal(factory.created.length, 3);
    await pool.stopAll();
  });

  test('a runner killed for its output is never handed to the waiting call; one that only refused its output is', async () => {
    const { pool, factory } = makePool({ maxPerArtifact: 1 });
    const t = target('alice', 'A');
    // Refused under the kill threshold: the runner is healthy and serves the next call warm.
    await assert.rejects(call(pool, t, { tooLarge: 'refused' }), /15 MB/);
    const warm = await call(pool, t, { who: 'after-refused' });
    assert.deepEqual([warm.cold, (warm.response.result as { runner: number }).runner], [false, 1]);

    // Killed: the call queued behind it (one runner per algorithm) gets a fresh runner, while
    // the dying one still counts (its process is not gone yet).
    const gate = deferred();
    factory.stopGate = gate.promise;
    const killed = call(pool, t, { hold: true, tooLarge: 'killed' });
    await factory.heldCount(1);
    const queued = call(pool, t, { who: 'queued' });
    await new Promise((r) => setImmediate(r));
    assert.equal(factory.created.length, 1, 'the queued call waits for the only runner');
    factory.releaseAll();
    await assert.rejects(killed, /15 MB/);
    const res = await queued;
    assert.equal(res.cold, true, 'a fresh runner, not the dying one');
    assert.deepEqual(res.response.result, { runner: 2, artifact: 'A', who: 'queued' });
    assert.equal(factory.created[0]!.stopCalls, 1);
    assert.equal(pool.usage().get('id-alice')?.runners, 2, 'the dying runner counts until it is gone');
    factory.stopGate = undefined;
    gate.resolve();

    // Answered, then died before going back to the pool: not handed out either.
    await call(pool, t, { dieAfter: true });
    const after = await call(pool, t, { who: 'after' });
    assert.deepEqual([after.cold, (after.response.result as { runner: number }).runner], [true, 3]);
    await pool.stopAll();
    assert.equal(pool.usage().size, 0);
  });

  test('stopAll racing runner starts: a runner that finishes starting after it is stopped, and its call and the waiting ones are refused', async () => {
    const { pool, factory } = makePool({ maxPerArtifact: 1 });
    const t = target('alice', 'A');
    const gate = deferred();
    factory.startGate = gate.promise;
    const starting = call(pool, t, { who: 'starting' });
    const waiting = call(pool, t, { who: 'waiting' });
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    assert.equal(factory.created.length, 1, 'one runner starting, one call waiting');
    const stopped = pool.stopAll();
    factory.startGate = undefined;
    gate.resolve(); // the start completes after stopAll began
    await assert.rejects(starting, /stopping/);
    await assert.rejects(waiting, /stopping/);
    await stopped;
    const runner = factory.created[0]!;
    assert.equal(runner.alive, false, 'the late-started runner was stopped, not kept');
    assert.ok(runner.stopCalls >= 1);
    assert.equal(runner.calls, 0, 'it served no call');
    await assert.rejects(call(pool, t), /stopping/);
    assert.equal(factory.created.length, 1, 'no runner starts after stopAll');
  });

  test('stopAll racing a runner start that fails: the call is refused as stopping and nothing is left running', async () => {
    const { pool, factory } = makePool();
    const gate = deferred();
    factory.startGate = gate.promise;
    factory.startFails = true;
    const starting = call(pool, target('alice', 'A'));
    await new Promise((r) => setImmediate(r));
    const stopped = pool.stopAll();
    gate.resolve();
    await assert.rejects(starting, /stopping/);
    await stopped;
    assert.equal(pool.usage().size, 0);
  });

  test('after stopAll no runner starts', async () => {
    const { pool } = makePool();
    await call(pool, target('alice', 'A'));
    await pool.stopAll();
    await assert.rejects(call(pool, target('alice', 'A')), /stopping/);
  });
});

describe('runner pool: per-account and node limits', () => {
  test("an account at its runner limit with every runner busy is refused (429), and another account's call still runs", async () => {
    const { pool, factory } = makePool({ maxPerAccount: 2 });
    const held = [hold(pool, target('mallory', 'M1')), hold(pool, target('mallory', 'M2'))];
    await factory.heldCount(2);
    await assert.rejects(
      call(pool, target('mallory', 'M3')),
      refused('limit', /mallory's algorithms already have 2 runners on this node, the most one account may have \(2\)/),
    );
    assert.equal(factory.created.length, 2, 'no third runner for mallory');
    const alice = await call(pool, target('alice', 'A'), { who: 'alice' });
    assert.deepEqual(alice.response.result, { runner: 3, artifact: 'A', who: 'alice' });
    assert.equal(pool.usage().get('id-mallory')?.runners, 2);
    factory.releaseAll();
    await Promise.all(held);
    await pool.stopAll();
  });

  test("at its limit an account's own least recently used idle runner stops for its new one; other accounts' runners are left alone", async () => {
    const { pool, factory } = makePool({ maxPerAccount: 1 });
    await call(pool, target('alice', 'A'));
    await call(pool, target('mallory', 'M1'));
    const [aliceRunner, m1] = factory.created;
    aliceRunner!.lastUsed = 0; // the oldest idle runner on the node, but alice's
    await call(pool, target('mallory', 'M2'));
    assert.equal(m1!.stopCalls, 1);
    assert.equal(aliceRunner!.stopCalls, 0);
    assert.equal(aliceRunner!.alive, true);
    await pool.stopAll();
  });

  test('at its limit, a call to an algorithm with a busy runner waits for that runner instead of being refused', async () => {
    const { pool, factory } = makePool({ maxPerAccount: 1, maxPerArtifact: 4 });
    const t = target('mallory', 'M1');
    const first = hold(pool, t);
    await factory.heldCount(1);
    const second = call(pool, t, { who: 'second' });
    await new Promise((r) => setImmediate(r));
    assert.equal(factory.created.length, 1);
    factory.releaseAll();
    await first;
    const res = await second;
    assert.equal(res.cold, false);
    assert.equal((res.response.result as { runner: number }).runner, 1);
    await pool.stopAll();
  });

  test("an account's runners cannot hold more memory than its limit", async () => {
    const { pool, factory } = makePool({ memoryPerAccount: 512 * MiB });
    const held = [hold(pool, target('mallory', 'M1')), hold(pool, target('mallory', 'M2'))];
    await factory.heldCount(2);
    await assert.rejects(
      call(pool, target('mallory', 'M3')),
      refused(
        'limit',
        /mallory's algorithms already hold 512 MiB of runner memory on this node; another 256 MiB runner would pass the account's limit of 512 MiB/,
      ),
    );
    assert.equal(pool.usage().get('id-mallory')?.memoryBytes, 512 * MiB);
    assert.equal((await call(pool, target('alice', 'A'), { who: 'alice' })).response.result !== undefined, true);
    factory.releaseAll();
    await Promise.all(held);
    await pool.stopAll();
  });

  test('the node memory budget stops an idle runner of any account first, then refuses with 503 naming the budget; busy runners are never stopped', async () => {
    const { pool, factory } = makePool({ memoryBudget: 768 * MiB });
    const held = [hold(pool, target('mallory', 'M1')), hold(pool, target('alice', 'A'))];
    await factory.heldCount(2);
    await call(pool, target('alice', 'B'));
    const idleB = factory.created[2]!;
    // Budget full (3 × 256 MiB): mallory's new runner takes the place of alice's idle one.
    held.push(hold(pool, target('mallory', 'M2')));
    await factory.heldCount(3);
    assert.equal(idleB.stopCalls, 1);
    await assert.rejects(
      call(pool, target('alice', 'C')),
      refused(
        'unavailable',
        /768 MiB of this node's runner memory budget of 768 MiB and all are busy; another 256 MiB runner does not fit/,
      ),
    );
    for (const r of factory.created.slice(0, 2)) assert.equal(r.stopCalls, 0, 'busy runners are never stopped');
    factory.releaseAll();
    await Promise.all(held);
    await pool.stopAll();
  });

  test('a runner larger than the whole budget is refused with a message naming it', async () => {
    const { pool } = makePool({ memoryBudget: 128 * MiB });
    await assert.rejects(
      call(pool, target('alice', 'A')),
      refused('unavailable', /needs 256 MiB, more than this node's runner memory budget of 128 MiB/),
    );
    await pool.stopAll();
  });

  test('room is not promised twice: a new runner starts only once the evicted one has stopped', async () => {
    const { pool, factory } = makePool({ memoryBudget: 256 * MiB });
    await call(pool, target('alice', 'A'));
    const gate = deferred();
    factory.stopGate = gate.promise;
    const next = call(pool, target('mallory', 'M1'));
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    assert.equal(factory.created[0]!.stopCalls, 1);
    assert.equal(factory.created.length, 1, 'the new runner waits for the old one to be gone');
    factory.stopGate = undefined;
    gate.resolve();
    assert.equal((await next).cold, true);
    assert.equal(factory.created.length, 2);
    await pool.stopAll();
  });
});

describe('runner pool: calls written behind a busy runner (pipelining)', () => {
  const who = (o: { response: { result?: unknown } }) => (o.response.result as { who: string; runner: number }).who;
  const runnerOf = (o: { response: { result?: unknown } }) => (o.response.result as { runner: number }).runner;

  test('at the limit a call goes behind the busy runner at once; one more waits, and takes that place when the first ends', async () => {
    // No bound on how short calls must be: what this test sees does not depend on the machine's speed.
    const { pool, factory } = makePool({ maxPerArtifact: 1, pipelineMaxRunMs: Infinity, pipelineDepth: 1 }, true);
    const t = target('alice', 'A');
    await call(pool, t); // the pool learns how long its calls take
    const first = hold(pool, t);
    await factory.heldCount(1);
    const second = call(pool, t, { who: 'second' });
    const third = call(pool, t, { who: 'third' });
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    const runner = factory.created[0]!;
    assert.equal(runner.calls, 3, 'the second call was written to the busy runner; the third waits in the pool');
    factory.releaseAll();
    await first;
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    assert.equal(runner.calls, 4, 'the third took the place behind the second as soon as the first ended');
    const [b, c] = await Promise.all([second, third]);
    assert.deepEqual([who(b), who(c), runnerOf(b), runnerOf(c), b.cold, c.cold], ['second', 'third', 1, 1, false, false]);
    assert.equal(factory.created.length, 1);
    // Back to idle once both ended: the next call runs at once.
    assert.equal(who(await call(pool, t, { who: 'fourth' })), 'fourth');
    assert.equal(pool.stats.calls, 5);
    await pool.stopAll();
  });

  test('up to the pipeline depth calls go behind one runner, in order; the next waits and takes the first place freed', async () => {
    const { pool, factory } = makePool({ maxPerArtifact: 1, pipelineMaxRunMs: Infinity, pipelineDepth: 3 }, true);
    const t = target('alice', 'A');
    await call(pool, t);
    const first = hold(pool, t);
    await factory.heldCount(1);
    const behind = ['b1', 'b2', 'b3', 'waits'].map((name) => call(pool, t, { who: name }));
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    const runner = factory.created[0]!;
    assert.equal(runner.calls, 5, 'three calls were written behind the running one; the fourth waits in the pool');
    factory.releaseAll();
    await first;
    const answers = await Promise.all(behind);
    assert.deepEqual(
      answers.map((a) => [who(a), runnerOf(a)]),
      [
        ['b1', 1],
        ['b2', 1],
        ['b3', 1],
        ['waits', 1],
      ],
    );
    assert.equal(runner.calls, 6);
    assert.equal(factory.created.length, 1);
    await pool.stopAll();
  });

  test('calls that waited in the pool behind a long call go behind the next one as soon as the runner is handed on', async () => {
    // Bounds far from the machine's speed: a call began 250 ms ago is long for a 200 ms bound, and
    // the hand-on and the places behind are given in one turn (0 ms).
    const { pool, factory } = makePool({ maxPerArtifact: 1, pipelineMaxRunMs: 200, pipelineDepth: 4 }, true);
    const t = target('alice', 'A');
    await call(pool, t);
    const long = hold(pool, t);
    await factory.heldCount(1);
    await new Promise((r) => setTimeout(r, 250));
    const next = call(pool, t, { hold: true, who: 'next' });
    const after = ['a1', 'a2'].map((name) => call(pool, t, { who: name }));
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    const runner = factory.created[0]!;
    assert.equal(runner.calls, 2, 'nothing goes behind a call that began 250 ms ago');
    factory.held.shift()!.release();
    await long;
    await factory.heldCount(1);
    assert.equal(runner.calls, 5, 'handed on to the first waiting call, with the other two behind it at once');
    factory.releaseAll();
    assert.deepEqual([who(await next), ...(await Promise.all(after)).map(who)], ['next', 'a1', 'a2']);
    await pool.stopAll();
  });

  test('calls behind a runner that dies before reaching them all run on a fresh runner, each counted once', async () => {
    const { pool, factory } = makePool({ maxPerArtifact: 1, pipelineMaxRunMs: Infinity, pipelineDepth: 4 }, true);
    const t = target('alice', 'A');
    await call(pool, t);
    const dying = call(pool, t, { hold: true, tooLarge: 'killed' });
    await factory.heldCount(1);
    const behind = ['x', 'y', 'z'].map((name) => call(pool, t, { who: name }));
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    assert.equal(factory.created[0]!.calls, 5, 'all three written behind the running call');
    factory.releaseAll();
    await assert.rejects(dying, /15 MB/);
    const answers = await Promise.all(behind);
    assert.deepEqual(
      answers.map((a) => [who(a), runnerOf(a)]),
      [
        ['x', 2],
        ['y', 2],
        ['z', 2],
      ],
    );
    assert.equal(pool.stats.calls, 5);
    await pool.stopAll();
  });

  test('no second call for a runner whose harness writes no marks, for an algorithm that calls the API, or behind a call that is or may be long', async () => {
    const cases: { name: string; pipelines: boolean; pipeline: boolean; firstHoldMs: number; runningMs?: number; maxRunMs: number }[] = [
      { name: 'no output marks', pipelines: false, pipeline: false, firstHoldMs: 0, maxRunMs: Infinity },
      { name: 'pipeline_enabled (could call itself)', pipelines: true, pipeline: true, firstHoldMs: 0, maxRunMs: Infinity },
      // Calls of 30 ms or more where the pool's bound is 5 ms: true however slow the machine is.
      { name: 'calls of 30 ms', pipelines: true, pipeline: false, firstHoldMs: 30, maxRunMs: 5 },
      { name: 'the running call began 30 ms ago', pipelines: true, pipeline: false, firstHoldMs: 0, runningMs: 30, maxRunMs: 5 },
    ];
    for (const c of cases) {
      const { pool, factory } = makePool({ maxPerArtifact: 1, pipelineMaxRunMs: c.maxRunMs }, c.pipelines);
      const t = { ...target('alice', 'A'), pipeline: c.pipeline };
      const slow = call(pool, t, { hold: true });
      await factory.heldCount(1);
      await new Promise((r) => setTimeout(r, c.firstHoldMs));
      factory.releaseAll();
      await slow;
      const first = hold(pool, t);
      await factory.heldCount(1);
      if (c.runningMs) await new Promise((r) => setTimeout(r, c.runningMs));
      const second = call(pool, t, { who: 'second' });
      for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
      assert.equal(factory.created[0]!.calls, 2, `${c.name}: the second call waits in the pool`);
      factory.releaseAll();
      assert.equal(who(await second), 'second', c.name);
      await first;
      await pool.stopAll();
    }
  });

  test('a call behind a runner that dies before reaching it runs on a fresh runner, counted once', async () => {
    const { pool, factory } = makePool({ maxPerArtifact: 1, pipelineMaxRunMs: Infinity }, true);
    const t = target('alice', 'A');
    await call(pool, t);
    const dying = call(pool, t, { hold: true, tooLarge: 'killed' });
    await factory.heldCount(1);
    const behind = call(pool, t, { who: 'behind' });
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    assert.equal(factory.created[0]!.calls, 3, 'written behind the running call');
    factory.releaseAll();
    await assert.rejects(dying, /15 MB/);
    const res = await behind;
    assert.deepEqual([who(res), runnerOf(res), res.cold], ['behind', 2, true]);
    assert.equal(pool.stats.calls, 3);
    assert.equal(pool.stats.coldStarts, 2);
    await pool.stopAll();
  });
});
