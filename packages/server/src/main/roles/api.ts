import { NatsRuntime } from '../../cluster/dispatch.js';
import type { NodeRole } from './node-role.js';

/**
 * An API node (cluster mode): serves clients and sends every build, call and flow's work to the
 * workers over NATS; it never starts a sandbox, so it leaves the host's cgroups alone.
 */
export const apiRole: NodeRole = {
  name: 'api',
  runsWork: false,
  servesApi: true,
  placeCalls: (_local, cluster, callKeys) => {
    // config.ts refuses ALGOHOST_ROLE=api without ALGOHOST_NATS_URL.
    if (!cluster) throw new Error('an API node needs the cluster');
    const { nats, directory } = cluster;
    // Each call goes to a worker; GPU calls to a GPU worker, so it asks whether one is live.
    return { runtime: new NatsRuntime(nats, directory, callKeys), gpuAvailable: () => directory.hasGpuWorker() };
  },
};
