/**
 * One delivery of a subscriber flow: a record or message becomes a call of the flow's version,
 * made as the algorithm's owner, and its outcome is recorded. The broker-specific parts (when
 * to retry, where dead letters go, committing or deleting) are in events/<broker>/.
 */
import crypto from 'node:crypto';
import { isUtf8 } from 'node:buffer';
import { isoNow, type Clock } from '../clock.js';
import type { ErrorKind } from '../errors.js';
import { flowPrincipal } from '../accounts/principal.js';
import { type AlgorithmCaller, MAX_INPUT_DEPTH } from '../calls/request.js';
import { scanJson } from '../../lib/json-scan.js';
import type { DeliveryOutcome, EventFlow } from './model.js';
import type { FlowTarget, WorkerFlows } from './worker-flows.js';

export interface DeliveryInput {
  body: Buffer;
  /** The Content-Type the producer named (a record header, a message attribute); sniffed when absent. */
  contentType?: string;
  /** What the algorithm sees as the call's event metadata (topic, partition, offset, key; message id…). */
  event: Record<string, string>;
}

export type CallOutcome =
  | { kind: 'succeeded'; requestId: string | null; latencyMs: number }
  /** The algorithm (or its runner) failed: retry, then dead-letter. */
  | { kind: 'failed'; error: string; requestId: string | null; latencyMs: number }
  /** The algorithm's runners or its owner's call limit are full: nothing ran; try again later. */
  | { kind: 'saturated'; error: string; latencyMs: number }
  /**
   * The input itself was refused before anything ran (not JSON it claims to be, nested too
   * deeply, too large, a type the call API does not take): every retry would be refused the same
   * way, so the broker adapters dead-letter it at once instead of returning it to the queue.
   */
  | { kind: 'refused'; error: string; latencyMs: number };

export interface DeliveryRecord {
  source: string;
  attempts: number;
  outcome: DeliveryOutcome;
  error?: string | null;
  deadLetter?: string | null;
  requestId?: string | null;
  latencyMs: number;
}

/** Reported for every recorded delivery (Prometheus counters and histograms). */
export type DeliveryObserver = (flow: EventFlow, outcome: DeliveryOutcome, latencyMs: number) => void;

const CONTENT_TYPES: Record<string, string> = {
  'application/json': 'application/json',
  'text/plain': 'text/plain',
  'application/text': 'text/plain',
  'application/octet-stream': 'application/octet-stream',
};

/**
 * The refusals of a call that concern its input alone. The flow's own settings (version,
 * timeout) were checked when it was saved, so a call of a delivery refused as one of these is
 * refused for the message's bytes, content type or event metadata, and would be on every try.
 */
const REFUSED_INPUT = new Set<ErrorKind>(['invalid', 'too_large', 'unsupported_media_type']);

/** How long a flow's target (its algorithm and owner) is reused: a record costs no lookups. */
const TARGET_TTL_MS = 2000;

export class FlowDeliveries {
  /** The last target of each flow, by flow id and its last change (a changed flow looks again). */
  private readonly targets = new Map<string, { key: string; target: FlowTarget; until: number }>();

  constructor(
    private readonly flows: WorkerFlows,
    private readonly calls: AlgorithmCaller,
    private readonly clock: Clock,
    private readonly observe: DeliveryObserver = () => {},
  ) {}

  /**
   * Where a flow's calls go, looked up at most every TARGET_TTL_MS per flow: on a flood each
   * record would otherwise read the algorithm and its owner again (a deleted algorithm's flows
   * are deleted with it and their workers stopped, so a stale answer lives at most that long).
   */
  private async targetOf(flow: EventFlow): Promise<FlowTarget | undefined> {
    const key = `${flow.version}|${flow.updatedAt}`;
    const cached = this.targets.get(flow.id);
    const now = performance.now();
    if (cached && cached.key === key && cached.until > now) return cached.target;
    const target = await this.flows.target(flow);
    if (target) this.targets.set(flow.id, { key, target, until: now + TARGET_TTL_MS });
    else this.targets.delete(flow.id);
    return target;
  }

  async call(flow: EventFlow, input: DeliveryInput): Promise<CallOutcome> {
    const started = performance.now();
    const elapsed = () => Math.round((performance.now() - started) * 1000) / 1000;
    const target = await this.targetOf(flow);
    if (!target) return { kind: 'failed', error: 'the flow has no version or its algorithm is gone', requestId: null, latencyMs: 0 };
    const { contentType, body, checkedJson } = inputOf(input);
    const outcome = await this.calls.call(flowPrincipal(target.owner), {
      address: target.address,
      contentType,
      body,
      checkedJson,
      timeoutSeconds: target.timeoutSeconds,
      event: input.event,
    });
    if (!outcome.ok) {
      const err = outcome.error;
      if (err.kind === 'limit' || err.kind === 'unavailable') return { kind: 'saturated', error: err.message, latencyMs: elapsed() };
      if (REFUSED_INPUT.has(err.kind)) return { kind: 'refused', error: `${err.kind}: ${err.message}`, latencyMs: elapsed() };
      // Refused before running for another reason (the version gone…): the owner may mend it, so
      // it is retried as a failure and ends in the dead letters.
      return { kind: 'failed', error: `${err.kind}: ${err.message}`, requestId: null, latencyMs: elapsed() };
    }
    const envelope = outcome.envelope;
    const requestId = envelope.metadata.request_id ?? null;
    if (!('error' in envelope)) return { kind: 'succeeded', requestId, latencyMs: elapsed() };
    return { kind: 'failed', error: `${envelope.error.error_type}: ${envelope.error.message}`, requestId, latencyMs: elapsed() };
  }

  async record(flow: EventFlow, r: DeliveryRecord): Promise<void> {
    await this.flows.recordDelivery({
      id: crypto.randomUUID(),
      flowId: flow.id,
      algorithmId: flow.algorithmId,
      source: r.source,
      attempts: r.attempts,
      outcome: r.outcome,
      error: r.error ?? null,
      deadLetter: r.deadLetter ?? null,
      requestId: r.requestId ?? null,
      latencyMs: r.latencyMs,
      createdAt: isoNow(this.clock),
    });
    this.observe(flow, r.outcome, r.latencyMs);
  }
}

/**
 * The call's input and its type: the producer's own Content-Type when it is one the call API takes,
 * else JSON when the bytes are JSON, text when they are UTF-8, binary otherwise.
 *
 * The bytes are scanned, never parsed: a message is whatever a producer sent, and parsing would
 * build all of it. JSON nested beyond the call API's limit is still JSON, so the call refuses
 * it and says why (and the message is dead-lettered), rather than running it as text.
 */
function inputOf(input: DeliveryInput): { contentType: string; body: Buffer; checkedJson: boolean } {
  const body = input.body;
  const named = input.contentType?.split(';')[0]!.trim().toLowerCase();
  if (named && CONTENT_TYPES[named]) return { contentType: CONTENT_TYPES[named], body, checkedJson: false };
  if (!isUtf8(body)) return { contentType: 'application/octet-stream', body, checkedJson: false };
  const scan = scanJson(body, MAX_INPUT_DEPTH);
  // Scanned once: a record that is JSON is not scanned again by the call.
  if (scan.ok) return { contentType: 'application/json', body, checkedJson: true };
  return { contentType: scan.reason === 'depth' ? 'application/json' : 'text/plain', body, checkedJson: false };
}
