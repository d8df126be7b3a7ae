/**
 * Asynchronous calls (`output=void`, docs/compatibility.md §2): checked at once like a sync call (so a wrong
 * address or a limit is an HTTP error, not a result), then run in the background; the result is
 * kept for an hour in the database and read with GET /v1/algo/requests/{request_id}. The
 * original platform could not fetch async results; its users asked for it.
 */
import crypto from 'node:crypto';
import type { Logger } from '../logger.js';
import { type Clock, isoNow } from '../clock.js';
import { DomainError, Errors } from '../errors.js';
import type { Principal } from '../auth/principal.js';
import type { CallInput, CallService } from './call-service.js';
import type { AsyncRequest, AsyncRequestStore } from './ports.js';

export const ASYNC_RESULT_TTL_MS = 60 * 60 * 1000;

/** What AsyncCallService is made from (named, so the composition root reads as a list of parts). */
export interface AsyncCallServiceDeps {
  calls: CallService;
  store: AsyncRequestStore;
  clock: Clock;
  log: Logger;
  ttlMs?: number;
}

/**
 * The `calls.async-sweep` job (`jobs/catalog.ts`) calls `recoverInterrupted` at start and
 * `deleteExpired` on its schedule; the server calls `drain` once the runners have stopped.
 */
export class AsyncCallService {
  private readonly running = new Set<Promise<void>>();

  private readonly calls: CallService;
  private readonly store: AsyncRequestStore;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly ttlMs: number;

  constructor(deps: AsyncCallServiceDeps) {
    this.calls = deps.calls;
    this.store = deps.store;
    this.clock = deps.clock;
    this.log = deps.log;
    this.ttlMs = deps.ttlMs ?? ASYNC_RESULT_TTL_MS;
  }

  /**
   * Marks what the previous run of this node left running as failed (its runner is gone) and
   * removes expired results. One node serves its own async calls.
   */
  async recoverInterrupted(): Promise<void> {
    await this.store.completeAllRunning(
      failure('SystemExit', 'the service restarted while this call was running; call again'),
      this.expiry(),
    );
    await this.deleteExpired();
  }

  /** Removes results past their expiry. */
  async deleteExpired(): Promise<void> {
    await this.store.deleteExpired(isoNow(this.clock));
  }

  /** Waits for the results of calls still running to be written (they end once the runners stop). */
  async drain(): Promise<void> {
    await Promise.allSettled([...this.running]);
  }

  /** `done` settles (never rejects) when the call has ended and no longer holds its input. */
  async submit(p: Principal, input: CallInput): Promise<{ requestId: string; done: Promise<void> }> {
    await this.calls.check(p, input);
    const id = `req-${crypto.randomUUID()}`;
    await this.store.insert({
      id,
      accountId: p.account.id,
      status: 'running',
      envelope: null,
      createdAt: isoNow(this.clock),
      expiresAt: this.expiry(),
    });
    const done = this.calls
      .call(p, input)
      .then(
        (r) => r.envelope,
        // Something that passed check() and failed later (a limit reached meanwhile, a runner
        // that could not start): the result says what happened.
        (err: unknown) =>
          failure(
            err instanceof DomainError && (err.kind === 'limit' || err.kind === 'too_large') ? 'TooLargeError' : 'AlgorithmError',
            err instanceof Error ? err.message : String(err),
          ),
      )
      .then((envelope) => this.store.complete(id, envelope, this.expiry()))
      // The database did not take the result (it is gone, or failing): recoverInterrupted() of
      // the next start marks the request; say why here.
      .catch((err: unknown) => this.log.warn({ err, requestId: id }, 'the result of an async call could not be stored'))
      .finally(() => this.running.delete(done));
    this.running.add(done);
    return { requestId: id, done };
  }

  /** The request of the caller's account; others' and unknown ones are the same 404. */
  async get(p: Principal, id: string): Promise<AsyncRequest> {
    const request = /^req-[0-9a-f-]{36}$/.test(id) ? await this.store.get(id) : undefined;
    if (!request || request.accountId !== p.account.id || request.expiresAt < isoNow(this.clock)) {
      throw Errors.asyncRequestNotFound({ id, keptMinutes: Math.round(this.ttlMs / 60_000) });
    }
    return request;
  }

  private expiry(): string {
    return new Date(this.clock().getTime() + this.ttlMs).toISOString();
  }
}

function failure(errorType: string, message: string): Record<string, unknown> {
  return {
    error: { message, error_type: errorType, stacktrace: '', stack_trace: '' },
    metadata: { content_type: 'json', duration: 0 },
  };
}
