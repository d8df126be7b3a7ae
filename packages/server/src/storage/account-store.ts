import type { Selectable } from 'kysely';
import { Errors } from '../domain/errors.js';
import type { Account, AccountKind, ApiKey, Capability, Invitation, Member, MemberRole } from '../domain/accounts/model.js';
import type { AccountStore, ClusterSettingsStore, KeyStore, StoredKey } from '../domain/accounts/ports.js';
import { nameKey } from '../domain/names.js';
import { type Page, type PageRequest, toPage } from '../domain/pagination.js';
import { type Db, hasNul, invalidMarker, isUniqueViolation } from './database.js';
import type { AccountsTable, ApiKeysTable, InvitationsTable } from './schema.js';

export class SqlAccountStore implements AccountStore {
  constructor(private readonly db: Db) {}

  async insert(a: Account): Promise<void> {
    try {
      await this.db.insertInto('accounts').values(toRow(a)).execute();
    } catch (err) {
      if (isUniqueViolation(err)) throw Errors.nameTaken({ name: a.name });
      throw err;
    }
  }

  async findByName(name: string): Promise<Account | undefined> {
    if (hasNul(name)) return undefined;
    const row = await this.db.selectFrom('accounts').selectAll().where('name_key', '=', nameKey(name)).executeTakeFirst();
    return row && fromRow(row);
  }

  async findById(id: string): Promise<Account | undefined> {
    const row = await this.db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
    return row && fromRow(row);
  }

  async findByEmail(email: string): Promise<Account | undefined> {
    if (hasNul(email)) return undefined;
    const row = await this.db.selectFrom('accounts').selectAll().where('email', '=', email).where('kind', '=', 'user').executeTakeFirst();
    return row && fromRow(row);
  }

  async list(kind: AccountKind, page: PageRequest): Promise<Page<Account>> {
    if (hasNul(page.after)) throw invalidMarker();
    let q = this.db.selectFrom('accounts').selectAll().where('kind', '=', kind);
    if (page.after !== undefined) q = q.where('name_key', '>', page.after);
    const rows = await q
      .orderBy('name_key')
      .limit(page.limit + 1)
      .execute();
    return toPage(rows.map(fromRow), page.limit, (a) => nameKey(a.name));
  }

  async update(a: Account): Promise<void> {
    const { id, ...rest } = toRow(a);
    await this.db.updateTable('accounts').set(rest).where('id', '=', id).execute();
  }

  async delete(id: string): Promise<void> {
    await this.db.deleteFrom('accounts').where('id', '=', id).execute();
  }

  async addMember(organizationId: string, userId: string, role: MemberRole, at: string): Promise<void> {
    await this.db.insertInto('memberships').values({ organization_id: organizationId, user_id: userId, role, created_at: at }).execute();
  }

  async removeMember(organizationId: string, userId: string): Promise<void> {
    await this.db.deleteFrom('memberships').where('organization_id', '=', organizationId).where('user_id', '=', userId).execute();
  }

  async membershipRole(organizationId: string, userId: string): Promise<MemberRole | undefined> {
    const row = await this.db
      .selectFrom('memberships')
      .select('role')
      .where('organization_id', '=', organizationId)
      .where('user_id', '=', userId)
      .executeTakeFirst();
    return row?.role;
  }

  async listMembers(organizationId: string): Promise<Member[]> {
    const rows = await this.db
      .selectFrom('memberships')
      .innerJoin('accounts', 'accounts.id', 'memberships.user_id')
      .selectAll('accounts')
      .select('memberships.role')
      .where('memberships.organization_id', '=', organizationId)
      .orderBy('accounts.name_key')
      .execute();
    return rows.map((r) => ({ user: fromRow(r), role: r.role }));
  }

  async membershipsOf(userId: string): Promise<{ organization: Account; role: MemberRole }[]> {
    const rows = await this.db
      .selectFrom('memberships')
      .innerJoin('accounts', 'accounts.id', 'memberships.organization_id')
      .selectAll('accounts')
      .select('memberships.role')
      .where('memberships.user_id', '=', userId)
      .orderBy('accounts.name_key')
      .execute();
    return rows.map((r) => ({ organization: fromRow(r), role: r.role }));
  }

  async saveInvitation(organizationId: string, userId: string, role: MemberRole, invitedBy: string, at: string): Promise<void> {
    await this.db
      .insertInto('invitations')
      .values({ organization_id: organizationId, user_id: userId, role, invited_by: invitedBy, created_at: at })
      .onConflict((oc) => oc.columns(['organization_id', 'user_id']).doUpdateSet({ role, invited_by: invitedBy }))
      .execute();
  }

  async findInvitation(organizationId: string, userId: string): Promise<Invitation | undefined> {
    const row = await this.db
      .selectFrom('invitations')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('user_id', '=', userId)
      .executeTakeFirst();
    return row && (await this.invitationsFromRows([row]))[0];
  }

  async deleteInvitation(organizationId: string, userId: string): Promise<boolean> {
    const res = await this.db
      .deleteFrom('invitations')
      .where('organization_id', '=', organizationId)
      .where('user_id', '=', userId)
      .executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  }

  async listInvitationsOfOrganization(organizationId: string): Promise<Invitation[]> {
    const rows = await this.db.selectFrom('invitations').selectAll().where('organization_id', '=', organizationId).execute();
    return (await this.invitationsFromRows(rows)).sort((a, b) => byName(a.user, b.user));
  }

  async listInvitationsOfUser(userId: string): Promise<Invitation[]> {
    const rows = await this.db.selectFrom('invitations').selectAll().where('user_id', '=', userId).execute();
    return (await this.invitationsFromRows(rows)).sort((a, b) => byName(a.organization, b.organization));
  }

  async acceptInvitation(organizationId: string, userId: string, at: string): Promise<MemberRole | undefined> {
    return this.db.transaction().execute(async (tx) => {
      // Deleting first decides between racing accepts (and a decline or withdrawal): one wins.
      const invitation = await tx
        .deleteFrom('invitations')
        .where('organization_id', '=', organizationId)
        .where('user_id', '=', userId)
        .returning('role')
        .executeTakeFirst();
      if (!invitation) return undefined;
      const current = await tx
        .selectFrom('memberships')
        .select('role')
        .where('organization_id', '=', organizationId)
        .where('user_id', '=', userId)
        .executeTakeFirst();
      if (current) return current.role;
      await tx
        .insertInto('memberships')
        .values({ organization_id: organizationId, user_id: userId, role: invitation.role, created_at: at })
        .execute();
      return invitation.role;
    });
  }

  private async invitationsFromRows(rows: Selectable<InvitationsTable>[]): Promise<Invitation[]> {
    if (rows.length === 0) return [];
    const ids = [...new Set(rows.flatMap((r) => [r.organization_id, r.user_id, ...(r.invited_by ? [r.invited_by] : [])]))];
    const accounts = new Map<string, Account>();
    for (const row of await this.db.selectFrom('accounts').selectAll().where('id', 'in', ids).execute()) accounts.set(row.id, fromRow(row));
    return rows.flatMap((r) => {
      const organization = accounts.get(r.organization_id);
      const user = accounts.get(r.user_id);
      if (!organization || !user) return []; // deleted meanwhile (the rows cascade)
      return [
        { organization, user, role: r.role, invitedBy: (r.invited_by && accounts.get(r.invited_by)) || null, createdAt: r.created_at },
      ];
    });
  }
}

function byName(a: Account, b: Account): number {
  const ka = nameKey(a.name);
  const kb = nameKey(b.name);
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}

function toRow(a: Account): AccountsTable {
  return {
    id: a.id,
    name: a.name,
    name_key: nameKey(a.name),
    kind: a.kind,
    email: a.email,
    fullname: a.fullname,
    company_name: a.companyName,
    company_role: a.companyRole,
    password_hash: a.passwordHash,
    is_admin: a.isAdmin ? 1 : 0,
    org_label: a.organization?.label ?? null,
    org_contact_name: a.organization?.contactName ?? null,
    org_url: a.organization?.url ?? null,
    org_type_id: a.organization?.typeId ?? null,
    created_at: a.createdAt,
    updated_at: a.updatedAt,
  };
}

function fromRow(r: Selectable<AccountsTable>): Account {
  return {
    id: r.id,
    name: r.name,
    kind: r.kind,
    email: r.email,
    fullname: r.fullname,
    companyName: r.company_name,
    companyRole: r.company_role,
    passwordHash: r.password_hash,
    isAdmin: Number(r.is_admin) === 1,
    organization:
      r.kind === 'organization'
        ? { label: r.org_label ?? r.name, contactName: r.org_contact_name, url: r.org_url, typeId: r.org_type_id ?? '' }
        : null,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

export class SqlKeyStore implements KeyStore {
  constructor(private readonly db: Db) {}

  async insert(k: StoredKey): Promise<void> {
    await this.db
      .insertInto('api_keys')
      .values({
        id: k.id,
        account_id: k.accountId,
        kind: k.kind,
        capabilities: JSON.stringify(k.capabilities),
        key_hash: k.keyHash,
        key_prefix: k.prefix,
        description: k.description,
        created_at: k.createdAt,
      })
      .execute();
  }

  async findByHash(hash: string): Promise<ApiKey | undefined> {
    const row = await this.db.selectFrom('api_keys').selectAll().where('key_hash', '=', hash).executeTakeFirst();
    return row && keyFromRow(row);
  }

  async listForAccount(accountId: string): Promise<ApiKey[]> {
    const rows = await this.db
      .selectFrom('api_keys')
      .selectAll()
      .where('account_id', '=', accountId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map(keyFromRow);
  }

  async delete(accountId: string, keyId: string): Promise<boolean> {
    const res = await this.db.deleteFrom('api_keys').where('account_id', '=', accountId).where('id', '=', keyId).executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  }
}

function keyFromRow(r: Selectable<ApiKeysTable>): ApiKey {
  return {
    id: r.id,
    accountId: r.account_id,
    kind: r.kind,
    capabilities: JSON.parse(r.capabilities) as Capability[],
    prefix: r.key_prefix,
    description: r.description,
    createdAt: r.created_at,
  };
}

export class SqlClusterSettingsStore implements ClusterSettingsStore {
  constructor(private readonly db: Db) {}

  async get(key: string): Promise<string | undefined> {
    const row = await this.db.selectFrom('cluster_settings').select('value').where('key', '=', key).executeTakeFirst();
    return row?.value;
  }

  async setIfAbsent(key: string, value: string): Promise<string> {
    try {
      await this.db.insertInto('cluster_settings').values({ key, value }).execute();
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
    }
    return (await this.get(key))!;
  }
}
