/**
 * Refusing a request body that is too large, so the client reads why. Most HTTP clients send
 * the whole body before they read the answer, and the in-sandbox clients ask for
 * `Connection: close`: a 413 sent as soon as the headers arrive is followed by Node closing the
 * connection, and a client still sending its body then sees a broken pipe or a reset, never the
 * 413 and its message. So a body a little over its limit is read and dropped first; one far
 * over (more than DRAIN_MAX_BYTES announced) is refused at once, as reading it would cost more
 * than the answer is worth.
 */
import type { FastifyRequest } from 'fastify';

/** Bodies announced up to this size are read (and dropped) before they are refused. */
export const DRAIN_MAX_BYTES = 1024 * 1024;
/** A body that has not arrived by then is refused anyway (the connection's own limits apply too). */
const DRAIN_MAX_MS = 5000;

/** An onRequest hook's refusal of a body announced at `declared` bytes: `done(err)` once it is read, or at once when large. */
export function refuseOversizedBody(req: FastifyRequest, declared: number, err: Error, done: (err: Error) => void): void {
  if (declared > DRAIN_MAX_BYTES) return done(err);
  const raw = req.raw;
  let answered = false;
  const answer = () => {
    if (answered) return;
    answered = true;
    clearTimeout(timer);
    raw.off('end', answer).off('error', answer).off('close', answer);
    done(err);
  };
  const timer = setTimeout(answer, DRAIN_MAX_MS);
  raw.on('end', answer).on('error', answer).on('close', answer);
  raw.resume();
}
