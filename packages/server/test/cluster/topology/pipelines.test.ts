/** The core loop's pipelines.test.ts, unchanged, against a cluster: an API node and two workers (support/server.ts). */
import { againstCluster } from '../../support/cluster-topology.js';

await againstCluster('pipelines.test.ts', () => import('../../calls/pipelines.test.js'));
