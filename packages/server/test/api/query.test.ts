/** Query-string booleans: one parser for every route (`force`, `stdout`, `published`, `callable`, `acl`). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { queryBoolean } from '../../src/api/query.js';
import { DomainError } from '../../src/domain/errors.js';

test('true/false and 1/0 in any case; absent or empty is not given', () => {
  for (const v of ['true', 'True', 'TRUE', 'tRuE', '1']) assert.equal(queryBoolean('force', v), true, v);
  for (const v of ['false', 'False', 'FALSE', '0']) assert.equal(queryBoolean('force', v), false, v);
  assert.equal(queryBoolean('force', undefined), undefined);
  assert.equal(queryBoolean('force', ''), undefined);
});

test('anything else is a validation error naming the parameter, the accepted values and what was sent', () => {
  for (const v of ['yes', 'no', 't', '2', ' true', 'true ', 'on']) {
    assert.throws(
      () => queryBoolean('stdout', v),
      (err: unknown) => {
        assert.ok(err instanceof DomainError);
        assert.equal(err.kind, 'invalid');
        assert.equal(err.message, `the query parameter stdout must be true or false (any case), 1 or 0; got "${v}"`);
        return true;
      },
    );
  }
  assert.throws(() => queryBoolean('acl', 'x'.repeat(1000)), /got "x{40}…"$/);
});
