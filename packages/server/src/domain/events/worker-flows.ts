/**
 * Event Flows as the workers that run them see them: the enabled flows, where a flow's calls
 * go and as whom, and the record of each delivery (written in batches) until it expires.
 */
import type { Clock } from '../clock.js';
import type { Account } from '../accounts/model.js';
import type { AccountStore } from '../accounts/ports.js';
import type { Algorithm } from '../algorithms/model.js';
import type { AlgorithmStore } from '../algorithms/ports.js';
import type { AlgoAddress } from '../calls/request.js';
import { CoalescingBatch } from '../../lib/coalescing-batch.js';
import { DEFAULT_FLOW_TIMEOUT_S, type Delivery, type EventFlow } from './model.js';
import type { EventStore } from './ports.js';

/** Where a flow's calls go and as whom: the owner of the algorithm, its chosen version. */
export interface FlowTarget {
  owner: Account;
  algorithm: Algorithm;
  address: AlgoAddress;
  timeoutSeconds: number;
}

export class WorkerFlows {
  /** 500 rows of 11 columns stay well within SQLite's and PostgreSQL's bounds on parameters. */
  private readonly deliveryWrites = new CoalescingBatch<Delivery>((rows) => this.store.insertDeliveries(rows), { maxItems: 500 });

  constructor(
    private readonly store: EventStore,
    private readonly accounts: AccountStore,
    private readonly algorithms: AlgorithmStore,
    private readonly clock: Clock,
  ) {}

  enabledFlows(): Promise<EventFlow[]> {
    return this.store.listEnabledFlows();
  }

  async markPositioned(flowId: string): Promise<void> {
    await this.store.updateFlow(flowId, { positioned: true });
  }

  /** Where a flow's calls go; undefined while it has no version, or once its algorithm is gone. */
  async target(flow: EventFlow): Promise<FlowTarget | undefined> {
    const algorithm = await this.algorithms.findById(flow.algorithmId);
    const owner = algorithm && (await this.accounts.findById(algorithm.ownerId));
    if (!algorithm || !owner || !flow.version) return undefined;
    return {
      owner,
      algorithm,
      address: { owner: owner.name, name: algorithm.name, version: flow.version },
      timeoutSeconds: flow.timeoutSeconds ?? DEFAULT_FLOW_TIMEOUT_S,
    };
  }

  /** Resolves once the record is stored; records arriving together are stored in one statement. */
  recordDelivery(delivery: Delivery): Promise<void> {
    return this.deliveryWrites.add(delivery);
  }

  /** Deletes delivery records older than `keepMs`. */
  deleteOldDeliveries(keepMs: number): Promise<number> {
    return this.store.deleteDeliveriesBefore(new Date(this.clock().getTime() - keepMs).toISOString());
  }
}
