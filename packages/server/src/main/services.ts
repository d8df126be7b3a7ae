/**
 * The composition root: the only code that turns configuration into adapters and wires them
 * into domain services. Tests build the same graph with their own config.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config/config.js';
import { systemClock } from '../domain/clock.js';
import { OwnerAccess } from '../domain/accounts/access.js';
import { KeyService } from '../domain/accounts/key-service.js';
import { CAPABILITIES, type Account } from '../domain/accounts/model.js';
import { OrganizationService } from '../domain/accounts/organization-service.js';
import { UserService } from '../domain/accounts/user-service.js';
import { AlgorithmService } from '../domain/algorithms/algorithm-service.js';
import { Catalog } from '../domain/catalog/catalog.js';
import { GitRepositoryHost } from '../git/repository-host.js';
import type { ApiServices } from '../api/context.js';
import { SqlAccountStore, SqlClusterSettingsStore, SqlKeyStore } from '../storage/account-store.js';
import { SqlAlgorithmStore, SqlEnvironmentStore } from '../storage/algorithm-store.js';
import { readCatalog } from '../storage/catalog-files.js';
import { type Db, migrateToLatest, openDatabase } from '../storage/database.js';

export interface Services extends ApiServices {
  db: Db;
  accounts: SqlAccountStore;
  repositories: GitRepositoryHost;
}

export async function buildServices(config: Config): Promise<Services> {
  fs.mkdirSync(config.dataDir, { recursive: true });
  const db = openDatabase({ url: config.databaseUrl, sqlitePath: path.join(config.dataDir, 'algohost.sqlite') });
  await migrateToLatest(db);

  const clock = systemClock;
  const accounts = new SqlAccountStore(db);
  const repositories = new GitRepositoryHost(path.join(config.dataDir, 'repositories'), config.gitBinary);
  const catalog = await Catalog.load(readCatalog(), new SqlEnvironmentStore(db), clock);
  const access = new OwnerAccess(accounts);
  const algorithms = new AlgorithmService(
    new SqlAlgorithmStore(db),
    accounts,
    access,
    catalog,
    repositories,
    { environmentName: config.defaultEnvironment, networkAccess: config.defaultNetworkAccess },
    clock,
  );
  const cleanup = (account: Account) => algorithms.deleteAllOf(account);
  const keys = new KeyService(accounts, new SqlKeyStore(db), new SqlClusterSettingsStore(db), clock, config.sessionTtlSeconds);

  if (!catalog.environmentByName(config.defaultEnvironment)) {
    throw new Error(`ALGOHOST_DEFAULT_ENVIRONMENT "${config.defaultEnvironment}" is not an environment of the catalog`);
  }

  return {
    db,
    accounts,
    repositories,
    users: new UserService(accounts, clock, cleanup),
    organizations: new OrganizationService(accounts, clock, cleanup),
    keys,
    algorithms,
    catalog,
    links: { publicUrl: config.publicUrl },
  };
}

export interface BootstrapResult {
  /** The generated admin key, when this start created it; undefined otherwise. */
  generatedKey?: string;
  keyFile?: string;
}

/**
 * First start: create the `admin` account with an admin key (ALGOHOST_ADMIN_KEY, or a
 * generated one written to <data dir>/initial-admin-key, mode 0600). Later starts keep the
 * stored state; an ALGOHOST_ADMIN_KEY not yet stored is added, so operators can recover access.
 */
export async function bootstrapAdmin(s: Services, config: Config): Promise<BootstrapResult> {
  const existing = await s.accounts.findByName('admin');
  const admin = existing ?? (await s.users.createUnchecked({ username: 'admin', fullname: 'Cluster administrator' }, true));
  if (config.adminKey) {
    if (!(await s.keys.hasKey(config.adminKey)))
      await s.keys.issue(admin, 'admin', [...CAPABILITIES], 'ALGOHOST_ADMIN_KEY', config.adminKey);
    return {};
  }
  if (existing) return {};
  const keyFile = path.join(config.dataDir, 'initial-admin-key');
  const { secret } = await s.keys.issue(admin, 'admin', [...CAPABILITIES], 'initial admin key');
  fs.writeFileSync(keyFile, `${secret}\n`, { mode: 0o600 });
  return { generatedKey: secret, keyFile };
}
