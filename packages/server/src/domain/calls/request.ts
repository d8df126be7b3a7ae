/**
 * What a call asks for, as every edge builds it (the call route and the call lane, which also
 * serve the sandboxes' API socket, and Event Flows' deliveries), and the limits it is held to.
 */
import type { Principal } from '../auth/principal.js';
import type { ContentType } from './ports.js';

export const MAX_INPUT_BYTES = 10 * 1024 * 1024;
/**
 * How deeply arrays and objects in a JSON input may nest. Deeper inputs are refused (400) before
 * any work: re-serializing them overflowed the stack, and harnesses' parsers have limits of
 * their own (Python about 1000, serde_json 128 with the request around the input, Ruby 100).
 */
export const MAX_INPUT_DEPTH = 128;
export const DEFAULT_TIMEOUT_S = 300;
export const MAX_TIMEOUT_S = 3000;

/** An algorithm and which of its versions: `latest`, `latestPrivate`, x.y.z, a range or a commit. */
export interface AlgoAddress {
  owner: string;
  name: string;
  version?: string;
}

export interface CallRequest {
  /**
   * The algorithm called: already an address (Event Flows), or the path after /v1/algo/ as an
   * HTTP caller sent it (it may hold an algo:// prefix or a trailing slash). A path is parsed
   * only when the call service has not resolved it for this caller a moment ago, so a warm
   * HTTP call parses nothing.
   */
  address: AlgoAddress | string;
  /** The input's Content-Type as given (JSON, text or binary); none is JSON. */
  contentType: string | undefined;
  body: Buffer;
  /** Seconds (default DEFAULT_TIMEOUT_S, at most MAX_TIMEOUT_S). */
  timeoutSeconds?: number;
  /** Include what the algorithm printed (owner and members only). */
  stdout?: boolean;
  /** Event Flows: where the input came from (topic, partition, offset, key…), shown to the algorithm. */
  event?: Record<string, string>;
}

export interface CallResult {
  /** The envelope of docs/compatibility.md §2: {result, metadata} or {error, metadata}. */
  envelope: Record<string, unknown>;
  contentType: ContentType | 'void';
  /** The raw result for output=raw. */
  result: unknown;
  failed: boolean;
}

/** Calls an algorithm: what callers outside domain/calls (Event Flows) depend on. */
export interface AlgorithmCaller {
  call(p: Principal, request: CallRequest): Promise<CallResult>;
}
