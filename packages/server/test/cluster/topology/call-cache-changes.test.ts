/** The core loop's call-cache-changes.test.ts, unchanged, against a cluster: an API node and two workers (support/server.ts). */
import { againstCluster } from '../../support/cluster-topology.js';

await againstCluster('call-cache-changes.test.ts', () => import('../../calls/call-cache-changes.test.js'));
