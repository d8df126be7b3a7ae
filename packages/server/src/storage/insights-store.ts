import type { Db } from './database.js';
import { isUniqueViolation } from './database.js';
import { Errors } from '../domain/errors.js';
import type { InsightsConnection, InsightsStore } from '../domain/insights/insights-service.js';

/** The one Insights connection: a single row in slot 1, so a second insert is a unique violation. */
export class SqlInsightsStore implements InsightsStore {
  constructor(private readonly db: Db) {}

  async get(): Promise<InsightsConnection | undefined> {
    const row = await this.db.selectFrom('insights_connection').selectAll().where('slot', '=', 1).executeTakeFirst();
    return row && { clusterId: row.cluster_id, topic: row.topic, createdBy: row.created_by, createdAt: row.created_at };
  }

  async insert(c: InsightsConnection): Promise<void> {
    try {
      await this.db
        .insertInto('insights_connection')
        .values({ slot: 1, cluster_id: c.clusterId, topic: c.topic, created_by: c.createdBy, created_at: c.createdAt })
        .execute();
    } catch (err) {
      if (isUniqueViolation(err)) throw Errors.insightsConnectionExists({ cluster: c.clusterId, topic: c.topic });
      throw err;
    }
  }

  async delete(): Promise<boolean> {
    const result = await this.db.deleteFrom('insights_connection').where('slot', '=', 1).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
}
