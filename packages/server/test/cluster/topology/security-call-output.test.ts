/** security-call-output.test.ts, unchanged, against a cluster: a failure's output crosses NATS from the worker and is shown by the API node to members only. */
import { againstCluster } from '../../support/cluster-topology.js';

await againstCluster('security-call-output.test.ts', () => import('../../calls/security-call-output.test.js'));
