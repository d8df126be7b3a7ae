/**
 * What a node opens before anything is built (main/wiring/base.ts): the cluster key, and in
 * cluster mode NATS and the live workers' directory. Kept apart from cluster.ts, which wires the
 * cluster's services onto the built base.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { WorkerDirectory } from '../../cluster/directory.js';
import { type NatsCluster, NatsSetupError, openNatsCluster } from '../../cluster/nats-cluster.js';
import { type Config, ConfigError } from '../../config/config.js';
import type { Logger } from '../../domain/logger.js';
import type { ClusterLink } from '../roles/index.js';

/** NATS and the live workers' presence entries; a server that cannot carry the call limits is a settings error (exit 2). */
export async function openClusterLink(config: Config, key: Buffer, log: Logger): Promise<ClusterLink> {
  const nats = await openNats(config, key, log);
  // The live workers, from their presence entries: where sync calls go, whether a GPU worker is there.
  const directory = new WorkerDirectory(nats);
  await directory.start();
  return { nats, directory };
}

async function openNats(config: Config, key: Buffer, log: Logger): Promise<NatsCluster> {
  try {
    return await openNatsCluster(
      config.natsUrl!,
      {
        ackWaitMs: config.workAckWaitSeconds * 1000,
        name: `algohost-${config.role}`,
        prefix: config.natsPrefix,
        role: config.role,
        ...(config.natsUser ? { user: config.natsUser, password: config.natsPassword! } : {}),
        allowAnonymous: config.natsAllowAnonymous,
        warn: (message) => log.warn({ nats: config.natsUrl }, message),
      },
      // Messages are signed under the cluster key (required in cluster mode, config.ts).
      { clusterKey: key, log },
    );
  } catch (err) {
    if (err instanceof NatsSetupError) throw new ConfigError(`ALGOHOST_NATS_URL: ${err.message}`);
    throw err;
  }
}

/**
 * The key sealing SCM secrets and broker credentials (lib/secret-box.ts): ALGOHOST_CLUSTER_KEY, else the
 * key in <data dir>/cluster-key, made (0600) on first start. It never goes into the database, so
 * a copy of the database alone does not reveal the credentials.
 */
export function clusterKey(config: Config): Buffer {
  if (config.clusterKey) return Buffer.from(config.clusterKey, 'base64');
  const file = path.join(config.dataDir, 'cluster-key');
  try {
    fs.writeFileSync(file, `${crypto.randomBytes(32).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const key = Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'base64');
  if (key.length !== 32) throw new ConfigError(`${file} does not hold a 32-byte base64 key; restore it or set ALGOHOST_CLUSTER_KEY`);
  return key;
}
