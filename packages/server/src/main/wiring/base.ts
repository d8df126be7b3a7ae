/**
 * What every area's wiring shares: the settings, the log, the database and the stores more
 * than one area reads, the catalog, the change notifier and, in cluster mode, the NATS link.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../../config/config.js';
import { OwnerAccess } from '../../domain/accounts/access.js';
import { Catalog } from '../../domain/catalog/catalog.js';
import { DomainChanges } from '../../domain/changes.js';
import { type Clock, systemClock } from '../../domain/clock.js';
import { SecretBox } from '../../lib/secret-box.js';
import type { Logger } from '../../domain/logger.js';
import type { WorkerLog } from '../../events/delivery-policy.js';
import type { ApiSocketServer } from '../../runtime/runner/runner-factory.js';
import { SqlAccountStore, SqlClusterSettingsStore } from '../../storage/account-store.js';
import { SqlAlgorithmStore, SqlEnvironmentStore } from '../../storage/algorithm-store.js';
import { SqlBuildStore } from '../../storage/build-store.js';
import { type Db, migrateToLatest, openDatabase } from '../../storage/database.js';
import { SqlVersionStore } from '../../storage/version-store.js';
import { type ClusterLink, type NodeRole, roleOf } from '../roles/index.js';
import type { CheckedSettings } from '../settings.js';
import { clusterKey, openClusterLink } from './cluster-link.js';

/** Where this node is reached, known once it listens (port 0 picks a free port). */
export interface NodeAddress {
  /** Base of the links and Git URLs the API returns. */
  publicUrl: string;
  /** Serves each pipeline runner's own API socket (api/sandbox-sockets.ts); unset: runners get none. */
  apiSockets?: ApiSocketServer;
}

export interface Base {
  config: Config;
  checked: CheckedSettings;
  log: Logger & WorkerLog;
  node: NodeAddress;
  role: NodeRole;
  db: Db;
  clock: Clock;
  startedAt: Date;
  changes: DomainChanges;
  cluster?: ClusterLink;
  /** How long cached keys and resolutions are served (undefined: the services' own few seconds). */
  cacheTtlMs?: number;
  /** Whether this node's runners have a GPU. */
  gpu: boolean;
  /** Seals credentials kept at rest (SCM OAuth secrets and tokens, broker passwords). */
  secrets: SecretBox;
  accounts: SqlAccountStore;
  algorithmStore: SqlAlgorithmStore;
  buildStore: SqlBuildStore;
  versionStore: SqlVersionStore;
  clusterSettings: SqlClusterSettingsStore;
  catalog: Catalog;
  access: OwnerAccess;
}

/**
 * How long a node alone serves a cached key or resolution: a minute, so a caller who calls
 * every few seconds never waits for a lookup, while a change that some path failed to announce
 * still applies within it.
 */
const ALONE_CACHE_TTL_MS = 60_000;

/** What the wiring is made on: opened by `openNode` on a node, made in memory for the OpenAPI document. */
export interface NodeResources {
  db: Db;
  /** Seals credentials kept at rest and signs cluster messages (`clusterKey`). */
  clusterKey: Buffer;
  cluster?: ClusterLink;
}

/** The node's data directory, its migrated database, its cluster key and, in cluster mode, NATS. */
export async function openNode(config: Config, log: Logger): Promise<NodeResources> {
  fs.mkdirSync(config.dataDir, { recursive: true });
  // The sandbox user must pass through the data dir to reach build directories (never list
  // it or read the database: those stay 0600/0700).
  fs.chmodSync(config.dataDir, 0o711);
  const db = openDatabase({ url: config.databaseUrl, sqlitePath: path.join(config.dataDir, 'algohost.sqlite') });
  await migrateToLatest(db);
  const key = clusterKey(config);
  // Cluster mode: every node reaches the others through NATS (ARCHITECTURE.md "Cluster mode").
  const cluster = config.natsUrl ? await openClusterLink(config, key, log) : undefined;
  return { db, clusterKey: key, ...(cluster ? { cluster } : {}) };
}

export async function openBase(
  config: Config,
  checked: CheckedSettings,
  log: Logger & WorkerLog,
  node: NodeAddress,
  resources: NodeResources,
): Promise<Base> {
  const { db, cluster } = resources;
  const clock = systemClock;
  const accounts = new SqlAccountStore(db);
  return {
    config,
    checked,
    log,
    node,
    role: roleOf(config),
    db,
    clock,
    startedAt: clock(),
    changes: new DomainChanges(),
    ...(cluster ? { cluster } : {}),
    // A node alone makes every change that a cached key or resolution depends on, and forgets
    // the entries a change touches at once: its cache TTL is only a bound on a forgotten case.
    // In a cluster a change made on another node reaches this one when the entry expires, so
    // the services' own few seconds apply.
    ...(cluster ? {} : { cacheTtlMs: ALONE_CACHE_TTL_MS }),
    gpu: config.workerGpu === 'auto' ? fs.existsSync('/dev/nvidia0') : config.workerGpu === 'true',
    secrets: new SecretBox(resources.clusterKey),
    accounts,
    algorithmStore: new SqlAlgorithmStore(db),
    buildStore: new SqlBuildStore(db),
    versionStore: new SqlVersionStore(db),
    clusterSettings: new SqlClusterSettingsStore(db),
    catalog: await Catalog.load(checked.catalog, new SqlEnvironmentStore(db), clock),
    access: new OwnerAccess(accounts),
  };
}
