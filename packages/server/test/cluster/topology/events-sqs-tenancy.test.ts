/**
 * events-sqs-tenancy.test.ts, unchanged, against a cluster: the API node shows the ExternalId and
 * the workers, which run the flows, send the same one (every node derives it from the shared
 * cluster key).
 */
import { againstCluster } from '../../support/cluster-topology.js';

await againstCluster('events-sqs-tenancy.test.ts', () => import('../../events/events-sqs-tenancy.test.js'));
