/**
 * Who may act on what an account owns: the account itself, members of an owning organization,
 * and cluster admins. Shared by algorithms, builds, versions, calls and hosted data.
 */
import { isAdmin, type Principal } from './principal.js';
import type { Account } from './model.js';
import type { AccountStore } from './ports.js';

export class OwnerAccess {
  constructor(private readonly accounts: AccountStore) {}

  async isMemberOrSelf(p: Principal, owner: Account): Promise<boolean> {
    if (p.account.id === owner.id) return true;
    if (owner.kind !== 'organization') return false;
    return (await this.accounts.membershipRole(owner.id, p.account.id)) !== undefined;
  }

  async canManage(p: Principal, owner: Account): Promise<boolean> {
    return isAdmin(p) || this.isMemberOrSelf(p, owner);
  }
}
