/**
 * How the call API presents a call (docs/compatibility.md §2), for every edge that answers one:
 * the call route, the call lane (which also serves the sandboxes' API socket), and the result of
 * an async call. The envelope is JSON serialized here, not by the route's response schema: the
 * result stays as the algorithm gave it.
 */
import type { CallResult } from '../domain/calls/request.js';

/** With the charset Fastify would add to a JSON type, so that every edge answers alike. */
export const JSON_TYPE = 'application/json; charset=utf-8';

/**
 * A sync call's answer: the envelope, or with `output=raw` the bare result as the body typed by
 * its content type (an algorithm's failure is always the envelope).
 */
export function callAnswer(result: CallResult, output: string | undefined): { contentType: string; body: string | Buffer } {
  if (output !== 'raw' || result.failed) return { contentType: JSON_TYPE, body: JSON.stringify(result.envelope) };
  if (result.contentType === 'binary')
    return { contentType: 'application/octet-stream', body: Buffer.from(String(result.result), 'base64') };
  if (result.contentType === 'text') return { contentType: 'text/plain; charset=utf-8', body: String(result.result) };
  return { contentType: JSON_TYPE, body: JSON.stringify(result.result ?? null) };
}

/** An async call's state: running, then completed with the envelope a sync call would have answered. */
export function asyncStatusBody(requestId: string, status: string, envelope: Record<string, unknown> | null): string {
  return JSON.stringify({ request_id: requestId, status, ...(envelope ?? {}) });
}
