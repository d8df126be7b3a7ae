/**
 * Leases in the metadata database: the node that holds a name's lease runs that once-per-cluster
 * job until the lease expires. Taking or renewing is one conditional upsert, so two nodes never
 * both hold it; a node that dies simply stops renewing and another takes over after the expiry.
 */
import type { Db } from './database.js';

export class SqlLeaseStore {
  constructor(private readonly db: Db) {}

  /** Takes or renews `name` for `holder` until `expiresAt` when it is free, expired or already ours. */
  async acquire(name: string, holder: string, now: string, expiresAt: string): Promise<boolean> {
    const result = await this.db
      .insertInto('leases')
      .values({ name, holder, expires_at: expiresAt })
      .onConflict((oc) =>
        oc
          .column('name')
          .doUpdateSet({ holder, expires_at: expiresAt })
          .where((eb) => eb.or([eb('leases.holder', '=', holder), eb('leases.expires_at', '<', now)])),
      )
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
  }

  /** Gives the lease up at once (a clean stop), so another node need not wait for the expiry. */
  async release(name: string, holder: string): Promise<void> {
    await this.db.deleteFrom('leases').where('name', '=', name).where('holder', '=', holder).execute();
  }
}
