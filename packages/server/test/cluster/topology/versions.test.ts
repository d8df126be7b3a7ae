/** The core loop's versions.test.ts, unchanged, against a cluster: an API node and two workers (support/server.ts). */
import { againstCluster } from '../../support/cluster-topology.js';

await againstCluster('versions.test.ts', () => import('../../algorithms/versions.test.js'));
