/**
 * Event Flows and Insights: connected clusters and flows, the Kafka producers, the publisher
 * table every successful call consults, and the workers that run subscriber flows as jobs.
 */
import type { CallService } from '../../domain/calls/call-service.js';
import { FlowDeliveries } from '../../domain/events/deliveries.js';
import { type EventServices as EventDomain, makeEventServices } from '../../domain/events/event-services.js';
import type { EventSettings } from '../../domain/events/flow-service.js';
import { FlowPublisher } from '../../domain/events/publishing.js';
import { InsightsService } from '../../domain/insights/insights-service.js';
import { BrokerBacklog } from '../../events/backlog.js';
import { FlowWorkers } from '../../events/flow-workers.js';
import type { RunningFlows } from '../../events/running-flows.js';
import { PlatformaticKafkaAdmin } from '../../events/kafka/kafka-admin.js';
import { KafkaProducers } from '../../events/kafka/producers.js';
import { JobTrigger } from '../../jobs/job-runner.js';
import { SqlEventStore } from '../../storage/event-store.js';
import { SqlInsightsStore } from '../../storage/insights-store.js';
import type { NodeMetrics } from '../metrics.js';
import { splitList } from '../settings.js';
import type { Base } from './base.js';

export interface EventWiring {
  events: EventDomain;
  /** Kafka producers of publisher flows and dead letters (closed after the jobs stop). */
  producers: KafkaProducers;
  publisher: FlowPublisher;
  insights: InsightsService;
  /** Wakes the `events.flows` job when a flow changes. */
  flowChanges: JobTrigger;
  /** The queue hosts the operator allows, read once for the flows' creation, lag and pollers. */
  settings: EventSettings;
}

/** `running`: the subscriber flows this node runs (the flow workers, made after the calls, keep it). */
export function wireEvents(base: Base, metrics: NodeMetrics, running: RunningFlows): EventWiring {
  const { config, clock } = base;
  const store = new SqlEventStore(base.db);
  const flowChanges = new JobTrigger();
  base.changes.on('flow_changed', () => flowChanges.wake());
  base.changes.on('event_cluster_removed', () => flowChanges.wake());
  const directory = base.cluster?.directory;
  const settings: EventSettings = {
    sqsEndpointAllow: splitList(config.sqsEndpointAllow),
    serviceBusEndpointAllow: splitList(config.serviceBusEndpointAllow),
  };
  const events = makeEventServices({
    store,
    accounts: base.accounts,
    algorithms: base.algorithmStore,
    versions: base.versionStore,
    access: base.access,
    kafka: new PlatformaticKafkaAdmin(),
    backlog: new BrokerBacklog({ defaultRegion: config.sqsRegion, stsEndpoint: config.sqsStsEndpoint }),
    secrets: base.secrets,
    clock,
    settings,
    // In a cluster the workers run the consumers and report them in their presence entries.
    status: (flowId) => (directory ? directory.flowStatus(flowId) : running.status(flowId)),
    changes: base.changes,
  });
  const producers = new KafkaProducers((clusterId) => events.clusters.connection(clusterId));
  const publisher = new FlowPublisher(producers, base.log, running.publishers, (flow, ok) => metrics.flowPublished(flow.id, ok));
  // Insights go to a topic of a connected cluster through the same producers (one per cluster).
  const insights = new InsightsService({
    store: new SqlInsightsStore(base.db),
    clusters: {
      getCluster: (p, idOrName) => events.clusters.get(p, idOrName),
      listTopics: (p, idOrName) => events.clusters.listTopics(p, idOrName),
      findCluster: (id) => store.findCluster(id),
    },
    sink: producers,
    clock,
  });
  return { events, producers, publisher, insights, flowChanges, settings };
}

export function wireFlowWorkers(
  base: Base,
  ev: EventWiring,
  deps: { calls: CallService; metrics: NodeMetrics; running: RunningFlows },
): FlowWorkers {
  const { calls, metrics } = deps;
  const { config } = base;
  const deliveries = new FlowDeliveries(ev.events.workers, calls, base.clock, (flow, outcome, latencyMs) =>
    metrics.flowDelivered(flow.id, outcome, latencyMs),
  );
  return new FlowWorkers({
    events: ev.events,
    running: deps.running,
    deliveries,
    publisher: ev.publisher,
    sink: ev.producers,
    retry: {
      attempts: config.eventRetryAttempts,
      baseMs: config.eventRetryBackoffMs,
      maxMs: config.eventRetryBackoffMaxMs,
      saturatedMs: config.eventSaturationDelayMs,
    },
    sqsConcurrency: config.runnersPerAlgorithm,
    endpointAllow: ev.settings,
    // In a cluster the workers consume (a dead worker's messages and partitions go to the others
    // by the broker's own redelivery); API nodes only keep the publisher table.
    subscribers: base.role.runsWork,
    sqsDefaultRegion: config.sqsRegion,
    sqsStsEndpoint: config.sqsStsEndpoint,
    log: base.log,
  });
}
