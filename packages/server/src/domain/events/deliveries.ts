/**
 * One delivery of a subscriber flow: a record or message becomes a call of the flow's version,
 * made as the algorithm's owner, and its outcome is recorded. The broker-specific parts (when
 * to retry, where dead letters go, committing or deleting) are in events/<broker>/.
 */
import crypto from 'node:crypto';
import { isUtf8 } from 'node:buffer';
import { isoNow, type Clock } from '../clock.js';
import { DomainError, type ErrorKind } from '../errors.js';
import { CALL_KEY_CAPABILITIES, type Principal } from '../accounts/principal.js';
import { MAX_INPUT_DEPTH, type CallService } from '../calls/call-service.js';
import { scanJson } from '../../lib/json-scan.js';
import type { DeliveryOutcome, EventFlow } from './model.js';
import type { EventService } from './event-service.js';

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

type Target = NonNullable<Awaited<ReturnType<EventService['target']>>>;

export class FlowDeliveries {
  /** The last target of each flow, by flow id and its last change (a changed flow looks again). */
  private readonly targets = new Map<string, { key: string; target: Target; until: number }>();

  constructor(
    private readonly events: EventService,
    private readonly calls: CallService,
    private readonly clock: Clock,
    private readonly observe: DeliveryObserver = () => {},
  ) {}

  /**
   * Where a flow's calls go, looked up at most every TARGET_TTL_MS per flow: on a flood each
   * record would otherwise read the algorithm and its owner again (a deleted algorithm's flows
   * are deleted with it and their workers stopped, so a stale answer lives at most that long).
   */
  private async targetOf(flow: EventFlow): Promise<Target | undefined> {
    const key = `${flow.version}|${flow.updatedAt}`;
    const cached = this.targets.get(flow.id);
    const now = performance.now();
    if (cached && cached.key === key && cached.until > now) return cached.target;
    const target = await this.events.target(flow);
    if (target) this.targets.set(flow.id, { key, target, until: now + TARGET_TTL_MS });
    else this.targets.delete(flow.id);
    return target;
  }

  async call(flow: EventFlow, input: DeliveryInput): Promise<CallOutcome> {
    const started = performance.now();
    const elapsed = () => Math.round((performance.now() - started) * 1000) / 1000;
    const target = await this.targetOf(flow);
    if (!target) return { kind: 'failed', error: 'the flow has no version or its algorithm is gone', requestId: null, latencyMs: 0 };
    // The flow acts as the algorithm's owner: the call counts against the owner's limits, and
    // a pipeline's calls inside it act for the owner too.
    const principal: Principal = { account: target.owner, via: 'standard_key', capabilities: new Set(CALL_KEY_CAPABILITIES), keyId: null };
    try {
      const result = await this.calls.call(principal, {
        path: target.path,
        contentType: contentTypeOf(input),
        body: input.body,
        timeout: String(target.timeoutSeconds),
        event: input.event,
      });
      const metadata = result.envelope.metadata as { request_id?: string } | undefined;
      const requestId = metadata?.request_id ?? null;
      if (!result.failed) return { kind: 'succeeded', requestId, latencyMs: elapsed() };
      const e = result.envelope.error as { error_type?: string; message?: string };
      return { kind: 'failed', error: `${e.error_type ?? 'AlgorithmError'}: ${e.message ?? ''}`, requestId, latencyMs: elapsed() };
    } catch (err) {
      if (err instanceof DomainError && (err.kind === 'limit' || err.kind === 'unavailable')) {
        return { kind: 'saturated', error: err.message, latencyMs: elapsed() };
      }
      if (err instanceof DomainError && REFUSED_INPUT.has(err.kind)) {
        return { kind: 'refused', error: `${err.kind}: ${err.message}`, latencyMs: elapsed() };
      }
      // Refused before running for another reason (the version gone…): the owner may mend it, so
      // it is retried as a failure and ends in the dead letters.
      if (err instanceof DomainError)
        return { kind: 'failed', error: `${err.kind}: ${err.message}`, requestId: null, latencyMs: elapsed() };
      throw err;
    }
  }

  async record(flow: EventFlow, r: DeliveryRecord): Promise<void> {
    await this.events.recordDelivery({
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
 * The call's input type: the producer's own Content-Type when it is one the call API takes,
 * else JSON when the bytes are JSON, text when they are UTF-8, binary otherwise.
 *
 * The bytes are scanned, never parsed: a message is whatever a producer sent, and parsing would
 * build all of it. JSON nested beyond the call API's limit is still JSON, so the call refuses
 * it and says why (and the message is dead-lettered), rather than running it as text.
 */
function contentTypeOf(input: DeliveryInput): string {
  const named = input.contentType?.split(';')[0]!.trim().toLowerCase();
  if (named && CONTENT_TYPES[named]) return CONTENT_TYPES[named];
  if (!isUtf8(input.body)) return 'application/octet-stream';
  const scan = scanJson(input.body, MAX_INPUT_DEPTH);
  return scan.ok || scan.reason === 'depth' ? 'application/json' : 'text/plain';
}
