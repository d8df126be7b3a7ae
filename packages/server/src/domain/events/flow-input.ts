/**
 * What Event Flows' requests say, checked: cluster connections, topic assignments, queue flows
 * and their credentials. Each parser refuses with the message the caller sees (400, or 403
 * for an endpoint this cluster may not reach).
 */
import { forbidden, invalid } from '../errors.js';
import { DEFAULT_FLOW_TIMEOUT_S, FLOW_ROLES, type FlowRole, SASL_MECHANISMS, type SaslMechanism } from './model.js';

/** The longest a delivery's call may run (the call API's maximum). */
const MAX_FLOW_TIMEOUT_S = 3000;
export const MAX_CLUSTER_NAME = 64;
/** Kafka's own rule for topic names. */
export const TOPIC_PATTERN = /^[A-Za-z0-9._-]{1,249}$/;
/** host:port, host a name or an IPv4 address or a bracketed IPv6 one. */
export const BROKER_PATTERN = /^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,252})|\[[0-9A-Fa-f:.]+\]):(\d{1,5})$/;
export const MAX_BROKERS = 32;
export const MAX_PEM_BYTES = 64 * 1024;
const MAX_CREDENTIAL = 1024;
/** SQS queue URLs at AWS: https://sqs.<region>.amazonaws.com/<account>/<queue> (also the legacy <region>.queue form). */
/** The shape of an SQS queue URL (the OpenAPI document states it): scheme, host, account, queue. */
export const QUEUE_URL_PATTERN = '^https?://[A-Za-z0-9.-]{1,253}(?::[0-9]{1,5})?/[0-9]{12}/[A-Za-z0-9_-]{1,80}(?:\\.fifo)?$';
const AWS_SQS_URL =
  /^https:\/\/(?:sqs\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?|([a-z0-9-]+)\.queue\.amazonaws\.com)\/\d{12}\/[A-Za-z0-9_-]{1,80}(?:\.fifo)?$/;
const ROLE_ARN = /^arn:aws[a-z-]*:iam::\d{12}:role\/[\w+=,.@/-]{1,512}$/;
/** The shape of a Service Bus queue URI (the OpenAPI document states it): sb://<namespace host>[:port]/<queue>. */
export const SERVICEBUS_URI_PATTERN = '^sb://[A-Za-z0-9.-]{1,253}(?::[0-9]{1,5})?/[A-Za-z0-9][A-Za-z0-9._-]{0,259}$';
/** Azure's Service Bus namespaces (public cloud, China, US Government). */
const AZURE_SERVICEBUS_HOST = /^[A-Za-z][A-Za-z0-9-]{4,48}[A-Za-z0-9]\.servicebus\.(?:windows\.net|chinacloudapi\.cn|usgovcloudapi\.net)$/;

/** Whether a host is one of Azure's Service Bus namespaces (spoken to with TLS); others only when allowed. */
export function isAzureServiceBusHost(hostname: string): boolean {
  return AZURE_SERVICEBUS_HOST.test(hostname);
}

export interface ClusterInput {
  name?: unknown;
  bootstrap_servers?: unknown;
  tls?: unknown;
  tls_ca?: unknown;
  sasl?: unknown;
}

export interface AssignmentInput {
  algorithm?: unknown;
  topic?: unknown;
  role?: unknown;
}

export interface FlowChanges {
  enabled?: unknown;
  version?: unknown;
  timeout?: unknown;
}

export interface QueueFlowInput {
  source_type?: unknown;
  source_uri?: unknown;
  credentials?: unknown;
  timeout?: unknown;
}

export function parseServiceBusUri(value: unknown, allow: readonly string[]): string {
  if (typeof value !== 'string' || value.length > 2048 || !new RegExp(SERVICEBUS_URI_PATTERN).test(value)) {
    throw invalid(
      `source_uri ${JSON.stringify(value)} is not a Service Bus queue URI: give sb://<namespace>.servicebus.windows.net/<queue>`,
    );
  }
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    // Of the URI's shape but not a URL (a port above 65535): no host this cluster may reach.
    url = undefined;
  }
  if (url && isAzureServiceBusHost(url.hostname) && url.port === '') return value;
  // Of the URI's shape, but not one this cluster may reach: a refusal of policy.
  if (!url || !allow.some((h) => h === url.host || h === url.hostname)) {
    throw forbidden(
      `source_uri "${value}" is not a Service Bus namespace this cluster may reach: use sb://<namespace>.servicebus.windows.net/<queue>` +
        ' (other endpoints only when the operator allows their host in ALGOHOST_SERVICEBUS_ENDPOINT_ALLOW)',
    );
  }
  return value;
}

export function parseQueueUrl(value: unknown, allow: readonly string[]): string {
  if (typeof value !== 'string' || value.length > 2048) throw invalid('source_uri must be the queue URL');
  if (AWS_SQS_URL.test(value)) return value;
  if (!new RegExp(QUEUE_URL_PATTERN).test(value)) {
    throw invalid(`source_uri "${value}" is not a queue URL: give https://sqs.<region>.amazonaws.com/<account>/<queue>`);
  }
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  // Of the queue URL's shape, but not one this cluster may reach: a refusal of policy.
  const allowed = url && allow.some((h) => h === url.host || h === url.hostname);
  if (!url || !allowed || url.username || url.password || url.search || url.hash) {
    throw forbidden(
      `source_uri "${value}" is not an SQS queue URL this cluster may reach: use https://sqs.<region>.amazonaws.com/<account>/<queue>` +
        ' (other endpoints only when the operator allows their host in ALGOHOST_SQS_ENDPOINT_ALLOW)',
    );
  }
  return url.toString();
}

/** A shared access policy: its name (shown as the listener's credentials) and key (sealed). */
export function parseServiceBusCredentials(value: unknown): { kind: 'static'; id: string; secret: string } {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || 'role_arn' in value) {
    throw invalid(
      'credentials of a Service Bus queue must be a shared access policy: {"shared_access_key_name", "shared_access_key"} (managed identities are not supported)',
    );
  }
  const v = value as Record<string, unknown>;
  const keyName = requiredString('credentials.shared_access_key_name', v.shared_access_key_name);
  const key = requiredString('credentials.shared_access_key', v.shared_access_key);
  // Both go into a connection string: its separators would change what it says.
  if (/[;=]/.test(keyName) || key.includes(';'))
    throw invalid('the shared access key name and key must not contain ";" (nor the name "=")');
  return { kind: 'static', id: keyName, secret: key };
}

export function parseRole(value: unknown): FlowRole {
  if (!(FLOW_ROLES as readonly unknown[]).includes(value)) throw invalid(`role must be one of ${FLOW_ROLES.join(', ')}`);
  return value as FlowRole;
}

export function parseTimeout(value: unknown): number | null {
  if (value === null) return null;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || value > MAX_FLOW_TIMEOUT_S) {
    throw invalid(
      `timeout must be a number of seconds above 0 and at most ${MAX_FLOW_TIMEOUT_S} (null = the default, ${DEFAULT_FLOW_TIMEOUT_S})`,
    );
  }
  return value;
}

export function optionalString(what: string, value: unknown, max: number): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' || value.length === 0 || value.length > max)
    throw invalid(`${what} must be a string of 1 to ${max} characters`);
  return value;
}

function requiredString(what: string, value: unknown): string {
  const s = optionalString(what, value, MAX_CREDENTIAL);
  if (s === null) throw invalid(`${what} is required`);
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) < 0x20) throw invalid(`${what} must not contain control characters`);
  return s;
}

export function parseSasl(value: unknown): { mechanism: SaslMechanism; username: string; password: string } | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'object' || Array.isArray(value)) throw invalid('sasl must be {mechanism, username, password}');
  const v = value as Record<string, unknown>;
  if (!(SASL_MECHANISMS as readonly unknown[]).includes(v.mechanism)) {
    throw invalid(`sasl.mechanism must be one of ${SASL_MECHANISMS.join(', ')}`);
  }
  return {
    mechanism: v.mechanism as SaslMechanism,
    username: requiredString('sasl.username', v.username),
    password: requiredString('sasl.password', v.password),
  };
}

export function parseQueueCredentials(value: unknown): { kind: 'role' | 'static'; id: string; secret: string | null } {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw invalid('credentials must be {"role_arn": "arn:aws:iam::…:role/…"} or {"access_key_id", "secret_access_key"}');
  }
  const v = value as Record<string, unknown>;
  if (v.role_arn !== undefined) {
    if (typeof v.role_arn !== 'string' || !ROLE_ARN.test(v.role_arn))
      throw invalid('credentials.role_arn must be an IAM role ARN (arn:aws:iam::<account>:role/<name>)');
    return { kind: 'role', id: v.role_arn, secret: null };
  }
  return {
    kind: 'static',
    id: requiredString('credentials.access_key_id', v.access_key_id),
    secret: requiredString('credentials.secret_access_key', v.secret_access_key),
  };
}
