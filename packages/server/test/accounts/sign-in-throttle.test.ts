/**
 * The delay of SignInThrottle (domain/accounts/sign-in-throttle.ts) with a clock the test moves:
 * it starts after the allowed failures, doubles with each failure after that, stops at the cap,
 * and a blocked attempt neither counts nor extends it. Issue 36 item 8: a flood of failures for
 * names no account has never pushes an account's block out, and a client the owner signed in
 * from is not held by the block others cause. (rate-limits.test.ts and
 * security-api-edge-tenants.test.ts check the same through POST /v1/auth/token on real servers.)
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SignInThrottle, type SignInSubject } from '../../src/domain/accounts/sign-in-throttle.js';
import { DomainError } from '../../src/domain/errors.js';

const ALICE: SignInSubject = { accountId: 'alice-id' };

function setup(settings: Partial<ConstructorParameters<typeof SignInThrottle>[0]> = {}) {
  let now = 1_000_000_000_000;
  const throttle = new SignInThrottle(
    { failuresPerAccount: 2, failuresPerAddress: 0, delaySeconds: 1, maxDelaySeconds: 4, ...settings },
    () => new Date(now),
  );
  const waitOf = (subject: SignInSubject = ALICE, client = '10.0.0.1'): number | undefined => {
    try {
      throttle.check(subject, client);
      return undefined;
    } catch (err) {
      assert.ok(err instanceof DomainError && err.kind === 'limit', String(err));
      return err.details?.retryAfterSeconds as number;
    }
  };
  return { throttle, waitOf, advance: (ms: number) => (now += ms) };
}

describe('sign-in throttle', () => {
  test('delays start after the allowed failures, double with each further one, and stop at the cap', () => {
    const { throttle, waitOf, advance } = setup();
    throttle.failed(ALICE, '10.0.0.1');
    assert.equal(waitOf(), undefined);
    throttle.failed(ALICE, '10.0.0.1');
    assert.equal(waitOf(), 1);
    advance(1000);
    assert.equal(waitOf(), undefined);
    throttle.failed(ALICE, '10.0.0.1');
    assert.equal(waitOf(), 2);
    advance(2000);
    throttle.failed(ALICE, '10.0.0.1');
    assert.equal(waitOf(), 4);
    advance(4000);
    throttle.failed(ALICE, '10.0.0.1');
    assert.equal(waitOf(), 4, 'capped');
    advance(1500);
    assert.equal(waitOf(), 3, 'Retry-After counts down');
  });

  test('a success clears the account; another account or name is never delayed by alice’s failures', () => {
    const { throttle, waitOf, advance } = setup();
    throttle.failed(ALICE, '10.0.0.1');
    throttle.failed(ALICE, '10.0.0.2');
    assert.equal(waitOf(), 1);
    assert.equal(waitOf({ accountId: 'bob-id' }), undefined, 'no limit by address here');
    assert.equal(waitOf({ unknownName: 'alice2' }), undefined);
    advance(1000);
    throttle.succeeded('alice-id', '10.0.0.9');
    throttle.failed(ALICE, '10.0.0.1');
    assert.equal(waitOf(), undefined, 'the count started again');
  });

  test('unknown names are counted whatever their case, like accounts, so the answers do not tell which names exist', () => {
    const { throttle, waitOf } = setup();
    throttle.failed({ unknownName: 'Nobody' }, '10.0.0.1');
    throttle.failed({ unknownName: 'nobody' }, '10.0.0.2');
    assert.equal(waitOf({ unknownName: 'NOBODY' }), 1);
  });

  test('item 8: 100,001 failures for made-up names do not push alice’s block out', () => {
    // The guesser keeps alice blocked at the cap, then floods names that no account has, from
    // many addresses (each name and address once: no per-address limit holds them).
    const { throttle, waitOf, advance } = setup({ failuresPerAccount: 2, failuresPerAddress: 5, maxDelaySeconds: 900 });
    for (let i = 0; i < 12; i++) throttle.failed(ALICE, '203.0.113.1');
    const before = waitOf(ALICE, '198.51.100.7')!;
    assert.ok(before > 800, `alice is blocked for ${before} s`);
    for (let i = 0; i < 100_001; i++) throttle.failed({ unknownName: `name-${i}` }, `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`);
    advance(1000);
    assert.equal(waitOf(ALICE, '198.51.100.7'), before - 1, 'alice’s block is still there');
  });

  test('item 8: the lock-out is bounded: it ends the maximum delay after the last failure, and refused attempts do not extend it', () => {
    const { throttle, waitOf, advance } = setup({ maxDelaySeconds: 4 });
    for (let i = 0; i < 10; i++) throttle.failed(ALICE, '203.0.113.1');
    assert.equal(waitOf(), 4);
    // The guesser keeps trying while blocked: each is refused before it counts.
    for (let i = 0; i < 3; i++) {
      advance(1000);
      assert.ok(waitOf(ALICE, '203.0.113.1')! > 0);
    }
    advance(1000);
    assert.equal(waitOf(), undefined, 'four seconds after the last counted failure alice signs in again');
  });

  test('item 8: a client alice signed in from is held only by its own failures, not by the block others cause', () => {
    const { throttle, waitOf } = setup({ failuresPerAccount: 2, maxDelaySeconds: 900 });
    throttle.succeeded('alice-id', '192.0.2.10');
    for (let i = 0; i < 20; i++) throttle.failed(ALICE, '203.0.113.1');
    assert.ok(waitOf(ALICE, '203.0.113.1')! > 0, 'the guesser is blocked');
    assert.ok(waitOf(ALICE, '198.51.100.7')! > 0, 'so is any other new client');
    assert.equal(waitOf(ALICE, '192.0.2.10'), undefined, 'alice’s own client is not');
    // Her sign-in there does not lift the block for everyone else (no fresh guesses for them).
    throttle.succeeded('alice-id', '192.0.2.10');
    assert.ok(waitOf(ALICE, '203.0.113.1')! > 0, 'the guesser is still blocked');
    // Guesses from her client are still slowed, on their own count.
    throttle.failed(ALICE, '192.0.2.10');
    throttle.failed(ALICE, '192.0.2.10');
    assert.equal(waitOf(ALICE, '192.0.2.10'), 1);
  });
});
