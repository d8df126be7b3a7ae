/** The core loop's calls.test.ts, unchanged, against a cluster: an API node and two workers (support/server.ts). */
import { againstCluster } from '../../support/cluster-topology.js';

await againstCluster('calls.test.ts', () => import('../../calls/calls.test.js'));
