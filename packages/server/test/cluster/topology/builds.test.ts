/**
 * The core loop's builds.test.ts against a cluster: an API node and two workers (support/server.ts).
 * Its good pushes take the run's artifact of the same tree once builds.test.ts made it (each
 * fixture compiles once per run); its broken pushes compile on a worker.
 */
import { againstCluster } from '../../support/cluster-topology.js';

await againstCluster('builds.test.ts', () => import('../../builds/builds.test.js'));
