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
