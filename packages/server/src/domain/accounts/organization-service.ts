import crypto from 'node:crypto';
import { type Clock, isoNow } from '../clock.js';
import { Errors, forbidden, invalid } from '../errors.js';
import { assertName, MAX_ACCOUNT_NAME } from '../names.js';
import type { Page, PageRequest } from '../pagination.js';
import { isAdmin, refuseCallKey, requireAccountCredential, requireCapability, type Principal } from './principal.js';
import { type Account, type Invitation, type Member, type MemberRole, ORGANIZATION_TYPES } from './model.js';
import type { AccountStore } from './ports.js';
import type { AccountCleanup } from './user-service.js';
import { optionalText } from '../text.js';
import { type ChangeNotifier, ignoreChanges } from '../changes.js';

export interface OrganizationInput {
  org_name?: unknown;
  org_label?: unknown;
  org_contact_name?: unknown;
  org_email?: unknown;
  org_url?: unknown;
  type_id?: unknown;
}

/** What OrganizationService is made from (named, so the composition root reads as a list of parts). */
export interface OrganizationServiceDeps {
  accounts: AccountStore;
  clock: Clock;
  cleanup: AccountCleanup;
  /** Told after a membership was added, changed or removed, and after the organization is deleted. */
  changes?: ChangeNotifier;
}

export class OrganizationService {
  private readonly accounts: AccountStore;
  private readonly clock: Clock;
  private readonly cleanup: AccountCleanup;
  private readonly changes: ChangeNotifier;

  constructor(deps: OrganizationServiceDeps) {
    this.accounts = deps.accounts;
    this.clock = deps.clock;
    this.cleanup = deps.cleanup;
    this.changes = deps.changes ?? ignoreChanges;
  }

  /** Any user may found an organization and becomes its owner. */
  async create(p: Principal, input: OrganizationInput): Promise<Account> {
    requireAccountCredential(p, 'creating an organization');
    requireCapability(p, 'manage_algorithms');
    if (p.account.kind !== 'user') throw forbidden('an organization key cannot create organizations');
    const name = assertName('org_name', input.org_name, MAX_ACCOUNT_NAME);
    const label = optionalText('org_label', input.org_label) ?? name;
    const typeId = this.resolveType(input.type_id);
    if (await this.accounts.findByName(name)) {
      throw Errors.organizationExists({ name });
    }
    const email = optionalText('org_email', input.org_email);
    if (email !== undefined && !/^[^\s@]+@[^\s@]+$/.test(email)) throw invalid(`org_email "${email}" is not an e-mail address`);
    const now = isoNow(this.clock);
    const org: Account = {
      id: crypto.randomUUID(),
      name,
      kind: 'organization',
      email: email ?? null,
      fullname: null,
      companyName: null,
      companyRole: null,
      passwordHash: null,
      isAdmin: false,
      organization: {
        label,
        contactName: optionalText('org_contact_name', input.org_contact_name) ?? null,
        url: optionalText('org_url', input.org_url) ?? null,
        typeId,
      },
      createdAt: now,
      updatedAt: now,
    };
    await this.accounts.insert(org);
    await this.accounts.addMember(org.id, p.account.id, 'owner', now);
    return org;
  }

  async list(p: Principal, page: PageRequest): Promise<Page<Account>> {
    if (!isAdmin(p)) throw forbidden('listing all organizations needs an admin API key');
    return this.accounts.list('organization', page);
  }

  async get(p: Principal, name: string): Promise<Account> {
    const org = await this.require(name);
    await this.requireRole(p, org, 'member');
    return org;
  }

  async update(p: Principal, name: string, input: OrganizationInput): Promise<void> {
    const org = await this.require(name);
    await this.requireRole(p, org, 'owner');
    if (input.org_name !== undefined && input.org_name !== org.name) throw invalid('org_name cannot be changed');
    const profile = org.organization!;
    profile.label = optionalText('org_label', input.org_label) ?? profile.label;
    profile.contactName = optionalText('org_contact_name', input.org_contact_name) ?? profile.contactName;
    profile.url = optionalText('org_url', input.org_url) ?? profile.url;
    if (input.type_id !== undefined) profile.typeId = this.resolveType(input.type_id);
    const email = optionalText('org_email', input.org_email);
    if (email !== undefined) {
      if (!/^[^\s@]+@[^\s@]+$/.test(email)) throw invalid(`org_email "${email}" is not an e-mail address`);
      org.email = email;
    }
    org.updatedAt = isoNow(this.clock);
    await this.accounts.update(org);
  }

  async delete(p: Principal, name: string): Promise<void> {
    const org = await this.require(name);
    await this.requireRole(p, org, 'owner');
    await this.cleanup(org);
    await this.accounts.delete(org.id);
    this.changes.publish({ kind: 'account_deleted', accountId: org.id });
  }

  async members(p: Principal, name: string): Promise<Member[]> {
    const org = await this.require(name);
    await this.requireRole(p, org, 'member');
    return this.accounts.listMembers(org.id);
  }

  /**
   * PUT …/members/{user} (owners and admins). Nobody becomes a member without consent: for a
   * user who is not a member yet, an owner's request records (or updates) an invitation that
   * the user accepts or declines, and that is what is returned. A cluster admin adds directly
   * (admins manage accounts), and an existing member's role changes at once (returns nothing).
   */
  async addMember(p: Principal, name: string, username: string, role: unknown): Promise<{ invitation?: Invitation }> {
    const org = await this.require(name);
    await this.requireRole(p, org, 'owner');
    const user = await this.accounts.findByName(username);
    if (!user || user.kind !== 'user') throw Errors.userNotFound({ name: username });
    const newRole: MemberRole = role === undefined ? 'member' : assertRole(role);
    const current = await this.accounts.membershipRole(org.id, user.id);
    const now = isoNow(this.clock);
    if (!current && !isAdmin(p)) {
      await this.accounts.saveInvitation(org.id, user.id, newRole, p.account.id, now);
      return { invitation: (await this.accounts.findInvitation(org.id, user.id))! };
    }
    if (current === 'owner' && newRole === 'member') await this.assertAnotherOwner(org, user.id);
    if (current) await this.accounts.removeMember(org.id, user.id);
    await this.accounts.addMember(org.id, user.id, newRole, now);
    await this.accounts.deleteInvitation(org.id, user.id);
    this.changes.publish({ kind: 'membership_changed', organizationId: org.id });
    return {};
  }

  /** Pending invitations of the organization (owners and admins). */
  async invitations(p: Principal, name: string): Promise<Invitation[]> {
    const org = await this.require(name);
    await this.requireRole(p, org, 'owner');
    return this.accounts.listInvitationsOfOrganization(org.id);
  }

  /** An owner (or admin) withdraws a pending invitation. */
  async withdrawInvitation(p: Principal, name: string, username: string): Promise<void> {
    const org = await this.require(name);
    await this.requireRole(p, org, 'owner');
    const user = await this.accounts.findByName(username);
    if (!user || !(await this.accounts.deleteInvitation(org.id, user.id))) {
      throw Errors.invitationNotFound({ org: org.name, user: username });
    }
  }

  /** The invitations waiting for a user: seen by that user (and admins) only. */
  async invitationsOf(p: Principal, username: string): Promise<Invitation[]> {
    refuseCallKey(p, 'reading invitations');
    const user = await this.invitee(p, username, true);
    return this.accounts.listInvitationsOfUser(user.id);
  }

  /**
   * The invited user accepts and becomes a member with the invitation's role. Only the user
   * themself may: not an admin, not an organization's key, not the key of an algorithm call.
   */
  async acceptInvitation(
    p: Principal,
    username: string,
    orgName: string,
  ): Promise<{ organization: Account; user: Account; role: MemberRole }> {
    requireAccountCredential(p, 'accepting an invitation');
    const user = await this.invitee(p, username, false);
    const org = await this.accounts.findByName(orgName);
    const role = org?.kind === 'organization' ? await this.accounts.acceptInvitation(org.id, user.id, isoNow(this.clock)) : undefined;
    if (!org || !role) throw this.noInvitation(user, orgName);
    this.changes.publish({ kind: 'membership_changed', organizationId: org.id });
    return { organization: org, user, role };
  }

  /** The invited user (or an admin) declines: the invitation is gone, no membership. */
  async declineInvitation(p: Principal, username: string, orgName: string): Promise<void> {
    requireAccountCredential(p, 'declining an invitation');
    const user = await this.invitee(p, username, true);
    const org = await this.accounts.findByName(orgName);
    if (!org || org.kind !== 'organization' || !(await this.accounts.deleteInvitation(org.id, user.id))) {
      throw this.noInvitation(user, orgName);
    }
  }

  /** The user named in /v1/users/{user}/invitations, who must be the caller (or, if allowed, an admin acts). */
  private async invitee(p: Principal, username: string, adminMay: boolean): Promise<Account> {
    const user = await this.accounts.findByName(username);
    const self = user !== undefined && user.kind === 'user' && p.account.id === user.id;
    if (self) return user;
    if (adminMay && isAdmin(p)) {
      if (!user || user.kind !== 'user') throw Errors.userNotFound({ name: username });
      return user;
    }
    // The same answer whether the user exists or not.
    throw forbidden(`only ${username} may ${adminMay ? 'see or decline' : 'accept'} invitations to ${username}`);
  }

  private noInvitation(user: Account, orgName: string) {
    return Errors.noInvitationTo({ user: user.name, org: orgName });
  }

  /** Owners remove anyone; a member may leave. The last owner cannot go. */
  async removeMember(p: Principal, name: string, username: string): Promise<void> {
    requireAccountCredential(p, 'changing organization members');
    const org = await this.require(name);
    const user = await this.accounts.findByName(username);
    const role = user ? await this.accounts.membershipRole(org.id, user.id) : undefined;
    if (!user || !role) {
      await this.requireRole(p, org, 'member');
      throw Errors.notAMember({ user: username, org: org.name });
    }
    if (p.account.id !== user.id) await this.requireRole(p, org, 'owner');
    if (role === 'owner') await this.assertAnotherOwner(org, user.id);
    await this.accounts.removeMember(org.id, user.id);
    this.changes.publish({ kind: 'membership_changed', organizationId: org.id });
  }

  /** Admins act as owners of every organization. */
  async requireRole(p: Principal, org: Account, needed: MemberRole): Promise<void> {
    // Reading an organization is not for algorithm calls; running it needs a full credential.
    if (needed === 'owner') requireAccountCredential(p, 'managing an organization');
    else refuseCallKey(p, 'reading an organization');
    if (isAdmin(p) || p.account.id === org.id) return;
    const role = await this.accounts.membershipRole(org.id, p.account.id);
    if (!role) throw forbidden(`you are not a member of organization "${org.name}"`);
    if (needed === 'owner' && role !== 'owner') throw forbidden(`only owners of organization "${org.name}" may do this`);
  }

  private async require(name: string): Promise<Account> {
    const org = await this.accounts.findByName(name);
    if (!org || org.kind !== 'organization') throw Errors.organizationNotFound({ name });
    return org;
  }

  private async assertAnotherOwner(org: Account, leaving: string): Promise<void> {
    const owners = (await this.accounts.listMembers(org.id)).filter((m) => m.role === 'owner' && m.user.id !== leaving);
    if (owners.length === 0) throw Errors.stateConflict(`organization "${org.name}" must keep at least one owner`);
  }

  private resolveType(value: unknown): string {
    if (value === undefined || value === null) return ORGANIZATION_TYPES[0].id;
    const t = ORGANIZATION_TYPES.find((x) => x.id === value || x.name === value);
    if (!t) throw invalid(`type_id "${String(value)}" is unknown; see GET /v1/organization/types`);
    return t.id;
  }
}

function assertRole(role: unknown): MemberRole {
  if (role === 'owner' || role === 'member') return role;
  throw invalid(`role must be "owner" or "member"`);
}
