/**
 * The pipe conversation with one runner's harness: the requests written to its stdin, the
 * responses read from its FIFO, and which call each piece of output belongs to. Calls settle in
 * the order they were written; a harness that writes output marks (see runner-process.ts) takes
 * more while it works on one.
 */
import type { Writable } from 'node:stream';
import type { PipeRequest, PipeResponse } from '../../domain/calls/ports.js';
import { pipeRequestChunks } from './pipe-request.js';
import { textNestsDeeperThan } from '../../lib/json-scan.js';
import { OutputMarks } from './output-marks.js';
import type { KillReason, Outcome } from '../sandbox/supervisor.js';
import { CallNotStarted, type CallOutcome, describe, FAILURE_OUTPUT_CHARS, RunnerFailure } from './runner-outcome.js';

interface PendingCall {
  /** Its place among the requests written to this runner (1-based): its output ends at mark `seq`. */
  seq: number;
  resolve: (o: CallOutcome) => void;
  reject: (e: Error) => void;
  timeoutMs: number;
  /** Armed from the moment the harness can read the request (behind another one: once that one is answered). */
  timer: NodeJS.Timeout | undefined;
  /** Written behind another call: performance.now() then, and later how long it waited. */
  queuedAt: number | undefined;
  waitedMs: number;
  output: string;
  /** Read from the FIFO; with output marks the call settles once its marks arrived too. */
  response?: PipeResponse;
}

const STDOUT_CAP = 1024 * 1024;
/**
 * Deepest nesting a response may have. Responses are re-serialized for the caller, and V8's
 * JSON.stringify overflows its stack on very deep values: a line deeper than this (a harness
 * would not write one; user code writing to fd 3 might) fails its call, never the server.
 */
const MAX_RESPONSE_DEPTH = 1000;

export class PipeConversation {
  /** The harness's stdin, once its process started. */
  stdin!: Writable;
  private responseBuffer = '';
  /** Calls written and not settled, in the order written: one without output marks. */
  private calls: PendingCall[] = [];
  private written = 0;
  /** Where each stream is at among this runner's output marks (when its harness writes them). */
  private readonly stdoutMarks: OutputMarks | undefined;
  private readonly stderrMarks: OutputMarks | undefined;

  constructor(
    /** This runner's output mark, when its harness writes marks. */
    readonly mark: string | undefined,
    /** The runner's limits (RunnerSpec), read when they apply. */
    private readonly limits: { readonly outputLimitBytes: number; readonly memoryBytes: number },
    /** Kills the runner's process tree (RunnerProcess.die). */
    private readonly die: (reason: KillReason) => void,
  ) {
    if (mark) {
      this.stdoutMarks = new OutputMarks(mark);
      this.stderrMarks = new OutputMarks(mark);
    }
  }

  /** See RunnerProcess.call. */
  call(request: PipeRequest, timeoutMs: number): Promise<CallOutcome> {
    // With marks, as many as the pool writes behind (it bounds them); without, one at a time.
    if (this.calls.length > 0 && !this.mark) return Promise.reject(new Error('runner is busy'));
    // No per-call named closures here: under tsx every one costs a defineProperty of its name.
    return new Promise<CallOutcome>((resolve, reject) => {
      const call: PendingCall = {
        seq: ++this.written,
        resolve,
        reject,
        timeoutMs,
        timer: undefined,
        queuedAt: undefined,
        waitedMs: 0,
        output: '',
      };
      this.calls.push(call);
      if (this.running() === call) this.arm(call);
      else call.queuedAt = performance.now();
      for (const chunk of pipeRequestChunks(request)) this.stdin.write(chunk);
    });
  }

  /** The call the harness is working on: the first one written whose response has not been read. */
  private running(): PendingCall | undefined {
    for (const c of this.calls) if (!c.response) return c;
    return undefined;
  }

  private arm(call: PendingCall): void {
    if (call.timer !== undefined) return;
    if (call.queuedAt !== undefined) call.waitedMs = performance.now() - call.queuedAt;
    call.timer = setTimeout(() => {
      // Killed first, while this is still the running call: a call behind it never began.
      this.die('timeout');
      this.fail(call, new RunnerFailure('TimeoutError', `the call exceeded its timeout of ${call.timeoutMs / 1000} s`));
    }, call.timeoutMs);
  }

  /** Settles a call with its response and output, and forgets it. */
  private settle(call: PendingCall): void {
    if (!this.forget(call)) return;
    call.resolve({ response: call.response!, stdout: call.output, waitedMs: call.waitedMs });
  }

  private fail(call: PendingCall, err: Error): void {
    if (this.forget(call)) call.reject(err);
  }

  private forget(call: PendingCall): boolean {
    const at = this.calls.indexOf(call);
    if (at < 0) return false;
    this.calls.splice(at, 1);
    clearTimeout(call.timer);
    return true;
  }

  /** Settles the oldest calls whose response and output marks (on both streams) have all arrived. */
  private readonly settleMarked = (): void => {
    for (;;) {
      const first = this.calls[0];
      if (!first?.response || this.stdoutMarks!.seen < first.seq || this.stderrMarks!.seen < first.seq) return;
      this.settle(first);
    }
  };

  /** The runner was told to die: a call waiting behind the running one is handed back at once, as it never began. */
  abandonWaiting(): void {
    const running = this.running();
    for (const c of [...this.calls]) if (!c.response && c !== running) this.fail(c, new CallNotStarted());
  }

  /**
   * The process is gone: a call already answered keeps its answer (with the output that
   * arrived), the call it was running fails with the reason it died, and one written behind that
   * never began.
   */
  end(outcome: Outcome): void {
    const running = this.running();
    for (const c of [...this.calls]) {
      if (c.response) this.settle(c);
      else if (c === running) this.fail(c, this.deathOf(outcome, c));
      else this.fail(c, new CallNotStarted());
    }
  }

  /**
   * Why the call it was running failed. Its exit is explained by that call's own output (with
   * marks, exactly what it printed; without, what arrived while it ran), never by the runner's
   * earlier output, which other callers' calls printed.
   */
  private deathOf(outcome: Outcome, call: PendingCall): RunnerFailure {
    if (outcome.kind === 'killed' && outcome.reason === 'memory') {
      return new RunnerFailure(
        'OutOfMemoryError',
        `the algorithm ran out of memory (limit ${Math.round(this.limits.memoryBytes / 1024 / 1024)} MiB)`,
      );
    }
    if (outcome.kind === 'killed' && outcome.reason === 'timeout') return new RunnerFailure('TimeoutError', 'the call timed out');
    const printed = call.output.trim().slice(-FAILURE_OUTPUT_CHARS);
    return new RunnerFailure('SystemExit', `the algorithm's process exited during the call (${describe(outcome)})`, printed || undefined);
  }

  /** What the algorithm printed on stdout once loaded. */
  stdoutData(d: string): void {
    this.captureOutput(d, this.stdoutMarks);
  }

  /** What the algorithm printed on stderr. */
  stderrData(d: string): void {
    this.captureOutput(d, this.stderrMarks);
  }

  /**
   * Output of the algorithm: without marks it belongs to the call in flight (none: dropped, as
   * between calls); with marks to the request the stream is at, if that call is still waiting
   * for it (stray prints between calls, or of a call already failed, are dropped).
   */
  private captureOutput(d: string, marks: OutputMarks | undefined): void {
    if (!marks) {
      const call = this.calls[0];
      if (call && call.output.length < STDOUT_CAP) call.output += d;
      return;
    }
    marks.feed(d, this.addOutput, this.settleMarked);
  }

  private readonly addOutput = (piece: string, seq: number): void => {
    for (const c of this.calls) if (c.seq === seq && c.output.length < STDOUT_CAP) c.output += piece;
  };

  /** What arrived on the response FIFO. */
  responseData(chunk: string): void {
    // Only the new chunk can end a line: a big response must not be rescanned per chunk.
    let from = this.responseBuffer.length;
    this.responseBuffer += chunk;
    if (this.responseBuffer.length > this.limits.outputLimitBytes * 1.4 + 4096) {
      this.responseBuffer = '';
      const p = this.running();
      this.die('output_limit');
      if (p) this.fail(p, new RunnerFailure('TooLargeError', `the output exceeds the limit of ${this.limits.outputLimitBytes / 1e6} MB`));
      return;
    }
    let nl: number;
    while ((nl = this.responseBuffer.indexOf('\n', from)) >= 0) {
      const line = this.responseBuffer.slice(0, nl);
      this.responseBuffer = this.responseBuffer.slice(nl + 1);
      from = 0;
      if (!line.trim()) continue;
      const p = this.running();
      if (!p) continue;
      const failure = this.acceptResponse(line, p);
      if (!failure) continue;
      this.fail(p, failure);
      const next = this.running();
      if (!next) continue;
      if (failure.errorType !== 'TooLargeError') {
        // Not a response the harness writes (user code wrote to the response channel): which
        // later line answers which call can no longer be told, so no call written behind may
        // take one, and any of them may have begun. The runner stops and they fail with it.
        for (const c of [...this.calls]) {
          if (c.response) continue;
          this.fail(
            c,
            new RunnerFailure(
              'SystemExit',
              'the runner was stopped: a call before this one got a response that was not valid, so its answers could no longer be matched to calls',
            ),
          );
        }
        this.die('cancelled');
        return;
      }
      // A well-formed response only refused for its size: the harness moved on to the next
      // request, whose timeout starts now.
      this.arm(next);
    }
  }

  /**
   * Takes a response line for call `p`: undefined when accepted (the call settles now, or once
   * its output marks arrived), else why the call fails (the runner itself stays fit to serve).
   */
  private acceptResponse(line: string, p: PendingCall): RunnerFailure | undefined {
    // Nesting deeper than the limit takes more opening brackets than a short line holds.
    if (line.length > MAX_RESPONSE_DEPTH && textNestsDeeperThan(line, MAX_RESPONSE_DEPTH)) {
      return new RunnerFailure('SystemExit', `the result nests arrays and objects deeper than the limit of ${MAX_RESPONSE_DEPTH} levels`);
    }
    let response: PipeResponse;
    try {
      response = JSON.parse(line) as PipeResponse;
    } catch {
      return new RunnerFailure('SystemExit', 'the runner wrote a response that is not JSON');
    }
    // User code can write to the FIFO too: `null` or `[]` must fail the call, not this process.
    if (typeof response !== 'object' || response === null || Array.isArray(response)) {
      return new RunnerFailure('SystemExit', 'the runner wrote a response that is not a JSON object');
    }
    // docs/compatibility.md §8: output ≤ 15 MB (binary counted as bytes, not base64).
    const size =
      response.metadata?.content_type === 'binary' && typeof response.result === 'string'
        ? (response.result.length * 3) / 4
        : Buffer.byteLength(line);
    if (size > this.limits.outputLimitBytes) {
      return new RunnerFailure(
        'TooLargeError',
        `the output of ${Math.round(size / 1e5) / 10} MB exceeds the limit of ${this.limits.outputLimitBytes / 1e6} MB`,
      );
    }
    p.response = response;
    if (this.mark) {
      // The harness now reads the call written behind this one, if any: its timeout starts.
      const next = this.running();
      if (next) this.arm(next);
      this.settleMarked();
    } else {
      // A harness without marks (an artifact built before them): output printed just before the
      // response may still be in the pipes, so their reads get one event-loop turn to land.
      setImmediate(() => this.settle(p));
    }
    return undefined;
  }
}
