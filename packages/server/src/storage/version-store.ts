import type { Selectable } from 'kysely';
import { Errors } from '../domain/errors.js';
import { type Page, type PageRequest, toPage } from '../domain/pagination.js';
import type { Version } from '../domain/versions/model.js';
import type { VersionStore } from '../domain/versions/ports.js';
import { sortKeyOf } from '../domain/versions/semver.js';
import { type Db, hasNul, invalidMarker, isUniqueViolation } from './database.js';
import type { VersionsTable } from './schema.js';

export class SqlVersionStore implements VersionStore {
  constructor(private readonly db: Db) {}

  async insert(v: Version): Promise<void> {
    try {
      await this.db
        .insertInto('versions')
        .values({
          id: v.id,
          algorithm_id: v.algorithmId,
          build_id: v.buildId,
          commit_sha: v.commitSha,
          environment_name: v.environmentName,
          artifact: v.artifact,
          semantic_version: v.semanticVersion,
          major: v.major,
          minor: v.minor,
          patch: v.patch,
          sort_key: sortKeyOf(v),
          algorithm_callability: v.algorithmCallability,
          insights_enabled: v.insightsEnabled ? 1 : 0,
          release_notes: v.releaseNotes,
          sample_input: v.sampleInput,
          sample_output: v.sampleOutput,
          request_fingerprint: v.requestFingerprint,
          published_by: v.publishedBy,
          published_at: v.publishedAt,
        })
        .execute();
    } catch (err) {
      if (isUniqueViolation(err)) {
        throw Errors.versionPublishRace({ version: v.semanticVersion, buildId: v.buildId });
      }
      throw err;
    }
  }

  async listAll(algorithmId: string): Promise<Version[]> {
    const rows = await this.db
      .selectFrom('versions')
      .selectAll()
      .where('algorithm_id', '=', algorithmId)
      .orderBy('sort_key', 'desc')
      .execute();
    return rows.map(fromRow);
  }

  async list(algorithmId: string, opts: { callability?: 'private' | 'public'; page: PageRequest }): Promise<Page<Version>> {
    let q = this.db.selectFrom('versions').selectAll().where('algorithm_id', '=', algorithmId);
    if (opts.callability) q = q.where('algorithm_callability', '=', opts.callability);
    if (opts.page.after !== undefined) {
      if (hasNul(opts.page.after)) throw invalidMarker();
      q = q.where('sort_key', '<', opts.page.after);
    }
    const rows = await q
      .orderBy('sort_key', 'desc')
      .limit(opts.page.limit + 1)
      .execute();
    return toPage(rows.map(fromRow), opts.page.limit, (v) => sortKeyOf(v));
  }

  async findByBuild(algorithmId: string, buildId: string): Promise<Version | undefined> {
    const row = await this.db
      .selectFrom('versions')
      .selectAll()
      .where('algorithm_id', '=', algorithmId)
      .where('build_id', '=', buildId)
      .executeTakeFirst();
    return row && fromRow(row);
  }

  async findByCommit(algorithmId: string, commitSha: string): Promise<Version | undefined> {
    const row = await this.db
      .selectFrom('versions')
      .selectAll()
      .where('algorithm_id', '=', algorithmId)
      .where('commit_sha', '=', commitSha)
      .orderBy('sort_key', 'desc')
      .executeTakeFirst();
    return row && fromRow(row);
  }

  async latest(algorithmId: string): Promise<Version | undefined> {
    const row = await this.db
      .selectFrom('versions')
      .selectAll()
      .where('algorithm_id', '=', algorithmId)
      .orderBy('sort_key', 'desc')
      .executeTakeFirst();
    return row && fromRow(row);
  }
}

function fromRow(r: Selectable<VersionsTable>): Version {
  return {
    id: r.id,
    algorithmId: r.algorithm_id,
    buildId: r.build_id,
    commitSha: r.commit_sha,
    environmentName: r.environment_name,
    artifact: r.artifact,
    semanticVersion: r.semantic_version,
    major: Number(r.major),
    minor: Number(r.minor),
    patch: Number(r.patch),
    algorithmCallability: r.algorithm_callability === 'public' ? 'public' : 'private',
    insightsEnabled: Number(r.insights_enabled) === 1,
    releaseNotes: r.release_notes,
    sampleInput: r.sample_input,
    sampleOutput: r.sample_output,
    requestFingerprint: r.request_fingerprint,
    publishedBy: r.published_by,
    publishedAt: r.published_at,
  };
}
