/**
 * The cluster health an admin sees (`GET /v1/admin/status`, the admin panel): what this node
 * runs on and how busy it is, from its own data (the build queue in the database, the runner
 * pool, a count of recent calls); no probe of its own.
 */
import type { Clock } from '../clock.js';
import { requireAdmin, type Principal } from '../accounts/principal.js';

/** What does not change while the node runs. */
export interface NodeFacts {
  version: string;
  database: 'sqlite' | 'postgresql';
  blobStore: 'disk' | 's3';
  /** When the node started. */
  startedAt: Date;
}

/** What the status reads when asked: each from the part of the node that keeps it. */
export interface NodeGauges {
  /** Builds waiting and running, in the whole cluster (the database is the queue). */
  buildCounts(): Promise<{ queued: number; running: number }>;
  /** Runners on this node that have started (idle or serving a call). */
  warmRunners(): number;
  /** Algorithm calls this node handed to a runner in the last 60 seconds. */
  callsInLastMinute(): number;
}

export interface ClusterStatus {
  version: string;
  database: NodeFacts['database'];
  blobStore: NodeFacts['blobStore'];
  builds: { queued: number; running: number };
  runners: { warm: number };
  callsPerMinute: number;
  uptimeSeconds: number;
}

/** What ClusterStatusService is made from (named, so the composition root reads as a list of parts). */
export interface ClusterStatusServiceDeps {
  facts: NodeFacts;
  gauges: NodeGauges;
  clock: Clock;
}

export class ClusterStatusService {
  private readonly facts: NodeFacts;
  private readonly gauges: NodeGauges;
  private readonly clock: Clock;

  constructor(deps: ClusterStatusServiceDeps) {
    this.facts = deps.facts;
    this.gauges = deps.gauges;
    this.clock = deps.clock;
  }

  async status(p: Principal): Promise<ClusterStatus> {
    requireAdmin(p, 'the cluster status');
    return {
      version: this.facts.version,
      database: this.facts.database,
      blobStore: this.facts.blobStore,
      builds: await this.gauges.buildCounts(),
      runners: { warm: this.gauges.warmRunners() },
      callsPerMinute: this.gauges.callsInLastMinute(),
      uptimeSeconds: Math.max(0, Math.floor((this.clock().getTime() - this.facts.startedAt.getTime()) / 1000)),
    };
  }
}
