/**
 * The SCM provider contract against a real Gitea 1.26 (started by scripts/with-services.sh),
 * with algohost on PostgreSQL when the run has one (the fakes' runs use SQLite): both stores
 * pass the whole flow.
 */
import { giteaForge, giteaSkipReason } from '../support/gitea-forge.js';
import { scmProviderContract } from '../support/scm-contract.js';
import { POSTGRES_URL } from '../support/server.js';

scmProviderContract('Gitea (real)', async () => giteaForge(), { skip: giteaSkipReason, database: POSTGRES_URL ? 'postgres' : 'sqlite' });
