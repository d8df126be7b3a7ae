/**
 * The Kafka client library, loaded when a node first talks to Kafka. Importing it compiles its
 * protocol schemas (about 0.4 s of CPU), which every start of a node paid, Kafka flows or not.
 * Modules that use it import its types only (`import type`) and take its classes from here
 * (docs/performance.md, rule 13; eslint.config.js refuses any other import of it).
 */
type KafkaLibrary = typeof import('@platformatic/kafka');

let library: Promise<KafkaLibrary> | undefined;

export function kafkaLibrary(): Promise<KafkaLibrary> {
  library ??= import('@platformatic/kafka');
  return library;
}
