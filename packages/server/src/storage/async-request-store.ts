import type { AsyncRequest, AsyncRequestStore } from '../domain/calls/ports.js';
import type { CallEnvelope } from '../domain/calls/request.js';
import type { Db } from './database.js';

export class SqlAsyncRequestStore implements AsyncRequestStore {
  constructor(private readonly db: Db) {}

  async insert(r: AsyncRequest): Promise<void> {
    await this.db
      .insertInto('async_requests')
      .values({
        id: r.id,
        account_id: r.accountId,
        status: r.status,
        envelope: r.envelope && JSON.stringify(r.envelope),
        created_at: r.createdAt,
        expires_at: r.expiresAt,
      })
      .execute();
  }

  async complete(id: string, envelope: CallEnvelope, expiresAt: string): Promise<boolean> {
    const result = await this.db
      .updateTable('async_requests')
      .set({ status: 'completed', envelope: JSON.stringify(envelope), expires_at: expiresAt })
      .where('id', '=', id)
      .where('status', '=', 'running')
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async get(id: string): Promise<AsyncRequest | undefined> {
    const r = await this.db.selectFrom('async_requests').selectAll().where('id', '=', id).executeTakeFirst();
    if (!r) return undefined;
    return {
      id: r.id,
      accountId: r.account_id,
      status: r.status === 'completed' ? 'completed' : 'running',
      envelope: r.envelope ? storedEnvelope(r.envelope) : null,
      createdAt: r.created_at,
      expiresAt: r.expires_at,
    };
  }

  async completeAllRunning(envelope: CallEnvelope, expiresAt: string): Promise<number> {
    const result = await this.db
      .updateTable('async_requests')
      .set({ status: 'completed', envelope: JSON.stringify(envelope), expires_at: expiresAt })
      .where('status', '=', 'running')
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  async deleteExpired(now: string): Promise<number> {
    const result = await this.db.deleteFrom('async_requests').where('expires_at', '<', now).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}

/**
 * An envelope as this store wrote it (JSON text, on SQLite and PostgreSQL alike): a call's
 * metadata with its error, or with its result (absent when the algorithm returned nothing).
 * Anything else in the column is refused, not passed on as an answer.
 */
function storedEnvelope(text: string): CallEnvelope {
  const value = JSON.parse(text) as { metadata?: unknown; error?: unknown } | null;
  const isObject = (v: unknown) => typeof v === 'object' && v !== null;
  if (!isObject(value) || !isObject(value!.metadata) || ('error' in value! && !isObject(value!.error))) {
    throw new Error('an async request holds a stored envelope that is not a call envelope');
  }
  return value as CallEnvelope;
}
