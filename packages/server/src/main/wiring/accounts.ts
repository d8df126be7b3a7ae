/** Accounts: keys and sign-in, users, organizations and the audit log. */
import crypto from 'node:crypto';
import { KeyService } from '../../domain/accounts/key-service.js';
import type { Account } from '../../domain/accounts/model.js';
import { OrganizationService } from '../../domain/accounts/organization-service.js';
import { SignInThrottle } from '../../domain/accounts/sign-in-throttle.js';
import { UserService } from '../../domain/accounts/user-service.js';
import { AuditService, SIGN_IN_AUDIT_DEFAULTS } from '../../domain/audit/audit-service.js';
import { SqlKeyStore } from '../../storage/account-store.js';
import { SqlAuditStore } from '../../storage/audit-store.js';
import type { Base } from './base.js';

export function wireKeys(base: Base): KeyService {
  const { config, clock } = base;
  const keys = new KeyService({
    accounts: base.accounts,
    keys: new SqlKeyStore(base.db),
    settings: base.clusterSettings,
    clock,
    sessionTtlSeconds: config.sessionTtlSeconds,
    changes: base.changes,
    log: base.log,
    cacheTtlMs: base.cacheTtlMs,
    signInThrottle: new SignInThrottle(
      {
        failuresPerAccount: config.signInFailuresPerAccount,
        failuresPerAddress: config.signInFailuresPerAddress,
        delaySeconds: config.signInDelaySeconds,
        maxDelaySeconds: config.signInMaxDelaySeconds,
      },
      clock,
    ),
  });
  // A deleted account's keys stop working on this node at once.
  base.changes.on('account_deleted', ({ accountId }) => keys.forgetAccount(accountId));
  return keys;
}

export interface AccountServices {
  users: UserService;
  organizations: OrganizationService;
  audit: AuditService;
}

/** `deleteAllOf`: what goes with an account before it does (its algorithms, its hosted data). */
export function wireAccounts(base: Base, owned: { deleteAllOf(account: Account): Promise<void> }[]): AccountServices {
  const { accounts, clock, changes } = base;
  const cleanup = async (account: Account) => {
    for (const area of owned) await area.deleteAllOf(account);
  };
  let nameHashKey: string | undefined;
  const audit = new AuditService(new SqlAuditStore(base.db), clock, {
    accounts,
    // One per cluster, kept in the database beside the session secret; made on first use.
    nameHashKey: async () =>
      (nameHashKey ??= await base.clusterSettings.setIfAbsent('audit_name_hash_key', crypto.randomBytes(32).toString('base64url'))),
    ...SIGN_IN_AUDIT_DEFAULTS,
  });
  return {
    users: new UserService({ accounts, clock, cleanup, changes }),
    organizations: new OrganizationService({ accounts, clock, cleanup, changes }),
    audit,
  };
}
