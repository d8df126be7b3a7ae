/**
 * domain/accounts/principal.ts: an Event Flow's delivery calls its algorithm for the owner
 * (flowPrincipal). It holds what the key of an algorithm call holds and nothing more: even for an
 * admin's algorithm it may call and use hosted data, never administer an account, reach Git or
 * act as an admin.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  CALL_KEY_CAPABILITIES,
  flowPrincipal,
  isAdmin,
  refuseCallKey,
  requireAccountCredential,
  requireAdmin,
  requireCapability,
} from '../../src/domain/accounts/principal.js';
import type { Account } from '../../src/domain/accounts/model.js';
import { DomainError } from '../../src/domain/errors.js';

const AT = '2026-01-01T00:00:00.000Z';
const owner = (isAdminAccount: boolean): Account => ({
  id: 'acc-1',
  name: 'alice',
  kind: 'user',
  email: null,
  fullname: null,
  companyName: null,
  companyRole: null,
  passwordHash: null,
  isAdmin: isAdminAccount,
  organization: null,
  createdAt: AT,
  updatedAt: AT,
});
const refused = (fn: () => void) => assert.throws(fn, (err: unknown) => err instanceof DomainError && err.kind === 'forbidden');

for (const adminOwner of [false, true]) {
  test(`a flow of ${adminOwner ? "an admin's" : "a user's"} algorithm may call and use data, and nothing that administers`, () => {
    const flow = flowPrincipal(owner(adminOwner));
    assert.deepEqual([...flow.capabilities].sort(), [...CALL_KEY_CAPABILITIES].sort());
    for (const capability of CALL_KEY_CAPABILITIES) requireCapability(flow, capability);
    assert.equal(isAdmin(flow), false);
    refused(() => requireAdmin(flow, 'listing users'));
    refused(() => requireAccountCredential(flow, 'creating an API key'));
    refused(() => refuseCallKey(flow, 'Git access'));
  });
}
