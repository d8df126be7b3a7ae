/** A cluster connection as @platformatic/kafka's client options. */
import type { KafkaConnection } from '../../domain/events/model.js';

export interface ClientOptions {
  clientId: string;
  bootstrapBrokers: string[];
  tls?: { ca?: string; rejectUnauthorized: true };
  sasl?: { mechanism: 'PLAIN' | 'SCRAM-SHA-256' | 'SCRAM-SHA-512'; username: string; password: string };
  connectTimeout: number;
  requestTimeout: number;
  retries: number;
  retryDelay: number;
}

/**
 * Options of every client made for a connection: short connect and request timeouts with a few
 * retries, so an unreachable cluster is reported within seconds instead of hanging a request.
 */
export function clientOptions(connection: KafkaConnection, clientId: string): ClientOptions {
  return {
    clientId,
    bootstrapBrokers: connection.bootstrapServers,
    ...(connection.tls ? { tls: { ...(connection.tlsCa ? { ca: connection.tlsCa } : {}), rejectUnauthorized: true as const } } : {}),
    ...(connection.sasl ? { sasl: { ...connection.sasl } } : {}),
    connectTimeout: 5000,
    requestTimeout: 15_000,
    retries: 2,
    retryDelay: 250,
  };
}

/** What to do about a topic the cluster lacks: algohost never creates a tenant's topic (docs/users-guide.md). */
export function missingTopic(topic?: string): string {
  const which = topic ? `the topic "${topic}"` : 'a topic it names';
  return `${which} does not exist on the cluster: create it there (algohost creates only a topic's "<topic>.dlq", never the topic)`;
}

/**
 * A Kafka client's failure in words an operator acts on: each broker address with what went wrong
 * there (connection refused, timed out, host not found, TLS, authentication), instead of the
 * client's summary ("metadata failed 3 times."), which names neither.
 */
export function kafkaFailureReason(err: unknown): string {
  const reasons = new Set<string>();
  const walk = (e: unknown): void => {
    if (!(e instanceof Error)) {
      reasons.add(String(e));
      return;
    }
    const nested = (e as { errors?: unknown[] }).errors;
    if (Array.isArray(nested) && nested.length > 0) {
      for (const x of nested) walk(x);
      return;
    }
    reasons.add(leafReason(e));
  };
  walk(err);
  return [...reasons].join('; ');
}

function leafReason(e: Error & { code?: string; apiCode?: string }): string {
  const at = /^Connection to (\S+) (?:failed|timed out)\.$/.exec(e.message)?.[1];
  const cause = e.cause as (Error & { code?: string }) | undefined;
  const code = cause?.code ?? e.code ?? '';
  let what: string;
  if (code === 'ECONNREFUSED') what = 'connection refused';
  else if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') what = 'host not found';
  else if (code === 'ECONNRESET' || code === 'EPIPE') what = 'connection reset';
  else if (code === 'ETIMEDOUT' || /timed out/.test(e.message)) what = 'timed out';
  // Closed before any answer: something listens there but did not speak Kafka as configured (TLS, SASL).
  else if (e.message === 'Connection closed') what = 'the connection was closed before the broker answered';
  else if (/^(ERR_TLS|ERR_SSL|CERT_|DEPTH_ZERO|SELF_SIGNED|UNABLE_TO)/.test(code)) what = `TLS failed: ${cause?.message ?? e.message}`;
  else if (code === 'PLT_KFK_AUTHENTICATION' || /^SASL_/.test(e.apiCode ?? '')) what = `authentication failed: ${e.message}`;
  else if (e.apiCode === 'UNKNOWN_TOPIC_OR_PARTITION') what = missingTopic();
  else if (e.apiCode) what = `${e.apiCode}: ${e.message}`;
  else what = cause ? `${e.message} (${cause.message})` : e.message;
  return at ? `${at}: ${what}` : what;
}
