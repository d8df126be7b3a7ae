import type { Environment } from '../catalog/model.js';
import type { CallEnvelope, CallRequest, ContentType } from './request.js';

/**
 * What a call asks of the runtime beside where it runs: its input and what the algorithm may see
 * while it runs. Named as the runners' pipe protocol names them, and made once per call: the
 * runtime writes it out as the request line without a copy (runtime/runner/pipe-request.ts);
 * a cluster's worker makes it again from the CallRequest it is sent (cluster/dispatch.ts).
 */
export interface PipeRequest {
  content_type: ContentType;
  /** JSON value, string, or base64 for binary. */
  data: unknown;
  /**
   * A JSON input as its checked text on one line (lib/json-scan.ts), sent in place of `data`:
   * the host never parses or re-serializes it, so its memory stays that of the bytes.
   */
  json?: Buffer;
  /** A key scoped to this call, for algorithms with pipeline_enabled (harnesses expose it as ALGORITHMIA_API_KEY). */
  api_key?: string;
  /**
   * Event Flows: where the input came from (`source`, `topic`, `partition`, `offset`, `key`; for
   * SQS `message_id`, `queue`), so the algorithm can be idempotent. Harnesses expose it as
   * ALGOHOST_EVENT (JSON) while the call runs.
   */
  event?: Record<string, string>;
  /**
   * Insights: a token for this call's reports (versions with insights_enabled only), which the
   * harness exposes as ALGOHOST_INSIGHTS_TOKEN while the call runs (domain/insights/).
   */
  insights_token?: string;
}

/** What the call service reports of a successful call of a published version. */
export interface SucceededCall {
  algorithmId: string;
  owner: string;
  name: string;
  version: string;
  requestId: string;
  contentType: ContentType | 'void';
  result: unknown;
}

/**
 * Hears of every successful call of a published version (Event Flows' publishers send its
 * result to their topic). Told on the call path and never awaited: it must not block.
 */
export interface CallObserver {
  succeeded(call: SucceededCall): void;
}

export interface PipeResponse {
  result?: unknown;
  metadata?: { content_type?: string };
  error?: { message?: string; error_type?: string; stacktrace?: string; stack_trace?: string };
}

/**
 * Where a call runs. One object may serve many calls (the call service makes one per resolution,
 * a cluster worker one per distinct call header) and the runtime may key its runners by it: it is
 * never changed once made.
 */
export interface RunTarget {
  /** The algorithm whose build runs (a cluster worker reads its settings by this, cluster/run-targets.ts). */
  algorithmId: string;
  /** Which runners can serve it: one warm pool per artifact. */
  artifact: string;
  algorithmName: string;
  environment: Environment;
  /** `internet` (network_access "full"): outbound to public addresses through the node's egress proxy. */
  network: 'none' | 'internet';
  /**
   * Whether the runner may reach the service's API (a Unix socket bound into the sandbox): for
   * pipeline_enabled algorithms and for versions with insights_enabled (their reports).
   */
  pipeline: boolean;
  /** The account whose code runs (the algorithm's owner): runners count against its limits. */
  owner: { id: string; name: string };
}

export interface Execution {
  response: PipeResponse;
  stdout: string;
  cold: boolean;
  queueMs: number;
  startMs: number;
  runMs: number;
}

/**
 * Runs calls on warm runners; throws RuntimeFailure when the runner, not the algorithm, fails.
 * `request` is what the runner is written; `call` is the call as its edge made it, which the
 * call service always gives: a runtime that hands calls on rather than running them sends that
 * (a cluster's API node, cluster/dispatch.ts). A worker running a call handed to it has none.
 */
export interface AlgorithmRuntime {
  execute(target: RunTarget, request: PipeRequest, timeoutMs: number, call?: CallRequest): Promise<Execution>;
}

export class RuntimeFailure extends Error {
  constructor(
    /** TimeoutError, OutOfMemoryError, SystemExit, TooLargeError, LoadingError, UnavailableError. */
    readonly errorType: string,
    message: string,
    /**
     * The end of what the algorithm printed that explains the failure: the failing call's own
     * output, or what it printed while loading. It is output, so only the algorithm's members
     * see it (call-service.ts); `message` goes to every caller.
     */
    readonly output?: string,
  ) {
    super(message);
  }
}

/** An asynchronous call (`output=void`) and, once it has finished, its envelope. */
export interface AsyncRequest {
  id: string;
  accountId: string;
  status: 'running' | 'completed';
  envelope: CallEnvelope | null;
  createdAt: string;
  expiresAt: string;
}

/** Where async calls and their results are kept (the metadata database), so a restart loses none. */
export interface AsyncRequestStore {
  insert(request: AsyncRequest): Promise<void>;
  /** Stores the result of a running request; false when it was completed already (by another worker). */
  complete(id: string, envelope: CallEnvelope, expiresAt: string): Promise<boolean>;
  get(id: string): Promise<AsyncRequest | undefined>;
  /** Requests still running when the service stopped: they can never complete. */
  completeAllRunning(envelope: CallEnvelope, expiresAt: string): Promise<number>;
  deleteExpired(now: string): Promise<number>;
}

/** One call of an Insights-enabled version, as the Insights area is told of it. */
export interface InsightsCall {
  owner: string;
  name: string;
  version: string;
  requestId: string;
}

/**
 * Insights tokens for calls (domain/insights fills it): a call of an Insights-enabled version
 * gets a token its reports carry, valid until the call ends. A port of calls, so that calls
 * depends on no area that reaches back to it (insights uses events, which uses calls).
 */
export interface InsightsTokens {
  openCall(call: InsightsCall): { token: string; close: () => void };
}
