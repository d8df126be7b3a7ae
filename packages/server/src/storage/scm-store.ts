import type { Selectable } from 'kysely';
import type { ExternalSource, OAuthState, ScmAuthorization, ScmConfig, SourceDelivery } from '../domain/scm/model.js';
import type { ScmStore } from '../domain/scm/ports.js';
import { type Db, hasNul, isUniqueViolation } from './database.js';
import type { AlgorithmSourcesTable, ScmAuthorizationsTable, ScmConfigsTable } from './schema.js';

export class SqlScmStore implements ScmStore {
  constructor(private readonly db: Db) {}

  async listConfigs(): Promise<ScmConfig[]> {
    const rows = await this.db.selectFrom('scm_configs').selectAll().orderBy('created_at').orderBy('id').execute();
    return rows.map(configFromRow);
  }

  async findConfig(id: string): Promise<ScmConfig | undefined> {
    if (hasNul(id)) return undefined;
    const row = await this.db.selectFrom('scm_configs').selectAll().where('id', '=', id).executeTakeFirst();
    return row && configFromRow(row);
  }

  async insertConfig(c: ScmConfig): Promise<void> {
    await this.db.transaction().execute(async (tx) => {
      if (c.isDefault) await tx.updateTable('scm_configs').set({ is_default: 0 }).execute();
      await tx.insertInto('scm_configs').values(configToRow(c)).execute();
    });
  }

  async updateConfig(c: ScmConfig): Promise<void> {
    await this.db.transaction().execute(async (tx) => {
      if (c.isDefault) await tx.updateTable('scm_configs').set({ is_default: 0 }).where('id', '!=', c.id).execute();
      await tx.updateTable('scm_configs').set(configToRow(c)).where('id', '=', c.id).execute();
    });
  }

  async deleteConfig(id: string): Promise<boolean> {
    const res = await this.db.deleteFrom('scm_configs').where('id', '=', id).executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  }

  async countSources(configId: string): Promise<number> {
    const row = await this.db
      .selectFrom('algorithm_sources')
      .select((eb) => eb.fn.countAll<string | number>().as('n'))
      .where('config_id', '=', configId)
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  async findAuthorization(accountId: string, configId: string): Promise<ScmAuthorization | undefined> {
    const row = await this.db
      .selectFrom('scm_authorizations')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('config_id', '=', configId)
      .executeTakeFirst();
    return row && authorizationFromRow(row);
  }

  async saveAuthorization(a: ScmAuthorization): Promise<void> {
    const row = {
      account_id: a.accountId,
      config_id: a.configId,
      access_token: a.accessToken,
      refresh_token: a.refreshToken,
      expires_at: a.expiresAt,
      scm_username: a.scmUsername,
      created_at: a.createdAt,
      updated_at: a.updatedAt,
    };
    await this.db
      .insertInto('scm_authorizations')
      .values(row)
      .onConflict((oc) =>
        oc.columns(['account_id', 'config_id']).doUpdateSet({
          access_token: row.access_token,
          refresh_token: row.refresh_token,
          expires_at: row.expires_at,
          scm_username: row.scm_username,
          updated_at: row.updated_at,
        }),
      )
      .execute();
  }

  async deleteAuthorization(accountId: string, configId: string): Promise<boolean> {
    const res = await this.db
      .deleteFrom('scm_authorizations')
      .where('account_id', '=', accountId)
      .where('config_id', '=', configId)
      .executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  }

  async insertOAuthState(s: OAuthState): Promise<void> {
    await this.db
      .insertInto('scm_oauth_states')
      .values({
        state_hash: s.stateHash,
        browser_hash: s.browserHash,
        account_id: s.accountId,
        config_id: s.configId,
        code_verifier: s.codeVerifier,
        return_to: s.returnTo,
        expires_at: s.expiresAt,
      })
      .execute();
  }

  async takeOAuthState(stateHash: string): Promise<OAuthState | undefined> {
    // Deleting is what claims it: of two callbacks with one state, only one deletes the row.
    const row = await this.db.selectFrom('scm_oauth_states').selectAll().where('state_hash', '=', stateHash).executeTakeFirst();
    if (!row) return undefined;
    const res = await this.db.deleteFrom('scm_oauth_states').where('state_hash', '=', stateHash).executeTakeFirst();
    if (Number(res.numDeletedRows) === 0) return undefined;
    return {
      stateHash: row.state_hash,
      browserHash: row.browser_hash,
      accountId: row.account_id,
      configId: row.config_id,
      codeVerifier: row.code_verifier,
      returnTo: row.return_to,
      expiresAt: row.expires_at,
    };
  }

  async deleteExpiredOAuthStates(now: string): Promise<void> {
    await this.db.deleteFrom('scm_oauth_states').where('expires_at', '<', now).execute();
  }

  async insertSource(s: ExternalSource): Promise<void> {
    await this.db
      .insertInto('algorithm_sources')
      .values({
        algorithm_id: s.algorithmId,
        config_id: s.configId,
        repository_owner: s.repositoryOwner,
        repository_name: s.repositoryName,
        https_url: s.httpsUrl,
        ssh_url: s.sshUrl,
        web_url: s.webUrl,
        webhook_id: s.webhookId,
        webhook_secret: s.webhookSecret,
        account_id: s.accountId,
        last_delivery: s.lastDelivery && JSON.stringify(s.lastDelivery),
        created_at: s.createdAt,
      })
      .execute();
  }

  async findSource(algorithmId: string): Promise<ExternalSource | undefined> {
    if (hasNul(algorithmId)) return undefined;
    const row = await this.db.selectFrom('algorithm_sources').selectAll().where('algorithm_id', '=', algorithmId).executeTakeFirst();
    return row && sourceFromRow(row);
  }

  async recordDelivery(algorithmId: string, delivery: SourceDelivery): Promise<void> {
    await this.db
      .updateTable('algorithm_sources')
      .set({ last_delivery: JSON.stringify(delivery) })
      .where('algorithm_id', '=', algorithmId)
      .execute();
  }

  async rememberDelivery(algorithmId: string, deliveryId: string, at: string, forgetBefore: string, keepAtMost: number): Promise<boolean> {
    await this.db
      .deleteFrom('scm_webhook_deliveries')
      .where('algorithm_id', '=', algorithmId)
      .where('received_at', '<', forgetBefore)
      .execute();
    try {
      await this.db
        .insertInto('scm_webhook_deliveries')
        .values({ algorithm_id: algorithmId, delivery_id: deliveryId, received_at: at })
        .execute();
    } catch (err) {
      if (isUniqueViolation(err)) return false;
      throw err;
    }
    // Delivery ids are not signed: anyone holding one signed delivery can send it under any
    // number of ids, and each must not cost a row for the whole window.
    await this.db
      .deleteFrom('scm_webhook_deliveries')
      .where('algorithm_id', '=', algorithmId)
      .where('delivery_id', 'not in', (qb) =>
        qb
          .selectFrom('scm_webhook_deliveries')
          .select('delivery_id')
          .where('algorithm_id', '=', algorithmId)
          .orderBy('received_at', 'desc')
          .orderBy('delivery_id')
          .limit(keepAtMost),
      )
      .execute();
    return true;
  }
}

function configToRow(c: ScmConfig): Selectable<ScmConfigsTable> {
  return {
    id: c.id,
    name: c.name,
    provider: c.provider,
    is_default: c.isDefault ? 1 : 0,
    enabled: c.enabled ? 1 : 0,
    oauth_client_id: c.oauthClientId,
    oauth_client_secret: c.oauthClientSecret,
    web_url: c.urls.web,
    api_url: c.urls.api,
    ssh_url: c.urls.ssh,
    created_at: c.createdAt,
    updated_at: c.updatedAt,
  };
}

function configFromRow(r: Selectable<ScmConfigsTable>): ScmConfig {
  return {
    id: r.id,
    name: r.name,
    provider: r.provider,
    isDefault: Number(r.is_default) === 1,
    enabled: Number(r.enabled) === 1,
    oauthClientId: r.oauth_client_id,
    oauthClientSecret: r.oauth_client_secret,
    urls: { web: r.web_url, api: r.api_url, ssh: r.ssh_url },
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

function authorizationFromRow(r: Selectable<ScmAuthorizationsTable>): ScmAuthorization {
  return {
    accountId: r.account_id,
    configId: r.config_id,
    accessToken: r.access_token,
    refreshToken: r.refresh_token,
    expiresAt: r.expires_at,
    scmUsername: r.scm_username,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

function sourceFromRow(r: Selectable<AlgorithmSourcesTable>): ExternalSource {
  return {
    algorithmId: r.algorithm_id,
    configId: r.config_id,
    repositoryOwner: r.repository_owner,
    repositoryName: r.repository_name,
    httpsUrl: r.https_url,
    sshUrl: r.ssh_url,
    webUrl: r.web_url,
    webhookId: r.webhook_id,
    webhookSecret: r.webhook_secret,
    accountId: r.account_id,
    lastDelivery: r.last_delivery ? (JSON.parse(r.last_delivery) as SourceDelivery) : null,
    createdAt: r.created_at,
  };
}
