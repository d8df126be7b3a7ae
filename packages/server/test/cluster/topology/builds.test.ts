/** The core loop's builds.test.ts, unchanged, against a cluster: an API node and two workers (support/server.ts). */
import { againstCluster } from '../../support/cluster-topology.js';

await againstCluster('builds.test.ts', () => import('../../builds/builds.test.js'));
