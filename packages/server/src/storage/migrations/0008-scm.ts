import type { Kysely } from 'kysely';

/**
 * External source control: configurations (cluster admins), each user's OAuth tokens, OAuth
 * flows in progress, and the provider repository of each externally hosted algorithm. Secrets
 * (client secrets, tokens, PKCE verifiers, webhook secrets) are stored sealed with the cluster key.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('scm_configs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('is_default', 'integer', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addColumn('oauth_client_id', 'text', (c) => c.notNull())
    .addColumn('oauth_client_secret', 'text', (c) => c.notNull())
    .addColumn('web_url', 'text', (c) => c.notNull())
    .addColumn('api_url', 'text', (c) => c.notNull())
    .addColumn('ssh_url', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('scm_authorizations')
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('config_id', 'text', (c) => c.notNull().references('scm_configs.id').onDelete('cascade'))
    .addColumn('access_token', 'text', (c) => c.notNull())
    .addColumn('refresh_token', 'text')
    .addColumn('expires_at', 'text')
    .addColumn('scm_username', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('scm_authorizations_pk', ['account_id', 'config_id'])
    .execute();

  await db.schema
    .createTable('scm_oauth_states')
    .addColumn('state_hash', 'text', (c) => c.primaryKey())
    .addColumn('browser_hash', 'text', (c) => c.notNull())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('config_id', 'text', (c) => c.notNull().references('scm_configs.id').onDelete('cascade'))
    .addColumn('code_verifier', 'text')
    .addColumn('return_to', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('algorithm_sources')
    .addColumn('algorithm_id', 'text', (c) => c.primaryKey().references('algorithms.id').onDelete('cascade'))
    // No cascade: a configuration that backs algorithms cannot be deleted (disable it instead).
    .addColumn('config_id', 'text', (c) => c.notNull().references('scm_configs.id'))
    .addColumn('repository_owner', 'text', (c) => c.notNull())
    .addColumn('repository_name', 'text', (c) => c.notNull())
    .addColumn('https_url', 'text', (c) => c.notNull())
    .addColumn('ssh_url', 'text', (c) => c.notNull())
    .addColumn('web_url', 'text', (c) => c.notNull())
    .addColumn('webhook_id', 'text', (c) => c.notNull())
    .addColumn('webhook_secret', 'text', (c) => c.notNull())
    .addColumn('account_id', 'text', (c) => c.references('accounts.id').onDelete('set null'))
    .addColumn('last_delivery', 'text') // JSON
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('algorithm_sources_config').on('algorithm_sources').column('config_id').execute();

  await db.schema
    .createTable('scm_webhook_deliveries')
    .addColumn('algorithm_id', 'text', (c) => c.notNull().references('algorithms.id').onDelete('cascade'))
    .addColumn('delivery_id', 'text', (c) => c.notNull())
    .addColumn('received_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('scm_webhook_deliveries_pk', ['algorithm_id', 'delivery_id'])
    .execute();
}
