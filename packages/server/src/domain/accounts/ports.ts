import type { Page, PageRequest } from '../pagination.js';
import type { Account, AccountKind, ApiKey, Invitation, Member, MemberRole } from './model.js';

export interface AccountStore {
  /** Throws DomainError conflict when the name is taken. */
  insert(account: Account): Promise<void>;
  findByName(name: string): Promise<Account | undefined>;
  findById(id: string): Promise<Account | undefined>;
  findByEmail(email: string): Promise<Account | undefined>;
  list(kind: AccountKind, page: PageRequest): Promise<Page<Account>>;
  update(account: Account): Promise<void>;
  delete(id: string): Promise<void>;

  addMember(organizationId: string, userId: string, role: MemberRole, at: string): Promise<void>;
  removeMember(organizationId: string, userId: string): Promise<void>;
  membershipRole(organizationId: string, userId: string): Promise<MemberRole | undefined>;
  listMembers(organizationId: string): Promise<Member[]>;
  /** The organizations the user belongs to, with its role in each, by name. */
  membershipsOf(userId: string): Promise<{ organization: Account; role: MemberRole }[]>;

  /** Records the invitation, or changes the role (and inviter) of the pending one. */
  saveInvitation(organizationId: string, userId: string, role: MemberRole, invitedBy: string, at: string): Promise<void>;
  findInvitation(organizationId: string, userId: string): Promise<Invitation | undefined>;
  /** Returns false when there was no such invitation. */
  deleteInvitation(organizationId: string, userId: string): Promise<boolean>;
  listInvitationsOfOrganization(organizationId: string): Promise<Invitation[]>;
  listInvitationsOfUser(userId: string): Promise<Invitation[]>;
  /**
   * In one transaction: removes the invitation and makes the user a member with its role (an
   * existing membership keeps its role). Returns the role the user now holds, or undefined when
   * there was no invitation (declined, withdrawn or accepted meanwhile).
   */
  acceptInvitation(organizationId: string, userId: string, at: string): Promise<MemberRole | undefined>;
}

export interface StoredKey extends ApiKey {
  keyHash: string;
}

export interface KeyStore {
  insert(key: StoredKey): Promise<void>;
  findByHash(hash: string): Promise<ApiKey | undefined>;
  listForAccount(accountId: string): Promise<ApiKey[]>;
  /** Returns false when no such key belongs to the account. */
  delete(accountId: string, keyId: string): Promise<boolean>;
}

export interface ClusterSettingsStore {
  get(key: string): Promise<string | undefined>;
  /** Sets the value only if the key is unset; returns the value in force afterwards. */
  setIfAbsent(key: string, value: string): Promise<string>;
}
