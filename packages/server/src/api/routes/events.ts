/**
 * Event Flows (docs/compatibility.md §10): Kafka cluster connections, topics and assignments
 * (cluster admins), an algorithm's flows and their deliveries (its owner and members), and the
 * event listeners of an account (spec endpoint 7).
 */
import { Type } from 'typebox';
import type { Delivery, KafkaCluster } from '../../domain/events/model.js';
import { DEFAULT_FLOW_TIMEOUT_S } from '../../domain/events/model.js';
import type { FlowView } from '../../domain/events/flow-service.js';
import { QUEUE_URL_PATTERN, SERVICEBUS_URI_PATTERN } from '../../domain/events/flow-input.js';
import { trustPolicyOf } from '../../domain/events/queue-credentials.js';
import { parsePageRequest } from '../../domain/pagination.js';
import { principalOf } from '../auth.js';
import { type Api, type ApiServices, requestUrl } from '../context.js';
import { pageJson } from '../presenters.js';
import { AUTH_ERRORS, errorResponses, PageQuery, Paged } from '../schemas.js';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

const KafkaClusterSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    bootstrap_servers: Type.Array(Type.String()),
    tls: Type.Boolean(),
    tls_ca_set: Type.Boolean({ description: 'Whether extra CA certificates are trusted (the PEM is not returned).' }),
    sasl: Nullable(
      Type.Object(
        { mechanism: Type.String(), username: Type.String() },
        { description: 'The password is stored encrypted with the cluster key and never returned.' },
      ),
    ),
    created_at: Type.String(),
  },
  { $id: 'KafkaCluster' },
);

const ConsumerStatusSchema = Type.Object({
  state: Type.Union(
    [Type.Literal('starting'), Type.Literal('running'), Type.Literal('paused'), Type.Literal('failed'), Type.Literal('stopped')],
    {
      description:
        'paused: the algorithm is saturated (all its runners busy); records wait in the broker. stopped: a subscriber that is disabled (or has no version), so no node consumes it; starting: enabled, and no node has started consuming it yet.',
    },
  ),
  lag: Nullable(
    Type.Number({
      description:
        'Records behind the end of the topic (Kafka: the consumer group’s committed offsets against the end offsets, summed; 0 for a flow never started, which starts at the end), or messages in the queue (SQS ApproximateNumberOfMessages); for a stopped or starting subscriber measured in the broker (kept for a few seconds). Null for a publisher (it reads nothing), a Service Bus queue no node consumes, or while unknown (error says why).',
    }),
  ),
  error: Nullable(
    Type.String({
      description:
        'What failed: the consumer, or for a stopped or starting subscriber "lag not measured: …" naming the broker (unreachable within 3 s, credentials refused, …).',
    }),
  ),
});

const EventFlowSchema = Type.Object(
  {
    id: Type.String(),
    algorithm: Type.String({ description: 'owner/name' }),
    source_type: Type.Union([Type.Literal('kafka'), Type.Literal('sqs'), Type.Literal('servicebus')]),
    role: Type.Union([Type.Literal('publisher'), Type.Literal('subscriber')]),
    cluster: Nullable(Type.Object({ id: Type.String(), name: Type.String() })),
    topic: Nullable(Type.String()),
    dead_letter_topic: Nullable(Type.String({ description: 'Kafka subscribers: where records go after the last failed attempt.' })),
    source_uri: Nullable(Type.String({ description: 'Queues: the SQS queue URL or the Service Bus queue URI.' })),
    credentials: Nullable(
      Type.Object(
        {
          kind: Type.Union([Type.Literal('role'), Type.Literal('static')]),
          id: Type.String({ description: 'The role ARN, or the access key id (SQS); the shared access key name (Service Bus).' }),
          external_id: Type.Optional(
            Type.String({
              description:
                'SQS roles: the ExternalId every AssumeRole of this flow carries, the algorithm owner’s (GET /v1/users/{user_id}/sqs-assume-role gives it before a flow exists). The role’s trust policy must require it: "Condition": {"StringEquals": {"sts:ExternalId": "<this value>"}}.',
            }),
          ),
          source_identity: Type.Optional(
            Type.String({
              description:
                'SQS roles: the SourceIdentity the role’s sessions carry (algohost-<owner>); its trust policy must allow sts:SetSourceIdentity.',
            }),
          ),
        },
        { description: 'Queues: the secret access key (SQS) or shared access key (Service Bus) is stored encrypted and never returned.' },
      ),
    ),
    timeout: Nullable(Type.Number({ description: `Seconds per delivery's call; null = ${DEFAULT_FLOW_TIMEOUT_S}.` })),
    enabled: Type.Boolean(),
    version: Nullable(Type.String({ description: 'The published version the flow runs.' })),
    status: Type.Union([ConsumerStatusSchema, Type.Null()], {
      description:
        'What the nodes running the flow report (a publisher: failed while the cluster refuses its records). A subscriber no node runs has state stopped (disabled, or no version) or starting (enabled, not picked up yet) with its lag measured in the broker; a publisher no node sends for has null.',
    }),
    created_at: Type.String(),
    updated_at: Type.String(),
  },
  { $id: 'EventFlow' },
);

const DeliverySchema = Type.Object(
  {
    id: Type.String(),
    flow_id: Type.String(),
    source: Type.String({ description: 'topic/partition@offset (Kafka) or the message id (SQS).' }),
    attempts: Type.Integer({ description: 'Calls made (Kafka) or the receive count (SQS).' }),
    outcome: Type.Union([Type.Literal('succeeded'), Type.Literal('failed'), Type.Literal('dead_lettered'), Type.Literal('returned')], {
      description:
        'failed: the call failed and the message goes back to its queue (SQS); returned: the algorithm was saturated and the message went back with a delay; dead_lettered: written to the dead-letter topic, or moved to the queue’s dead-letter queue.',
    }),
    error: Nullable(Type.String()),
    dead_letter: Nullable(Type.String()),
    request_id: Nullable(Type.String()),
    latency_ms: Type.Number(),
    created_at: Type.String(),
  },
  { $id: 'EventDelivery' },
);

const EventListenerSchema = Type.Object(
  {
    id: Type.String(),
    sourceType: Type.String({ description: 'SQS, SERVICEBUS or KAFKA.' }),
    sourceURI: Type.String({ description: 'The queue URL or URI, or kafka://<bootstrap servers>/<topic>.' }),
    algoName: Type.String(),
    algoOwner: Type.String(),
    listenerOwner: Type.String({ description: 'The account that configured the flow.' }),
    credentials: Type.String({
      description: 'The role ARN or access key id (SQS); the shared access key name (Service Bus); cluster:<name> (Kafka). Never a secret.',
    }),
  },
  { $id: 'EventListener' },
);

const AssumeRoleSettingsSchema = Type.Object(
  {
    account: Type.String({ description: 'The account (user or organization) whose algorithms’ SQS flows assume roles so.' }),
    external_id: Type.String({
      description:
        'Sent as ExternalId with every AssumeRole of the account’s SQS flows; derived from the cluster key and the account, the same on every node, never another account’s.',
    }),
    source_identity: Type.String({ description: 'Sent as SourceIdentity: algohost-<account>, recorded by CloudTrail.' }),
    trust_policy: Type.Object(
      {},
      {
        additionalProperties: true,
        description:
          'A trust policy to put on the role: the algohost nodes’ principal (ask the operator) may assume it with this ExternalId only.',
      },
    ),
  },
  { $id: 'SqsAssumeRole' },
);

export const EVENT_SCHEMAS = [KafkaClusterSchema, EventFlowSchema, DeliverySchema, EventListenerSchema, AssumeRoleSettingsSchema];

const ClusterParams = Type.Object({ cluster: Type.String({ description: 'The connection id or name.' }) });
const AlgoParams = Type.Object({ owner: Type.String(), name: Type.String() });
const FlowParams = Type.Object({ owner: Type.String(), name: Type.String(), flow_id: Type.String() });
const List = <T extends Parameters<typeof Type.Array>[0]>(t: T) => Type.Object({ results: Type.Array(t) });
const FLOWS_DOC =
  'Subscribers: each record or message becomes a call of the chosen version as the algorithm’s owner, at least once (a delivery interrupted by a restart is delivered again); its topic, partition, offset and key (queues: message id) reach the algorithm as ALGOHOST_EVENT. Kafka: a failed call is retried with backoff, then written to <topic>.dlq with the error in header algohost-error. SQS: success deletes the message; failure or saturation returns it with a delay; the queue’s redrive policy dead-letters it after maxReceiveCount. Service Bus (peek-lock): success completes the message; failure or saturation abandons it after a delay; the queue’s max delivery count dead-letters it. Publishers: every successful call of the version sends its result to the topic with headers algohost-algorithm, algohost-version, algohost-request-id and content-type.';

export function eventRoutes(app: Api, s: Pick<ApiServices, 'events' | 'links'>): void {
  // ---- cluster admins ----
  app.post('/v1/admin/event-clusters', {
    schema: {
      operationId: 'eventCluster.create',
      tags: ['events'],
      summary: 'Connect a Kafka cluster (admin). The service supplies no broker; several clusters may be connected.',
      body: Type.Object({
        name: Type.String(),
        bootstrap_servers: Type.Array(Type.String(), { description: 'host:port of one or more brokers.' }),
        tls: Type.Optional(Type.Boolean()),
        tls_ca: Type.Optional(Type.String({ description: 'PEM certificates to trust besides the system’s.' })),
        sasl: Type.Optional(
          Type.Object({
            mechanism: Type.Union([Type.Literal('PLAIN'), Type.Literal('SCRAM-SHA-256'), Type.Literal('SCRAM-SHA-512')]),
            username: Type.String(),
            password: Type.String({ description: 'Encrypted at rest with the cluster key; never returned.' }),
          }),
        ),
      }),
      response: { 200: Type.Ref('KafkaCluster'), ...errorResponses(...AUTH_ERRORS, 409) },
    },
    handler: async (req) => clusterJson(await s.events.clusters.create(principalOf(req), req.body)),
  });

  app.get('/v1/admin/event-clusters', {
    schema: {
      operationId: 'eventCluster.list',
      tags: ['events'],
      summary: 'List the connected Kafka clusters (admin).',
      response: { 200: List(Type.Ref('KafkaCluster')), ...errorResponses(...AUTH_ERRORS) },
    },
    handler: async (req) => ({ results: (await s.events.clusters.list(principalOf(req))).map(clusterJson) }),
  });

  app.get('/v1/admin/event-clusters/:cluster', {
    schema: {
      operationId: 'eventCluster.get',
      tags: ['events'],
      summary: 'Get a Kafka cluster connection (admin).',
      params: ClusterParams,
      response: { 200: Type.Ref('KafkaCluster'), ...errorResponses(...AUTH_ERRORS, 404) },
    },
    handler: async (req) => clusterJson(await s.events.clusters.get(principalOf(req), req.params.cluster)),
  });

  app.delete('/v1/admin/event-clusters/:cluster', {
    schema: {
      operationId: 'eventCluster.delete',
      tags: ['events'],
      summary: 'Disconnect a Kafka cluster and remove its assignments (admin).',
      params: ClusterParams,
      response: { 204: Type.Null(), ...errorResponses(...AUTH_ERRORS, 404) },
    },
    handler: async (req, reply) => {
      await s.events.clusters.delete(principalOf(req), req.params.cluster);
      return reply.code(204).send(null);
    },
  });

  app.get('/v1/admin/event-clusters/:cluster/topics', {
    schema: {
      operationId: 'eventCluster.topics',
      tags: ['events'],
      summary: 'The topics of a connected cluster, as the cluster lists them now (admin); 503 when it cannot be reached.',
      params: ClusterParams,
      response: {
        200: List(Type.Object({ name: Type.String(), partitions: Type.Integer() })),
        ...errorResponses(...AUTH_ERRORS, 404, 503),
      },
    },
    handler: async (req) => ({ results: await s.events.clusters.listTopics(principalOf(req), req.params.cluster) }),
  });

  app.post('/v1/admin/event-clusters/:cluster/assignments', {
    schema: {
      operationId: 'eventAssignment.create',
      tags: ['events'],
      summary:
        'Assign an algorithm to a topic as publisher or subscriber (admin). Only published algorithms: an unpublished one is refused with 409 (code 8003), publish a version first. The flow starts disabled; its owner enables it and picks the version.',
      description: FLOWS_DOC,
      params: ClusterParams,
      body: Type.Object({
        algorithm: Type.String({ description: 'owner/name' }),
        topic: Type.String(),
        role: Type.Union([Type.Literal('publisher'), Type.Literal('subscriber')]),
      }),
      response: { 200: Type.Ref('EventFlow'), ...errorResponses(...AUTH_ERRORS, 404, 409, 503) },
    },
    handler: async (req) => flowJson(await s.events.flows.assign(principalOf(req), req.params.cluster, req.body)),
  });

  app.get('/v1/admin/event-clusters/:cluster/assignments', {
    schema: {
      operationId: 'eventAssignment.list',
      tags: ['events'],
      summary: 'The algorithms assigned to topics of a cluster (admin).',
      params: ClusterParams,
      response: { 200: List(Type.Ref('EventFlow')), ...errorResponses(...AUTH_ERRORS, 404) },
    },
    handler: async (req) => ({ results: (await s.events.flows.listAssignments(principalOf(req), req.params.cluster)).map(flowJson) }),
  });

  app.delete('/v1/admin/event-clusters/:cluster/assignments/:flow_id', {
    schema: {
      operationId: 'eventAssignment.delete',
      tags: ['events'],
      summary: 'Remove an assignment (admin); a running consumer stops.',
      params: Type.Object({ cluster: Type.String(), flow_id: Type.String() }),
      response: { 204: Type.Null(), ...errorResponses(...AUTH_ERRORS, 404) },
    },
    handler: async (req, reply) => {
      await s.events.flows.unassign(principalOf(req), req.params.cluster, req.params.flow_id);
      return reply.code(204).send(null);
    },
  });

  // ---- an algorithm's flows (owner and members) ----
  app.get('/v1/algorithms/:owner/:name/event-flows', {
    schema: {
      operationId: 'eventFlow.list',
      tags: ['events'],
      summary: 'The Event Flows of an algorithm with their consumers’ state and lag (owner and members).',
      description: FLOWS_DOC,
      params: AlgoParams,
      response: { 200: List(Type.Ref('EventFlow')), ...errorResponses(...AUTH_ERRORS, 404) },
    },
    handler: async (req) => ({
      results: (await s.events.flows.listFlows(principalOf(req), req.params.owner, req.params.name)).map(flowJson),
    }),
  });

  app.post('/v1/algorithms/:owner/:name/event-flows', {
    schema: {
      operationId: 'eventFlow.create',
      tags: ['events'],
      summary:
        'Subscribe the algorithm to an SQS or Azure Service Bus queue (owner and members with manage_algorithms). It starts disabled.',
      description: FLOWS_DOC,
      params: AlgoParams,
      body: Type.Union([
        Type.Object({
          source_type: Type.Literal('sqs'),
          source_uri: Type.String({
            pattern: QUEUE_URL_PATTERN,
            description: 'The queue URL; a host other than AWS SQS only when ALGOHOST_SQS_ENDPOINT_ALLOW allows it (403 otherwise).',
          }),
          credentials: Type.Union([
            Type.Object({
              role_arn: Type.String({
                description:
                  'An IAM role the node assumes with its own credentials, with the owner’s ExternalId (GET /v1/users/{user_id}/sqs-assume-role) that the role’s trust policy must require.',
              }),
            }),
            Type.Object({
              access_key_id: Type.String(),
              secret_access_key: Type.String({ description: 'Encrypted at rest; never returned.' }),
            }),
          ]),
          timeout: Type.Optional(
            Nullable(Type.Number({ description: `Seconds per call (default ${DEFAULT_FLOW_TIMEOUT_S}, at most 3000).` })),
          ),
        }),
        Type.Object({
          source_type: Type.Literal('servicebus'),
          source_uri: Type.String({
            pattern: SERVICEBUS_URI_PATTERN,
            description:
              'sb://<namespace>.servicebus.windows.net/<queue>; another host only when ALGOHOST_SERVICEBUS_ENDPOINT_ALLOW allows it (403 otherwise).',
          }),
          credentials: Type.Object({
            shared_access_key_name: Type.String({ description: 'A shared access policy with Listen rights.' }),
            shared_access_key: Type.String({ description: 'Encrypted at rest; never returned.' }),
          }),
          timeout: Type.Optional(
            Nullable(Type.Number({ description: `Seconds per call (default ${DEFAULT_FLOW_TIMEOUT_S}, at most 3000).` })),
          ),
        }),
      ]),
      response: { 200: Type.Ref('EventFlow'), ...errorResponses(...AUTH_ERRORS, 404, 409) },
    },
    handler: async (req) => flowJson(await s.events.flows.createQueueFlow(principalOf(req), req.params.owner, req.params.name, req.body)),
  });

  app.get('/v1/algorithms/:owner/:name/event-flows/:flow_id', {
    schema: {
      operationId: 'eventFlow.get',
      tags: ['events'],
      summary: 'One Event Flow of an algorithm.',
      params: FlowParams,
      response: { 200: Type.Ref('EventFlow'), ...errorResponses(...AUTH_ERRORS, 404) },
    },
    handler: async (req) => flowJson(await s.events.flows.getFlow(principalOf(req), req.params.owner, req.params.name, req.params.flow_id)),
  });

  app.patch('/v1/algorithms/:owner/:name/event-flows/:flow_id', {
    schema: {
      operationId: 'eventFlow.update',
      tags: ['events'],
      summary:
        'Enable or disable a flow, pick its published version, set its timeout (owner and members with manage_algorithms). Enabling without a version picks the latest published one.',
      params: FlowParams,
      body: Type.Object({
        enabled: Type.Optional(Type.Boolean()),
        version: Type.Optional(Nullable(Type.String({ description: 'A published version, e.g. 1.2.0.' }))),
        timeout: Type.Optional(Nullable(Type.Number())),
      }),
      response: { 200: Type.Ref('EventFlow'), ...errorResponses(...AUTH_ERRORS, 404, 409) },
    },
    handler: async (req) =>
      flowJson(await s.events.flows.updateFlow(principalOf(req), req.params.owner, req.params.name, req.params.flow_id, req.body)),
  });

  app.delete('/v1/algorithms/:owner/:name/event-flows/:flow_id', {
    schema: {
      operationId: 'eventFlow.delete',
      tags: ['events'],
      summary: 'Remove a queue flow (Kafka assignments are removed by admins; their owners disable them).',
      params: FlowParams,
      response: { 204: Type.Null(), ...errorResponses(...AUTH_ERRORS, 404) },
    },
    handler: async (req, reply) => {
      await s.events.flows.deleteFlow(principalOf(req), req.params.owner, req.params.name, req.params.flow_id);
      return reply.code(204).send(null);
    },
  });

  app.get('/v1/algorithms/:owner/:name/event-deliveries', {
    schema: {
      operationId: 'eventDelivery.list',
      tags: ['events'],
      summary: 'Deliveries of the algorithm’s flows, newest first: attempts, outcome, latency, dead-letter reason (owner and members).',
      params: AlgoParams,
      querystring: Type.Object({ ...PageQuery.properties, flow: Type.Optional(Type.String({ description: 'Only this flow’s.' })) }),
      response: { 200: Paged(Type.Ref('EventDelivery')), ...errorResponses(...AUTH_ERRORS, 404) },
    },
    handler: async (req) => {
      const page = parsePageRequest(req.query.limit, req.query.marker);
      const result = await s.events.flows.listDeliveries(principalOf(req), req.params.owner, req.params.name, {
        flowId: req.query.flow,
        page,
      });
      return pageJson(result, deliveryJson, requestUrl(s.links, req.url), page.limit);
    },
  });

  app.get('/v1/users/:user_id/sqs-assume-role', {
    schema: {
      operationId: 'eventFlow.assumeRole',
      tags: ['events'],
      summary:
        'What the account’s SQS flows send when they assume an IAM role (the account itself, organization members and admins): the ExternalId to require in the role’s trust policy, the SourceIdentity, and a trust policy to paste.',
      params: Type.Object({ user_id: Type.String({ description: 'The account’s id or name.' }) }),
      response: { 200: Type.Ref('SqsAssumeRole'), ...errorResponses(...AUTH_ERRORS, 404) },
    },
    handler: async (req) => {
      const { account, identity } = await s.events.credentials.assumeRoleSettings(principalOf(req), req.params.user_id);
      return {
        account: account.name,
        external_id: identity.externalId,
        source_identity: identity.sourceIdentity,
        trust_policy: trustPolicyOf(identity),
      };
    },
  });

  // ---- spec endpoint 7 ----
  app.get('/v1/users/:user_id/event-listeners', {
    schema: {
      operationId: 'eventListener.list',
      tags: ['events'],
      summary:
        'The subscriber flows configured natively on the algorithms an account owns (spec endpoint 7): the account itself, organization members and admins may list them. Flows made from inside algorithm code are not listed; nothing lists a whole cluster.',
      params: Type.Object({ user_id: Type.String({ description: 'The account’s id (GET /v1/users/{name} gives it) or its name.' }) }),
      response: { 200: Type.Array(Type.Ref('EventListener')), ...errorResponses(...AUTH_ERRORS, 404) },
    },
    handler: async (req) => s.events.flows.listeners(principalOf(req), req.params.user_id),
  });
}

function clusterJson(c: KafkaCluster) {
  return {
    id: c.id,
    name: c.name,
    bootstrap_servers: c.bootstrapServers,
    tls: c.tls,
    tls_ca_set: c.tlsCa !== null,
    sasl: c.saslMechanism && c.saslUsername ? { mechanism: c.saslMechanism, username: c.saslUsername } : null,
    created_at: c.createdAt,
  };
}

function flowJson({ flow: f, algorithm, cluster, status, assumeRole }: FlowView) {
  return {
    id: f.id,
    algorithm: `${algorithm.owner}/${algorithm.name}`,
    source_type: f.kind,
    role: f.role,
    cluster: cluster ? { id: cluster.id, name: cluster.name } : null,
    topic: f.topic,
    dead_letter_topic: f.kind === 'kafka' && f.role === 'subscriber' ? `${f.topic}.dlq` : null,
    source_uri: f.sourceUri,
    credentials:
      f.credentialsKind && f.credentialsId
        ? {
            kind: f.credentialsKind,
            id: f.credentialsId,
            ...(assumeRole ? { external_id: assumeRole.externalId, source_identity: assumeRole.sourceIdentity } : {}),
          }
        : null,
    timeout: f.timeoutSeconds,
    enabled: f.enabled,
    version: f.version,
    status,
    created_at: f.createdAt,
    updated_at: f.updatedAt,
  };
}

function deliveryJson(d: Delivery) {
  return {
    id: d.id,
    flow_id: d.flowId,
    source: d.source,
    attempts: d.attempts,
    outcome: d.outcome,
    error: d.error,
    dead_letter: d.deadLetter,
    request_id: d.requestId,
    latency_ms: d.latencyMs,
    created_at: d.createdAt,
  };
}
