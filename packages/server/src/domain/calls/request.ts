/**
 * What a call asks for, as every edge builds it (the call route and the call lane, which also
 * serve the sandboxes' API socket, and Event Flows' deliveries), and the limits it is held to.
 */
import type { Principal } from '../accounts/principal.js';
import type { DomainError } from '../errors.js';

/** What a call's input or result is, as the runners' pipe protocol names it. */
export type ContentType = 'json' | 'text' | 'binary';

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
  /**
   * The body was scanned as JSON within MAX_INPUT_DEPTH by the edge already (Event Flows, which
   * scan a record to tell its type): the call does not scan it again.
   */
  checkedJson?: boolean;
  /** Seconds (default DEFAULT_TIMEOUT_S, at most MAX_TIMEOUT_S). */
  timeoutSeconds?: number;
  /** Include what the algorithm printed (owner and members only). */
  stdout?: boolean;
  /** Event Flows: where the input came from (topic, partition, offset, key…), shown to the algorithm. */
  event?: Record<string, string>;
}

/** What every call's answer says of it (docs/compatibility.md §2). */
export interface CallMetadata {
  content_type: ContentType | 'void';
  /** Seconds, from the call's start to its end. */
  duration: number;
  /** The rest once the call reached a runner. */
  request_id?: string;
  /** The published version that ran. */
  algorithm_version?: string;
  queue_ms?: number;
  start_ms?: number;
  run_ms?: number;
  cold_start?: boolean;
  /** What the algorithm printed: only when asked, and only for its members. */
  stdout?: string;
}

/** An algorithm's failure as its callers see it (its stack only when they may see its source). */
export interface AlgorithmFailure {
  message: string;
  error_type: string;
  stacktrace: string;
  /** The same as stacktrace (older clients read this name). */
  stack_trace: string;
}

/**
 * A call's outcome, in the very shape the call API answers (docs/compatibility.md §2): made
 * once by the call service and serialized as it is, never copied into another object.
 */
export type CallEnvelope = { result: unknown; metadata: CallMetadata } | { error: AlgorithmFailure; metadata: CallMetadata };

/**
 * A call that ran: the envelope, whether the algorithm succeeded or failed (an algorithm's
 * failure, a runner's timeout or crash are answered with `error` in the envelope, HTTP 200).
 */
export interface CallResult {
  ok: true;
  envelope: CallEnvelope;
  contentType: ContentType | 'void';
  /** The raw result for output=raw. */
  result: unknown;
  /** The envelope holds `error`: the algorithm or its runner failed. */
  failed: boolean;
}

/**
 * A call the call path refused instead of running it, or could not hand to a runner: why is
 * `error.kind` (not_found, forbidden, invalid, too_large, unsupported_media_type, limit when the
 * caller has too many calls in flight, unavailable when nothing can run it), and `error` is the
 * catalog's error (code, message, Retry-After) that each edge presents (api/call-answer.ts).
 */
export interface CallRefused {
  ok: false;
  error: DomainError;
}

/**
 * What the call path returns: a refusal is a value, never thrown, so that every edge (the call
 * route and lane, async calls, Event Flows, a cluster's workers) decides what it means for it.
 * Only an unexpected fault (a database gone) is still thrown.
 */
export type CallOutcome = CallResult | CallRefused;

/** Calls an algorithm: what callers outside domain/calls (Event Flows) depend on. */
export interface AlgorithmCaller {
  call(p: Principal, request: CallRequest): Promise<CallOutcome>;
}
