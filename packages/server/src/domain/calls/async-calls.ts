/**
 * Asynchronous calls (`output=void`, docs/compatibility.md §2): checked at once like a sync call (so a wrong
 * address or a limit is an HTTP error, not a result), then run in the background; the result is
 * kept for an hour in the database and read with GET /v1/algo/requests/{request_id}. The
 * original platform could not fetch async results; its users asked for it.
 */
import crypto from 'node:crypto';
import type { Logger } from '../logger.js';
import { type Clock, isoNow } from '../clock.js';
import { Errors } from '../errors.js';
import type { Capability } from '../accounts/model.js';
import type { AccountStore } from '../accounts/ports.js';
import type { CallContext, CredentialKind, Principal } from '../accounts/principal.js';
import type { CallService } from './call-service.js';
import type { CallEnvelope, CallOutcome, CallRefused, CallRequest } from './request.js';
import type { AsyncRequest, AsyncRequestStore } from './ports.js';

export const ASYNC_RESULT_TTL_MS = 60 * 60 * 1000;

/** What AsyncCallService is made from (named, so the composition root reads as a list of parts). */
export interface AsyncCallServiceDeps {
  calls: CallService;
  store: AsyncRequestStore;
  clock: Clock;
  log: Logger;
  ttlMs?: number;
  /**
   * Cluster mode: hands each accepted call to the workers as durable work (a worker then calls
   * runDispatched). Unset: the call runs in this process.
   */
  dispatch?: AsyncDispatch;
  /** Cluster mode, on workers: whose account a dispatched call acts for. */
  accounts?: AccountStore;
}

/** An accepted async call as it travels to a worker: the caller by reference, the input whole. */
export interface AsyncJob {
  requestId: string;
  caller: { accountId: string; via: CredentialKind; capabilities: Capability[]; keyId: string | null; call?: CallContext };
  input: CallRequest;
  /** Its environment needs a GPU: only workers that declare one take it. */
  gpu?: boolean;
}

/** An async call accepted: `done` settles (never rejects) when it has ended and no longer holds its input. */
export interface AsyncSubmitted {
  ok: true;
  requestId: string;
  done: Promise<void>;
}

/** Cluster mode: how an accepted async call reaches a worker. Resolves once the work is stored durably. */
export interface AsyncDispatch {
  submitted(job: AsyncJob): Promise<void>;
}

/** Deliveries of one async call after which it is given up (each worker running it went silent). */
const MAX_DELIVERIES = 3;

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
    this.dispatch = deps.dispatch;
    this.accounts = deps.accounts;
  }

  private readonly dispatch?: AsyncDispatch;
  private readonly accounts?: AccountStore;

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

  /** Checked like a sync call (a refusal is answered at once), then run in the background. */
  async submit(p: Principal, input: CallRequest): Promise<AsyncSubmitted | CallRefused> {
    const checked = await this.calls.check(p, input);
    if (!checked.ok) return checked;
    const environment = checked.environment;
    const id = `req-${crypto.randomUUID()}`;
    await this.store.insert({
      id,
      accountId: p.account.id,
      status: 'running',
      envelope: null,
      createdAt: isoNow(this.clock),
      expiresAt: this.expiry(),
    });
    if (this.dispatch) {
      const { account, via, capabilities, keyId, call } = p;
      try {
        await this.dispatch.submitted({
          requestId: id,
          caller: { accountId: account.id, via, capabilities: [...capabilities], keyId, ...(call ? { call } : {}) },
          input,
          ...(environment.machine_type === 'GPU' ? { gpu: true } : {}),
        });
      } catch (err) {
        // Not accepted after all: the request is closed and the caller told to retry.
        const message = `the call could not be handed to the workers (${(err as Error).message}); call again`;
        await this.store.complete(id, failure('SystemExit', message), this.expiry());
        return { ok: false, error: Errors.unavailable(message) };
      }
      return { ok: true, requestId: id, done: Promise.resolve() };
    }
    const done = this.calls
      .call(p, input)
      .then(envelopeOf, faultEnvelope)
      .then(async (envelope) => void (await this.store.complete(id, envelope, this.expiry())))
      // The database did not take the result (it is gone, or failing): recoverInterrupted() of
      // the next start marks the request; say why here.
      .catch((err: unknown) => this.log.warn({ err, requestId: id }, 'the result of an async call could not be stored'))
      .finally(() => this.running.delete(done));
    this.running.add(done);
    return { ok: true, requestId: id, done };
  }

  /**
   * Cluster mode, on a worker: runs one call taken from the work queue and resolves once its
   * result is stored (the worker acknowledges the work only then). A request already completed
   * (by a worker that stored its result and died before acknowledging) is not run again; one
   * delivered MAX_DELIVERIES times is given up as SystemExit. A job whose caller is not the
   * request's account is dropped without touching the request.
   */
  async runDispatched(job: AsyncJob, delivery: number): Promise<void> {
    const request = await this.store.get(job.requestId);
    if (!request || request.status === 'completed') return;
    // The job runs as the account that made the request, never as another one it names: the
    // request's record is the API node's, written before the job was sent.
    if (job.caller.accountId !== request.accountId) {
      this.log.warn({ requestId: job.requestId }, 'an async job naming another caller than its request was dropped, not run');
      return;
    }
    const account = await this.accounts?.findById(job.caller.accountId);
    let envelope: CallEnvelope;
    if (!account) {
      envelope = failure('AlgorithmError', 'the calling account no longer exists');
    } else if (delivery > MAX_DELIVERIES) {
      envelope = failure('SystemExit', `the workers running this call stopped ${MAX_DELIVERIES} times; call again`);
    } else {
      const { via, capabilities, keyId, call } = job.caller;
      const p: Principal = { account, via, capabilities: new Set(capabilities), keyId, ...(call ? { call } : {}) };
      envelope = await this.calls.call(p, job.input).then(envelopeOf, faultEnvelope);
    }
    await this.store.complete(job.requestId, envelope, this.expiry());
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

/**
 * What an async call's result says of its outcome. A refusal here passed check() and was
 * refused later (a limit reached meanwhile, no worker left to run it): the result says what
 * happened, as an algorithm's failure would.
 */
function envelopeOf(outcome: CallOutcome): CallEnvelope {
  if (outcome.ok) return outcome.envelope;
  const kind = outcome.error.kind;
  return failure(kind === 'limit' || kind === 'too_large' ? 'TooLargeError' : 'AlgorithmError', outcome.error.message);
}

/** A fault of the call (not a refusal: a database gone) as the result of the async call. */
function faultEnvelope(err: unknown): CallEnvelope {
  return failure('AlgorithmError', err instanceof Error ? err.message : String(err));
}

function failure(errorType: string, message: string): CallEnvelope {
  return {
    error: { message, error_type: errorType, stacktrace: '', stack_trace: '' },
    metadata: { content_type: 'json', duration: 0 },
  };
}
