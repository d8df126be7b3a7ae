/** The full-network attack test, unchanged, against a cluster: mallory's runner is on a worker node, beside its NATS, PostgreSQL and S3 connections. */
import { againstCluster } from '../../support/cluster-topology.js';

await againstCluster('security-full-network.test.ts', () => import('../../runtime/security-full-network.test.js'));
