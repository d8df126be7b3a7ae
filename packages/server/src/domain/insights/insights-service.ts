/**
 * Insights (docs/compatibility.md §4; spec "What the service does" 6 and Limits 1): metrics an
 * algorithm reports while it runs, sent to the ONE broker connection configured for Insights (a
 * topic of a connected Kafka cluster), enriched with the algorithm, version, owner and request
 * id. Separate from Event Flows: no flow, no delivery record, no version choice.
 *
 * Only calls of a published version with `insights_enabled` may report: the call service opens
 * a token for each such call (`openCall`), the harness exposes it to the in-sandbox client as
 * ALGOHOST_INSIGHTS_TOKEN while the call runs, and the client sends it with `POST /v1/insights`
 * (header X-Algohost-Insights-Token; no Authorization header, as the platform's clients send
 * none). The token dies with the call, so a report can never be attributed to another call.
 */
import crypto from 'node:crypto';
import { isoNow, type Clock } from '../clock.js';
import { Errors, invalid } from '../errors.js';
import { requireAdmin, type Principal } from '../accounts/principal.js';
import { describeCluster, type KafkaCluster } from '../events/model.js';
import type { TopicInfo } from '../events/ports.js';
import type { InsightsCall, InsightsTokens } from '../calls/ports.js';
import type { RecordSink } from '../events/publishing.js';

/** compat §4: at most 25 metrics per report. */
export const MAX_INSIGHTS = 25;
/** compat §4: at most 25 KB per report (the request body; larger is 413 before it is read). */
export const MAX_REPORT_BYTES = 25 * 1024;
const MAX_KEY_CHARS = 255;
/** Keys the enrichment sets: a report may not send them (compat §4). */
export const RESERVED_KEYS = [
  'request_id',
  'timestamp',
  'duration_milliseconds',
  'algorithm_owner',
  'algorithm_name',
  'algorithm_version',
] as const;
const TOPIC_PATTERN = /^[A-Za-z0-9._-]{1,249}$/;

/** Where Insights go: a topic of a connected Kafka cluster (one at most: spec Limits 1). */
export interface InsightsConnection {
  clusterId: string;
  topic: string;
  createdBy: string | null;
  createdAt: string;
}

/** The one Insights connection (the metadata database). */
export interface InsightsStore {
  get(): Promise<InsightsConnection | undefined>;
  /** Throws Errors.insightsConnectionExists when one exists (the database has one slot). */
  insert(connection: InsightsConnection): Promise<void>;
  /** Whether there was one. */
  delete(): Promise<boolean>;
}

/** The connected clusters, as admins see them (the event service). */
export interface InsightsClusters {
  getCluster(p: Principal, idOrName: string): Promise<KafkaCluster>;
  listTopics(p: Principal, idOrName: string): Promise<TopicInfo[]>;
  findCluster(id: string): Promise<KafkaCluster | undefined>;
}

/** What a running call of an insights_enabled version reports as (the enrichment). */

export interface InsightsConnectionView {
  cluster: { id: string; name: string };
  topic: string;
  createdAt: string;
}

export interface InsightsServiceDeps {
  store: InsightsStore;
  clusters: InsightsClusters;
  sink: RecordSink;
  clock: Clock;
}

export class InsightsService implements InsightsTokens {
  private readonly store: InsightsStore;
  private readonly clusters: InsightsClusters;
  private readonly sink: RecordSink;
  private readonly clock: Clock;
  /** Running calls that may report, by token. */
  private readonly calls = new Map<string, InsightsCall & { started: number }>();

  constructor(deps: InsightsServiceDeps) {
    this.store = deps.store;
    this.clusters = deps.clusters;
    this.sink = deps.sink;
    this.clock = deps.clock;
  }

  // ---- the connection (cluster admins) ----

  async configure(p: Principal, input: { cluster?: unknown; topic?: unknown }): Promise<InsightsConnectionView> {
    requireAdmin(p, 'configuring the Insights connection');
    if (typeof input.cluster !== 'string' || input.cluster === '') {
      throw invalid('cluster must name a connected Kafka cluster (its id or name; see GET /v1/admin/event-clusters)');
    }
    if (typeof input.topic !== 'string' || !TOPIC_PATTERN.test(input.topic)) {
      throw invalid('topic must be a Kafka topic name: 1 to 249 letters, digits, ".", "_" or "-"');
    }
    const existing = await this.store.get();
    if (existing) throw Errors.insightsConnectionExists({ cluster: await this.clusterName(existing.clusterId), topic: existing.topic });
    const cluster = await this.clusters.getCluster(p, input.cluster);
    const topic = input.topic;
    if (!(await this.clusters.listTopics(p, cluster.id)).some((t) => t.name === topic)) {
      throw Errors.topicNotFound({ topic, cluster: cluster.name });
    }
    const connection: InsightsConnection = { clusterId: cluster.id, topic, createdBy: p.account.id, createdAt: isoNow(this.clock) };
    await this.store.insert(connection);
    return { cluster: { id: cluster.id, name: cluster.name }, topic, createdAt: connection.createdAt };
  }

  async get(p: Principal): Promise<InsightsConnectionView> {
    requireAdmin(p, 'reading the Insights connection');
    const c = await this.store.get();
    if (!c) throw Errors.insightsConnectionMissing({});
    return { cluster: { id: c.clusterId, name: await this.clusterName(c.clusterId) }, topic: c.topic, createdAt: c.createdAt };
  }

  async remove(p: Principal): Promise<void> {
    requireAdmin(p, 'removing the Insights connection');
    if (!(await this.store.delete())) throw Errors.insightsConnectionMissing({});
  }

  // ---- calls and their reports ----

  /** A call of an insights_enabled version starts: the token its algorithm reports with, and what ends it. */
  openCall(call: InsightsCall): { token: string; close: () => void } {
    const token = crypto.randomBytes(24).toString('base64url');
    this.calls.set(token, { ...call, started: performance.now() });
    return { token, close: () => this.calls.delete(token) };
  }

  /**
   * One report from inside a running call: checked (token, at most MAX_INSIGHTS metrics, keys),
   * enriched and sent as one JSON record to the Insights topic; resolves once the broker has it.
   */
  async report(token: string | undefined, body: unknown): Promise<{ accepted: number }> {
    const call = token ? this.calls.get(token) : undefined;
    if (!call) throw Errors.insightsNotEnabled({});
    const metrics = parseReport(body);
    const connection = await this.store.get();
    if (!connection) throw Errors.insightsNotConfigured({});
    const value = {
      ...metrics,
      algorithm_owner: call.owner,
      algorithm_name: call.name,
      algorithm_version: call.version,
      request_id: call.requestId,
      timestamp: isoNow(this.clock),
      duration_milliseconds: Math.round(performance.now() - call.started),
    };
    try {
      await this.sink.send(connection.clusterId, connection.topic, {
        key: Buffer.from(`${call.owner}/${call.name}`),
        value: Buffer.from(JSON.stringify(value)),
        headers: {
          'algohost-algorithm': `${call.owner}/${call.name}`,
          'algohost-version': call.version,
          'algohost-request-id': call.requestId,
          'content-type': 'application/json',
        },
      });
    } catch (err) {
      const cluster = await this.clusters.findCluster(connection.clusterId);
      throw Errors.brokerUnreachable({
        cluster: cluster ? describeCluster(cluster) : connection.clusterId,
        reason: (err as Error).message,
      });
    }
    return { accepted: Object.keys(metrics).length };
  }

  private async clusterName(id: string): Promise<string> {
    return (await this.clusters.findCluster(id))?.name ?? id;
  }
}

/** `[{"insight_key": k, "insight_value": v}, …]` → {k: v}, refusing what compat §4 does not allow. */
function parseReport(body: unknown): Record<string, unknown> {
  if (!Array.isArray(body)) throw invalid('an Insights report is a JSON array of {"insight_key", "insight_value"} objects');
  if (body.length === 0) throw invalid('an Insights report holds at least one metric');
  if (body.length > MAX_INSIGHTS) throw invalid(`an Insights report holds at most ${MAX_INSIGHTS} metrics; this one has ${body.length}`);
  const out: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  for (const [i, entry] of body.entries()) {
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) throw invalid(`metric ${i} is not an object`);
    const { insight_key: key, insight_value: value } = entry as { insight_key?: unknown; insight_value?: unknown };
    if (typeof key !== 'string' || key.length === 0 || [...key].length > MAX_KEY_CHARS || /\p{Cc}/u.test(key)) {
      throw invalid(`metric ${i}: insight_key must be 1 to ${MAX_KEY_CHARS} characters without control characters`);
    }
    if ((RESERVED_KEYS as readonly string[]).includes(key) || key === '__proto__') {
      throw invalid(`metric ${i}: insight_key "${key}" is reserved (the service sets ${RESERVED_KEYS.join(', ')})`);
    }
    if (value === undefined) throw invalid(`metric ${i} ("${key}") has no insight_value`);
    if (key in out) throw invalid(`insight_key "${key}" appears twice in one report`);
    out[key] = value;
  }
  return { ...out };
}
