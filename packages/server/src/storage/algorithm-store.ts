import { sql, type Selectable } from 'kysely';
import { Errors } from '../domain/errors.js';
import type { Algorithm } from '../domain/algorithms/model.js';
import type { AlgorithmStore } from '../domain/algorithms/ports.js';
import type { EnvironmentStore } from '../domain/catalog/model.js';
import { nameKey } from '../domain/names.js';
import { type Page, type PageRequest, toPage } from '../domain/pagination.js';
import { type Db, hasNul, invalidMarker, isUniqueViolation } from './database.js';
import type { AlgorithmsTable } from './schema.js';

type Row = Selectable<AlgorithmsTable> & { owner_name: string };

export class SqlAlgorithmStore implements AlgorithmStore {
  constructor(private readonly db: Db) {}

  async insert(a: Algorithm): Promise<void> {
    try {
      await this.db.insertInto('algorithms').values(toRow(a)).execute();
    } catch (err) {
      if (isUniqueViolation(err)) {
        throw Errors.algorithmExists({ owner: a.ownerName, name: a.name });
      }
      throw err;
    }
  }

  async find(ownerId: string, name: string): Promise<Algorithm | undefined> {
    if (hasNul(name)) return undefined;
    const row = await this.select()
      .where('algorithms.owner_id', '=', ownerId)
      .where('algorithms.name_key', '=', nameKey(name))
      .executeTakeFirst();
    return row && fromRow(row);
  }

  async findById(id: string): Promise<Algorithm | undefined> {
    const row = await this.select().where('algorithms.id', '=', id).executeTakeFirst();
    return row && fromRow(row);
  }

  async listByOwner(ownerId: string, opts: { includePrivate: boolean; page: PageRequest }): Promise<Page<Algorithm>> {
    if (hasNul(opts.page.after)) throw invalidMarker();
    let q = this.select().where('algorithms.owner_id', '=', ownerId);
    if (!opts.includePrivate) q = q.where('algorithms.algorithm_callability', '=', 'public');
    if (opts.page.after !== undefined) q = q.where('algorithms.name_key', '>', opts.page.after);
    const rows = await q
      .orderBy('algorithms.name_key')
      .limit(opts.page.limit + 1)
      .execute();
    return toPage(rows.map(fromRow), opts.page.limit, (a) => nameKey(a.name));
  }

  async listAllByOwner(ownerId: string): Promise<Algorithm[]> {
    return (await this.select().where('algorithms.owner_id', '=', ownerId).execute()).map(fromRow);
  }

  async searchPublic(query: string, page: PageRequest): Promise<Page<Algorithm>> {
    if (hasNul(page.after)) throw invalidMarker();
    let q = this.select().where('algorithms.algorithm_callability', '=', 'public');
    if (query !== '') {
      // lower() on both sides: SQLite's LIKE ignores ASCII case, PostgreSQL's does not.
      const pattern = `%${query.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      const contains = (column: 'accounts.name' | 'algorithms.name' | 'algorithms.label' | 'algorithms.summary') =>
        sql<boolean>`lower(${sql.ref(column)}) like ${pattern} escape '\\'`;
      q = q.where((eb) =>
        eb.or([contains('accounts.name'), contains('algorithms.name'), contains('algorithms.label'), contains('algorithms.summary')]),
      );
    }
    if (page.after !== undefined) {
      const { createdAt, id } = newestFirstKey(page.after);
      q = q.where((eb) =>
        eb.or([
          eb('algorithms.created_at', '<', createdAt),
          eb.and([eb('algorithms.created_at', '=', createdAt), eb('algorithms.id', '<', id)]),
        ]),
      );
    }
    const rows = await q
      .orderBy('algorithms.created_at', 'desc')
      .orderBy('algorithms.id', 'desc')
      .limit(page.limit + 1)
      .execute();
    return toPage(rows.map(fromRow), page.limit, (a) => `${a.createdAt} ${a.id}`);
  }

  async update(a: Algorithm): Promise<void> {
    const { id, ...rest } = toRow(a);
    await this.db.updateTable('algorithms').set(rest).where('id', '=', id).execute();
  }

  async delete(id: string): Promise<void> {
    await this.db.deleteFrom('algorithms').where('id', '=', id).execute();
  }

  private select() {
    return this.db
      .selectFrom('algorithms')
      .innerJoin('accounts', 'accounts.id', 'algorithms.owner_id')
      .selectAll('algorithms')
      .select('accounts.name as owner_name');
  }
}

/** The marker of a newest-first page: the creation time and id of its last algorithm. */
function newestFirstKey(key: string): { createdAt: string; id: string } {
  const m = /^(\S+) ([0-9a-f-]{36})$/.exec(key);
  // A marker never issued still names a position (domain/pagination.ts): what was created before it.
  if (!m) return { createdAt: key, id: '' };
  return { createdAt: m[1]!, id: m[2]! };
}

function toRow(a: Algorithm): AlgorithmsTable {
  return {
    id: a.id,
    owner_id: a.ownerId,
    name: a.name,
    name_key: nameKey(a.name),
    label: a.details.label,
    summary: a.details.summary,
    tagline: a.details.tagline,
    algorithm_callability: a.settings.algorithmCallability,
    source_visibility: a.settings.sourceVisibility,
    license: a.settings.license,
    royalty_microcredits: a.settings.royaltyMicrocredits,
    network_access: a.settings.networkAccess,
    pipeline_enabled: a.settings.pipelineEnabled ? 1 : 0,
    insights_enabled: a.settings.insightsEnabled ? 1 : 0,
    environment_name: a.settings.environmentName,
    created_at: a.createdAt,
    updated_at: a.updatedAt,
  };
}

function fromRow(r: Row): Algorithm {
  return {
    id: r.id,
    ownerId: r.owner_id,
    ownerName: r.owner_name,
    name: r.name,
    details: { label: r.label, summary: r.summary, tagline: r.tagline },
    settings: {
      algorithmCallability: r.algorithm_callability as Algorithm['settings']['algorithmCallability'],
      sourceVisibility: r.source_visibility as Algorithm['settings']['sourceVisibility'],
      license: r.license as Algorithm['settings']['license'],
      royaltyMicrocredits: Number(r.royalty_microcredits),
      networkAccess: r.network_access as Algorithm['settings']['networkAccess'],
      pipelineEnabled: Number(r.pipeline_enabled) === 1,
      insightsEnabled: Number(r.insights_enabled) === 1,
      environmentName: r.environment_name,
    },
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

export class SqlEnvironmentStore implements EnvironmentStore {
  constructor(private readonly db: Db) {}

  async ensure(names: string[], newId: () => string, now: string): Promise<Map<string, { id: string; createdAt: string }>> {
    const existing = await this.db.selectFrom('environments').selectAll().execute();
    const known = new Set(existing.map((r) => r.name));
    for (const name of names) {
      if (known.has(name)) continue;
      try {
        await this.db.insertInto('environments').values({ name, id: newId(), created_at: now }).execute();
      } catch (err) {
        // Another API node registered it at the same moment: its id wins.
        if (!isUniqueViolation(err)) throw err;
      }
    }
    const rows = await this.db.selectFrom('environments').selectAll().execute();
    return new Map(rows.map((r) => [r.name, { id: r.id, createdAt: r.created_at }]));
  }
}
