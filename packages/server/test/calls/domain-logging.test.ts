/**
 * Failures the domain handles without failing its caller are logged with their context, not
 * swallowed (issue 12): here an async call whose result the store refuses.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AsyncCallService } from '../../src/domain/calls/async-calls.js';
import type { CallService } from '../../src/domain/calls/call-service.js';
import type { CallRequest } from '../../src/domain/calls/request.js';
import type { AsyncRequest, AsyncRequestStore } from '../../src/domain/calls/ports.js';
import type { Logger } from '../../src/domain/logger.js';
import type { Principal } from '../../src/domain/accounts/principal.js';

test('an async result the database does not take is logged with the request id, and the call still ends', async () => {
  const warnings: { context: Record<string, unknown>; message: string }[] = [];
  const log: Logger = { warn: (context, message) => warnings.push({ context, message }) };
  const inserted: AsyncRequest[] = [];
  const store: AsyncRequestStore = {
    insert: async (r) => void inserted.push(r),
    complete: async () => {
      throw new Error('the database went away');
    },
    get: async () => undefined,
    completeAllRunning: async () => 0,
    deleteExpired: async () => 0,
  };
  // The call service's two methods the async service uses: the call itself succeeds.
  const calls = {
    check: async () => ({ ok: true, environment: {} }),
    call: async () => ({ ok: true, envelope: { result: 'hello' }, failed: false }),
  } as unknown as CallService;
  const service = new AsyncCallService({ calls, store, clock: () => new Date('2026-11-23T00:00:00Z'), log });
  const principal = { account: { id: 'a1', name: 'alice' } } as unknown as Principal;

  const accepted = await service.submit(principal, { address: 'alice/Hello/1.0.0' } as unknown as CallRequest);
  assert.ok(accepted.ok);
  const { requestId, done } = accepted;
  await done;
  assert.equal(inserted[0]?.id, requestId);
  assert.equal(warnings.length, 1);
  assert.equal(warnings[0]!.message, 'the result of an async call could not be stored');
  assert.equal(warnings[0]!.context.requestId, requestId);
  assert.match(String(warnings[0]!.context.err), /the database went away/);
});
