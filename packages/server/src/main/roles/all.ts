import type { NodeRole } from './node-role.js';

/** Serves the API and runs the work: a node alone, or a cluster member doing both. */
export const allRole: NodeRole = { name: 'all', runsWork: true, servesApi: true, placeCalls: (local) => local };
