/**
 * What a node of each role (ALGOHOST_ROLE) runs. The wiring asks the role and never compares
 * role names itself; a node alone is `all` without a cluster.
 */
import type { Config } from '../../config/config.js';
import type { Principal } from '../../domain/accounts/principal.js';
import type { AlgorithmRuntime } from '../../domain/calls/ports.js';
import type { WorkerDirectory } from '../../cluster/directory.js';
import type { NatsCluster } from '../../cluster/nats-cluster.js';

/** Cluster mode: the NATS connection and the live workers' presence entries. */
export interface ClusterLink {
  nats: NatsCluster;
  directory: WorkerDirectory;
}

/** Where this node's sync calls run, and whether a GPU is there for them. */
export interface CallPlacement {
  runtime: AlgorithmRuntime;
  gpuAvailable: () => boolean;
}

export interface NodeRole {
  readonly name: Config['role'];
  /**
   * Starts sandboxes: builds, runners and flow consumers run here, so the node takes the host's
   * cgroups at start and, in a cluster, takes work from NATS and relays its build events.
   */
  readonly runsWork: boolean;
  /** Serves the API to clients (and hears the workers' build events); a worker's port serves only /healthz and /metrics. */
  readonly servesApi: boolean;
  /** `local`: this node's runner pool and GPU; `callKeys`: the live call keys (KeyService.callKeyPrincipal). */
  placeCalls(local: CallPlacement, cluster: ClusterLink | undefined, callKeys: (secret: string) => Principal | undefined): CallPlacement;
}
