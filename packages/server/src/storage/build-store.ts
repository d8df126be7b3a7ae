import fs from 'node:fs/promises';
import path from 'node:path';
import { type Selectable, sql } from 'kysely';
import type { Build } from '../domain/builds/model.js';
import type { BuildLogStore, BuildStore } from '../domain/builds/ports.js';
import { type Page, type PageRequest, toPage } from '../domain/pagination.js';
import type { Db } from './database.js';
import type { BuildsTable } from './schema.js';

export class SqlBuildStore implements BuildStore {
  constructor(private readonly db: Db) {}

  async insert(b: Build): Promise<void> {
    await this.db
      .insertInto('builds')
      .values({
        id: b.id,
        algorithm_id: b.algorithmId,
        commit_sha: b.commitSha,
        environment_name: b.environmentName,
        status: b.status,
        trigger: b.trigger,
        attempt: b.attempt,
        error: b.error,
        artifact: b.artifact,
        created_at: b.createdAt,
        started_at: b.startedAt,
        finished_at: b.finishedAt,
      })
      .execute();
  }

  async get(id: string): Promise<Build | undefined> {
    const row = await this.db.selectFrom('builds').selectAll().where('id', '=', id).executeTakeFirst();
    return row && fromRow(row);
  }

  async listForAlgorithm(algorithmId: string, page: PageRequest): Promise<Page<Build>> {
    // Sort key: creation time then id, newest first; the marker carries both.
    let q = this.db.selectFrom('builds').selectAll().where('algorithm_id', '=', algorithmId);
    if (page.after !== undefined) {
      const [at, id] = splitKey(page.after);
      q = q.where((eb) => eb.or([eb('created_at', '<', at), eb.and([eb('created_at', '=', at), eb('id', '<', id)])]));
    }
    const rows = await q
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(page.limit + 1)
      .execute();
    return toPage(rows.map(fromRow), page.limit, (b) => `${b.createdAt}|${b.id}`);
  }

  async latestSucceeded(algorithmId: string): Promise<Build | undefined> {
    const row = await this.db
      .selectFrom('builds')
      .selectAll()
      .where('algorithm_id', '=', algorithmId)
      .where('status', '=', 'succeeded')
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .executeTakeFirst();
    return row && fromRow(row);
  }

  async findSucceeded(algorithmId: string, commitSha: string): Promise<Build | undefined> {
    const row = await this.db
      .selectFrom('builds')
      .selectAll()
      .where('algorithm_id', '=', algorithmId)
      .where('commit_sha', '=', commitSha)
      .where('status', '=', 'succeeded')
      .orderBy('created_at', 'desc')
      .executeTakeFirst();
    return row && fromRow(row);
  }

  async findSucceededArtifact(algorithmId: string, artifact: string): Promise<Build | undefined> {
    const row = await this.db
      .selectFrom('builds')
      .selectAll()
      .where('algorithm_id', '=', algorithmId)
      .where('artifact', '=', artifact)
      .where('status', '=', 'succeeded')
      .orderBy('created_at', 'desc')
      .executeTakeFirst();
    return row && fromRow(row);
  }

  async queuedAccounts(): Promise<{ ownerId: string; oldestAt: string }[]> {
    const rows = await this.db
      .selectFrom('builds')
      .leftJoin('algorithms', 'algorithms.id', 'builds.algorithm_id')
      .select((eb) => [eb.fn.coalesce('algorithms.owner_id', sql.lit('')).as('owner_id'), eb.fn.min('builds.created_at').as('oldest_at')])
      .where('builds.status', '=', 'queued')
      .groupBy('algorithms.owner_id')
      .execute();
    return rows.map((r) => ({ ownerId: String(r.owner_id), oldestAt: String(r.oldest_at) }));
  }

  async nextQueued(ownerId: string): Promise<Build | undefined> {
    let q = this.db
      .selectFrom('builds')
      .leftJoin('algorithms', 'algorithms.id', 'builds.algorithm_id')
      .selectAll('builds')
      .where('builds.status', '=', 'queued');
    q = ownerId ? q.where('algorithms.owner_id', '=', ownerId) : q.where('algorithms.id', 'is', null);
    const row = await q
      // Only the oldest queued build of an algorithm, and only while none of it is in progress.
      .where((eb) =>
        eb.not(
          eb.exists(
            eb
              .selectFrom('builds as other')
              .select('other.id')
              .whereRef('other.algorithm_id', '=', 'builds.algorithm_id')
              .where((e) =>
                e.or([
                  e('other.status', '=', 'in-progress'),
                  e.and([
                    e('other.status', '=', 'queued'),
                    e.or([
                      e('other.created_at', '<', e.ref('builds.created_at')),
                      e.and([e('other.created_at', '=', e.ref('builds.created_at')), e('other.id', '<', e.ref('builds.id'))]),
                    ]),
                  ]),
                ]),
              ),
          ),
        ),
      )
      .orderBy('builds.created_at')
      .orderBy('builds.id')
      .limit(1)
      .executeTakeFirst();
    return row && fromRow(row);
  }

  async listInProgress(): Promise<Build[]> {
    return (await this.db.selectFrom('builds').selectAll().where('status', '=', 'in-progress').execute()).map(fromRow);
  }

  async countActive(): Promise<{ queued: number; running: number }> {
    const rows = await this.db
      .selectFrom('builds')
      .select((eb) => ['status', eb.fn.countAll().as('n')])
      .where('status', 'in', ['queued', 'in-progress'])
      .groupBy('status')
      .execute();
    const count = (status: string) => Number(rows.find((r) => r.status === status)?.n ?? 0);
    return { queued: count('queued'), running: count('in-progress') };
  }

  async claim(id: string, startedAt: string): Promise<boolean> {
    const build = await this.get(id);
    if (!build) return false;
    const res = await this.db
      .updateTable('builds')
      .set((eb) => ({ status: 'in-progress', started_at: startedAt, attempt: eb('attempt', '+', 1) }))
      .where('id', '=', id)
      .where('status', '=', 'queued')
      .where((eb) =>
        eb.not(
          eb.exists(
            eb
              .selectFrom('builds as other')
              .select('other.id')
              .where('other.algorithm_id', '=', build.algorithmId)
              .where('other.status', '=', 'in-progress'),
          ),
        ),
      )
      // An earlier queued build of the same algorithm goes first (push order).
      .where((eb) =>
        eb.not(
          eb.exists(
            eb
              .selectFrom('builds as earlier')
              .select('earlier.id')
              .where('earlier.algorithm_id', '=', build.algorithmId)
              .where('earlier.status', '=', 'queued')
              .where((e) =>
                e.or([
                  e('earlier.created_at', '<', build.createdAt),
                  e.and([e('earlier.created_at', '=', build.createdAt), e('earlier.id', '<', build.id)]),
                ]),
              ),
          ),
        ),
      )
      .executeTakeFirst();
    return Number(res.numUpdatedRows) > 0;
  }

  async finish(
    id: string,
    r: { status: 'succeeded' | 'failed'; error: string | null; artifact: string | null; finishedAt: string },
  ): Promise<void> {
    await this.db
      .updateTable('builds')
      .set({ status: r.status, error: r.error, artifact: r.artifact, finished_at: r.finishedAt })
      .where('id', '=', id)
      .execute();
  }

  async requeue(id: string): Promise<void> {
    await this.db
      .updateTable('builds')
      .set({ status: 'queued', started_at: null })
      .where('id', '=', id)
      .where('status', '=', 'in-progress')
      .execute();
  }
}

/** `createdAt|id`; a key without `|` (from a marker never issued) is a time with the lowest id. */
function splitKey(key: string): [string, string] {
  const i = key.indexOf('|');
  return i < 0 ? [key, ''] : [key.slice(0, i), key.slice(i + 1)];
}

function fromRow(r: Selectable<BuildsTable>): Build {
  return {
    id: r.id,
    algorithmId: r.algorithm_id,
    commitSha: r.commit_sha,
    environmentName: r.environment_name,
    status: r.status,
    trigger: r.trigger as Build['trigger'],
    attempt: Number(r.attempt),
    error: r.error,
    artifact: r.artifact,
    createdAt: r.created_at,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
  };
}

/** Build logs as files, one per build, appended as the build runs. */
export class FileBuildLogStore implements BuildLogStore {
  constructor(private readonly dir: string) {}

  async append(buildId: string, text: string): Promise<void> {
    await fs.mkdir(this.dir, { recursive: true });
    await fs.appendFile(this.file(buildId), text);
  }

  async read(buildId: string): Promise<string | undefined> {
    try {
      return await fs.readFile(this.file(buildId), 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }

  private file(buildId: string): string {
    if (!/^[0-9a-f-]{36}$/.test(buildId)) throw new Error(`not a build id: ${buildId}`);
    return path.join(this.dir, `${buildId}.log`);
  }
}
