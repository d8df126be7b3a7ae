/**
 * The delay of SignInThrottle (domain/accounts/sign-in-throttle.ts) with a clock the test moves:
 * it starts after the allowed failures, doubles with each failure after that, stops at the cap,
 * and a blocked attempt neither counts nor extends it. (rate-limits.test.ts checks the same
 * through POST /v1/auth/token on a real server.)
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { SignInThrottle } from '../src/domain/accounts/sign-in-throttle.js';
import { DomainError } from '../src/domain/errors.js';

function setup() {
  let now = 1_000_000_000_000;
  const throttle = new SignInThrottle(
    { failuresPerAccount: 2, failuresPerAddress: 0, delaySeconds: 1, maxDelaySeconds: 4 },
    () => new Date(now),
  );
  const waitOf = (): number | undefined => {
    try {
      throttle.check('alice', '10.0.0.1');
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
    throttle.failed('alice', '10.0.0.1');
    assert.equal(waitOf(), undefined);
    throttle.failed('alice', '10.0.0.1');
    assert.equal(waitOf(), 1);
    advance(1000);
    assert.equal(waitOf(), undefined);
    throttle.failed('alice', '10.0.0.1');
    assert.equal(waitOf(), 2);
    advance(2000);
    throttle.failed('alice', '10.0.0.1');
    assert.equal(waitOf(), 4);
    advance(4000);
    throttle.failed('alice', '10.0.0.1');
    assert.equal(waitOf(), 4, 'capped');
    advance(1500);
    assert.equal(waitOf(), 3, 'Retry-After counts down');
  });

  test('a success clears the name; another name is never delayed by alice’s failures', () => {
    const { throttle, waitOf, advance } = setup();
    throttle.failed('alice', '10.0.0.1');
    throttle.failed('Alice', '10.0.0.1');
    assert.equal(waitOf(), 1, 'names are counted whatever their case');
    assert.doesNotThrow(() => throttle.check('bob', '10.0.0.1'), 'no limit by address here');
    advance(1000);
    throttle.succeeded('alice');
    throttle.failed('alice', '10.0.0.1');
    assert.equal(waitOf(), undefined, 'the count started again');
  });
});
