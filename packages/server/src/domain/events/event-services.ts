/**
 * Event Flows' domain, made of units with one job each: Kafka cluster connections
 * (clusters.ts), flows, assignments and listeners as users and admins see them
 * (flow-service.ts), queue flows' credentials (queue-credentials.ts), and flows as the workers
 * that run them see them (worker-flows.ts). The workers themselves are in events/ and jobs/.
 */
import type { ChangeNotifier } from '../changes.js';
import type { Clock } from '../clock.js';
import type { OwnerAccess } from '../accounts/access.js';
import type { AccountStore } from '../accounts/ports.js';
import type { AlgorithmStore } from '../algorithms/ports.js';
import type { VersionStore } from '../versions/ports.js';
import type { ConsumerStatus } from './model.js';
import type { BacklogProbe, EventStore, KafkaAdmin } from './ports.js';
import type { SecretBox } from '../../lib/secret-box.js';
import { EventClusters } from './clusters.js';
import { FlowLag } from './flow-lag.js';
import { type EventSettings, FlowService } from './flow-service.js';
import { QueueCredentials } from './queue-credentials.js';
import { WorkerFlows } from './worker-flows.js';

export interface EventServiceDeps {
  store: EventStore;
  accounts: AccountStore;
  algorithms: AlgorithmStore;
  versions: VersionStore;
  access: OwnerAccess;
  kafka: KafkaAdmin;
  /** Measures what waits in the broker for a subscriber no node runs. */
  backlog: BacklogProbe;
  secrets: SecretBox;
  clock: Clock;
  settings: EventSettings;
  /** What the running consumers report, by flow id (the workers' status board). */
  status?: (flowId: string) => ConsumerStatus | undefined;
  /** Told when a flow or a Kafka cluster connection changes (the workers and the publisher table reload). */
  changes: ChangeNotifier;
}

export interface EventServices {
  clusters: EventClusters;
  flows: FlowService;
  credentials: QueueCredentials;
  workers: WorkerFlows;
}

export function makeEventServices(deps: EventServiceDeps): EventServices {
  const status = deps.status ?? (() => undefined);
  const clusters = new EventClusters(deps.store, deps.kafka, deps.secrets, deps.clock, deps.changes);
  const credentials = new QueueCredentials(deps.accounts, deps.algorithms, deps.access, deps.secrets);
  const lag = new FlowLag({
    probe: deps.backlog,
    clusters,
    credentials,
    sqsEndpointAllow: deps.settings.sqsEndpointAllow,
    clock: deps.clock,
  });
  const flows = new FlowService({ ...deps, clusters, credentials, status, lag });
  const workers = new WorkerFlows(deps.store, deps.accounts, deps.algorithms, deps.clock);
  return { clusters, flows, credentials, workers };
}
