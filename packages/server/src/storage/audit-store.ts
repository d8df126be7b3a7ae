/** The audit log in the `audit_log` table (SQLite and PostgreSQL alike). */
import type { Selectable } from 'kysely';
import type { AuditEntry, AuditFilter, AuditStore } from '../domain/audit/audit-service.js';
import { type Page, toPage } from '../domain/pagination.js';
import type { Db } from './database.js';
import type { AuditLogTable } from './schema.js';

export class SqlAuditStore implements AuditStore {
  constructor(private readonly db: Db) {}

  async append(e: AuditEntry): Promise<void> {
    await this.db
      .insertInto('audit_log')
      .values({
        id: e.id,
        at: e.at,
        actor: e.actor,
        actor_id: e.actorId,
        credential: e.credential,
        action: e.action,
        target: e.target,
        status: e.status,
        address: e.address,
        details: JSON.stringify(e.details),
      })
      .execute();
  }

  async deleteBefore(iso: string): Promise<number> {
    const result = await this.db.deleteFrom('audit_log').where('at', '<', iso).executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  async updateDetails(id: string, details: Record<string, unknown>): Promise<void> {
    await this.db
      .updateTable('audit_log')
      .set({ details: JSON.stringify(details) })
      .where('id', '=', id)
      .execute();
  }

  async deleteAnonymousBeyond(keep: number): Promise<number> {
    // The newest entry past those kept, found through the (at, id) index; it and older ones go.
    const edge = await this.db
      .selectFrom('audit_log')
      .select(['at', 'id'])
      .where('actor_id', 'is', null)
      .orderBy('at', 'desc')
      .orderBy('id', 'desc')
      .offset(keep)
      .limit(1)
      .executeTakeFirst();
    if (!edge) return 0;
    const result = await this.db
      .deleteFrom('audit_log')
      .where('actor_id', 'is', null)
      .where((eb) => eb.or([eb('at', '<', edge.at), eb.and([eb('at', '=', edge.at), eb('id', '<=', edge.id)])]))
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  async list(filter: AuditFilter): Promise<Page<AuditEntry>> {
    let q = this.db.selectFrom('audit_log').selectAll();
    // NUL cannot be stored (PostgreSQL text), so a filter holding one matches nothing.
    if (filter.actor !== undefined) q = q.where('actor', '=', filter.actor.replaceAll('\u0000', '\uFFFD'));
    if (filter.action !== undefined) {
      // The pattern (letters and dots) leaves nothing for LIKE to interpret.
      const action = filter.action;
      q = q.where((eb) => eb.or([eb('action', '=', action), eb('action', 'like', `${action}.%`)]));
    }
    if (filter.page.after !== undefined) {
      // Newest first; the marker is "at|id" of the last entry seen (a marker never issued is still a position).
      const i = filter.page.after.indexOf('|');
      const at = i < 0 ? filter.page.after : filter.page.after.slice(0, i);
      const id = i < 0 ? '' : filter.page.after.slice(i + 1);
      q = q.where((eb) => eb.or([eb('at', '<', at), eb.and([eb('at', '=', at), eb('id', '<', id)])]));
    }
    const rows = await q
      .orderBy('at', 'desc')
      .orderBy('id', 'desc')
      .limit(filter.page.limit + 1)
      .execute();
    return toPage(rows.map(fromRow), filter.page.limit, (e) => `${e.at}|${e.id}`);
  }
}

function fromRow(r: Selectable<AuditLogTable>): AuditEntry {
  return {
    id: r.id,
    at: r.at,
    actor: r.actor,
    actorId: r.actor_id,
    credential: r.credential,
    action: r.action,
    target: r.target,
    status: r.status,
    address: r.address,
    details: JSON.parse(r.details) as Record<string, unknown>,
  };
}
