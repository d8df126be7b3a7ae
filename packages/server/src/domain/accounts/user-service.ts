import crypto from 'node:crypto';
import { type Clock, isoNow } from '../clock.js';
import { Errors, forbidden, invalid } from '../errors.js';
import { assertName, MAX_ACCOUNT_NAME } from '../names.js';
import type { Page, PageRequest } from '../pagination.js';
import { identityOf, isAdmin, requireAccountCredential, requireAdmin, type Identity, type Principal } from './principal.js';
import type { Account } from './model.js';
import type { AccountStore } from './ports.js';
import { hashPassword, verifyPassword } from './secrets.js';
import { optionalText } from '../text.js';
import { type ChangeNotifier, ignoreChanges } from '../changes.js';

export interface UserInput {
  username?: unknown;
  email?: unknown;
  fullname?: unknown;
  company_name?: unknown;
  company_role?: unknown;
  password?: unknown;
  /** Required with `password` unless an admin sets another account's password. */
  current_password?: unknown;
}

/** Called before an account is deleted so that what it owns (repositories…) goes with it. */
export type AccountCleanup = (account: Account) => Promise<void>;

const EMAIL = /^[^\s@]+@[^\s@]+$/;
const MIN_PASSWORD = 8;

/** What UserService is made from (named, so the composition root reads as a list of parts). */
export interface UserServiceDeps {
  accounts: AccountStore;
  clock: Clock;
  cleanup: AccountCleanup;
  /** Told after a user is deleted (`account_deleted`). */
  changes?: ChangeNotifier;
}

export class UserService {
  private readonly accounts: AccountStore;
  private readonly clock: Clock;
  private readonly cleanup: AccountCleanup;
  private readonly changes: ChangeNotifier;

  constructor(deps: UserServiceDeps) {
    this.accounts = deps.accounts;
    this.clock = deps.clock;
    this.cleanup = deps.cleanup;
    this.changes = deps.changes ?? ignoreChanges;
  }

  /**
   * Who the caller is (`GET /v1/auth/whoami`), with the organizations it belongs to, so that a
   * page can list "my organizations' algorithms"; a call key is told none (it may not read them).
   */
  async whoami(p: Principal): Promise<Identity> {
    const identity = identityOf(p);
    if (p.via === 'call_key') return identity;
    const memberships = await this.accounts.membershipsOf(p.account.id);
    // Read afresh: a key's principal is cached for a while and would show the profile before an edit.
    const a = (await this.accounts.findById(p.account.id)) ?? p.account;
    return {
      ...identity,
      organizations: memberships.map((m) => ({ name: m.organization.name, role: m.role })),
      profile: { email: a.email, fullname: a.fullname, companyName: a.companyName, companyRole: a.companyRole },
    };
  }

  async create(p: Principal, input: UserInput): Promise<Account> {
    requireAdmin(p, 'creating users');
    return this.createUnchecked(input, false);
  }

  /** Also used at first start to create the `admin` account. */
  async createUnchecked(input: UserInput, admin: boolean): Promise<Account> {
    const name = assertName('username', input.username, MAX_ACCOUNT_NAME);
    const email = optionalText('email', input.email);
    if (!admin && !email) throw invalid('email is required');
    if (email && !EMAIL.test(email)) throw invalid(`email "${email}" is not an e-mail address`);
    if (await this.accounts.findByName(name)) throw Errors.usernameTaken({ name });
    if (email && (await this.accounts.findByEmail(email))) throw Errors.emailTaken({ email });
    const now = isoNow(this.clock);
    const account: Account = {
      id: crypto.randomUUID(),
      name,
      kind: 'user',
      email: email ?? null,
      fullname: optionalText('fullname', input.fullname) ?? null,
      companyName: optionalText('company_name', input.company_name) ?? null,
      companyRole: optionalText('company_role', input.company_role) ?? null,
      passwordHash: input.password === undefined ? null : await hashPassword(assertPassword(input.password)),
      isAdmin: admin,
      organization: null,
      createdAt: now,
      updatedAt: now,
    };
    await this.accounts.insert(account);
    return account;
  }

  /** Spec endpoint 6: admin key only. */
  async get(p: Principal, name: string): Promise<Account> {
    requireAdmin(p, 'looking up users');
    return this.require(name);
  }

  async list(p: Principal, page: PageRequest): Promise<Page<Account>> {
    requireAdmin(p, 'listing users');
    return this.accounts.list('user', page);
  }

  /**
   * An admin may update anyone; a user may update themself with a full credential (never an
   * algorithm call's key or a restricted key). A new password also needs the current one, unless
   * an admin sets another account's password (or the admin key holder its own). Omitted fields
   * stay as they are.
   */
  async update(p: Principal, name: string, input: UserInput): Promise<Account> {
    requireAccountCredential(p, 'updating a user');
    const account = await this.require(name, !isAdmin(p));
    if (!isAdmin(p) && p.account.id !== account.id) throw forbidden(`you may only update your own account, not "${name}"`);
    if (input.username !== undefined && input.username !== account.name) {
      throw invalid('username cannot be changed');
    }
    const email = optionalText('email', input.email);
    if (email !== undefined && email !== account.email) {
      if (!EMAIL.test(email)) throw invalid(`email "${email}" is not an e-mail address`);
      const other = await this.accounts.findByEmail(email);
      if (other && other.id !== account.id) throw Errors.emailTaken({ email });
      account.email = email;
    }
    account.fullname = optionalText('fullname', input.fullname) ?? account.fullname;
    account.companyName = optionalText('company_name', input.company_name) ?? account.companyName;
    account.companyRole = optionalText('company_role', input.company_role) ?? account.companyRole;
    if (input.password !== undefined) {
      const password = assertPassword(input.password);
      await this.assertMayChangePassword(p, account, input.current_password);
      account.passwordHash = await hashPassword(password);
    }
    account.updatedAt = isoNow(this.clock);
    await this.accounts.update(account);
    return account;
  }

  async delete(p: Principal, name: string): Promise<void> {
    requireAdmin(p, 'deleting users');
    const account = await this.require(name);
    if (account.id === p.account.id) throw invalid('an admin cannot delete the account it is signed in as');
    await this.cleanup(account);
    await this.accounts.delete(account.id);
    this.changes.publish({ kind: 'account_deleted', accountId: account.id });
  }

  private async assertMayChangePassword(p: Principal, account: Account, current: unknown): Promise<void> {
    if (isAdmin(p) && (p.account.id !== account.id || p.via === 'admin_key')) return;
    if (typeof current !== 'string' || current === '') {
      throw forbidden("changing the password needs current_password (the account's present password)");
    }
    if (account.passwordHash === null || !(await verifyPassword(current, account.passwordHash))) {
      throw forbidden("current_password is not the account's present password");
    }
  }

  /** `hideAs403` is false for admins: others must not learn which names exist. */
  private async require(name: string, hideAs403 = false): Promise<Account> {
    const account = await this.accounts.findByName(name);
    if (!account || account.kind !== 'user') {
      if (hideAs403) throw forbidden(`you may only update your own account, not "${name}"`);
      throw Errors.userNotFound({ name });
    }
    return account;
  }
}

function assertPassword(value: unknown): string {
  if (typeof value !== 'string' || value.length < MIN_PASSWORD) {
    throw invalid(`password must be a string of at least ${MIN_PASSWORD} characters`);
  }
  return value;
}
