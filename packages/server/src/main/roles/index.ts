import type { Config } from '../../config/config.js';
import { allRole } from './all.js';
import { apiRole } from './api.js';
import type { NodeRole } from './node-role.js';
import { workerRole } from './worker.js';

export type { ClusterLink, NodeRole } from './node-role.js';

export function roleOf(config: Config): NodeRole {
  return { api: apiRole, worker: workerRole, all: allRole }[config.role];
}
