import type { NodeRole } from './node-role.js';

/**
 * A worker (cluster mode): runs the builds, calls and flow consumers it takes from NATS and
 * serves the API only to its own sandboxes.
 */
export const workerRole: NodeRole = { name: 'worker', runsWork: true, servesApi: false, placeCalls: (local) => local };
