/** The core loop's data-api.test.ts, unchanged, against a cluster: an API node and two workers (support/server.ts). */
import { againstCluster } from '../../support/cluster-topology.js';

await againstCluster('data-api.test.ts', () => import('../../data/data-api.test.js'));
