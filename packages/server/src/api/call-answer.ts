/**
 * How the call API presents a call's outcome (docs/compatibility.md §2), for every edge that
 * answers one: the call route, the call lane (which also serves the sandboxes' API socket), an
 * async call's acceptance and its result. The envelope is JSON serialized here, not by the
 * route's response schema: the result stays as the algorithm gave it. A refusal is answered as
 * any other error of the API is (api/errors.ts): its kind's status, code and message.
 */
import type { CallEnvelope, CallOutcome, CallRefused } from '../domain/calls/request.js';
import type { DomainError } from '../domain/errors.js';
import { errorBody, errorHeaders, type Failure, refusalOf } from './errors.js';

/** With the charset Fastify would add to a JSON type, so that every edge answers alike. */
export const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * A call's answer: status, body and its type, and for a refusal what the edge logs and the
 * headers it adds (X-Error-Message, Retry-After).
 */
export type CallAnswer = { status: 200; contentType: string; body: string | Buffer; refusal?: undefined } | RefusalAnswer;

export interface RefusalAnswer {
  status: number;
  contentType: string;
  body: string;
  refusal: Failure;
  /** What was refused, for the edge's log line. */
  error: DomainError;
  /** The headers of an error answer, content type included. */
  headers: Record<string, string>;
}

/**
 * A sync call's answer: the envelope, or with `output=raw` the bare result as the body typed by
 * its content type (an algorithm's failure is always the envelope); a refusal as an API error.
 */
export function callAnswer(outcome: CallOutcome, output: string | undefined): CallAnswer {
  if (!outcome.ok) return refusalAnswer(outcome);
  if (output !== 'raw' || outcome.failed) return { status: 200, contentType: JSON_TYPE, body: JSON.stringify(outcome.envelope) };
  if (outcome.contentType === 'binary')
    return { status: 200, contentType: 'application/octet-stream', body: Buffer.from(String(outcome.result), 'base64') };
  if (outcome.contentType === 'text') return { status: 200, contentType: 'text/plain; charset=utf-8', body: String(outcome.result) };
  return { status: 200, contentType: JSON_TYPE, body: JSON.stringify(outcome.result ?? null) };
}

/** A refused call (sync or async) as the API answers any refusal. */
export function refusalAnswer({ error }: CallRefused): RefusalAnswer {
  const refusal = refusalOf(error);
  const body = errorBody(refusal.code, refusal.message);
  return { status: refusal.status, contentType: JSON_TYPE, body, refusal, error, headers: errorHeaders(refusal) };
}

/** An async call's state: running, then completed with the envelope a sync call would have answered. */
export function asyncStatusBody(requestId: string, status: string, envelope: CallEnvelope | null): string {
  if (envelope === null) return JSON.stringify({ request_id: requestId, status });
  if ('error' in envelope) return JSON.stringify({ request_id: requestId, status, error: envelope.error, metadata: envelope.metadata });
  return JSON.stringify({ request_id: requestId, status, result: envelope.result, metadata: envelope.metadata });
}
