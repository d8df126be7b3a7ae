/**
 * The runner pool's rules with a fake runner factory (no sandbox): scale-out per algorithm,
 * hand-off to waiting calls, least-recently-used eviction, the idle sweep, and the per-account
 * and per-node limits on runners and their memory.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Environment } from '../src/domain/catalog/model.js';
import type { PipeRequest, RunTarget } from '../src/domain/calls/ports.js';
import { DomainError } from '../src/domain/errors.js';
import type { RunnerRequest } from '../src/runtime/runner/runner-factory.js';
import { type PoolRunner, type PoolSettings, RunnerPool } from '../src/runtime/runner/runner-pool.js';
import { type CallOutcome, RunnerFailure } from '../src/runtime/runner/runner-process.js';

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
  calls = 0;

  constructor(
    readonly id: number,
    readonly req: RunnerRequest,
    private readonly factory: FakeFactory,
  ) {}

  async start(): Promise<void> {
    this.alive = true;
  }

  async call(request: PipeRequest): Promise<CallOutcome> {
    this.calls++;
    const data = request.data as { hold?: boolean; who?: string; fail?: boolean };
    if (data?.fail) throw new RunnerFailure('OutOfMemoryError', 'the algorithm ran out of memory');
    if (data?.hold) {
      const gate = deferred();
      this.factory.held.push({ runner: this, release: gate.resolve });
      await gate.promise;
    }
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
  return { artifact, algorithmName: artifact, environment, network: 'none', pipeline: false, owner: { id: `id-${owner}`, name: owner } };
}

function makePool(settings: Partial<PoolSettings> = {}): { pool: RunnerPool; factory: FakeFactory } {
  const factory = new FakeFactory();
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
