/** The core loop's algorithms.test.ts, unchanged, against a cluster: an API node and two workers (support/server.ts). */
import { againstCluster } from '../../support/cluster-topology.js';

await againstCluster('algorithms.test.ts', () => import('../../algorithms/algorithms.test.js'));
