/** The core loop's calls-async.test.ts, unchanged, against a cluster: an API node and two workers (support/server.ts). */
import { againstCluster } from '../../support/cluster-topology.js';

await againstCluster('calls-async.test.ts', () => import('../../calls/calls-async.test.js'));
