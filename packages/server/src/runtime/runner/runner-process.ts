/**
 * One warm runner: a language harness started once inside the sandbox for a built artifact,
 * speaking the pipe protocol (docs/compatibility.md §4): it loads the algorithm, prints PIPE_INIT_COMPLETE,
 * then reads one JSON request per stdin line and writes one JSON response per request to the
 * response FIFO. Whatever the algorithm prints meanwhile is that call's stdout.
 *
 * A harness that writes output marks (catalog/templates/README.md, "Output marks") ends each
 * request's output on stdout and stderr with this runner's random mark, so output is cut at the
 * marks rather than by when it arrived. Such a runner takes more requests while it works on
 * one (`pipelines`; the pool decides how many): the harness reads the next the moment it
 * answered, instead of waiting for this process to read the answer and write the next request
 * between its other work, and no call's prints ever join another's.
 *
 * The host keeps the FIFO open read-write (Linux allows it; it never blocks and never sees
 * EOF), so responses arrive as newline-delimited JSON on an ordinary non-blocking stream.
 *
 * Isolation between runners: a runner's FIFO has no name on the host. It is made in a
 * root-only directory, opened by the host at both ends and unlinked at once; the write end is
 * handed to the sandbox as fd 3, and the protocol's paths (/run/algohost/algoout and
 * /tmp/algoout) are symbolic links to /proc/self/fd/3 inside. Its writable directories
 * (/run/algohost and /tmp) are tmpfs of its own mount namespace, sized, and counted against its
 * memory. So nothing a runner can write or answer through lives in a host directory that
 * another runner could reach by path. Each runner also runs as a host uid of its own
 * (sandbox/uids.ts), so the kernel's per-uid limits are its own; artifacts and layers are
 * readable by all (the builder hands them back to the service with plain modes).
 */
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import type { PipeRequest, PipeResponse } from '../../domain/calls/ports.js';
import { pipeRequestChunks } from './pipe-request.js';
import { textNestsDeeperThan } from '../../lib/json-scan.js';
import { RUNNER_INSIDE, type RunnerCommand } from '../languages/adapter.js';
import { OutputMarks } from './output-marks.js';
import { type KillReason, type Mount, type Outcome, type SandboxProcess, type Supervisor } from '../sandbox/supervisor.js';

const execFileAsync = promisify(execFile);
const openAsync = promisify(fs.open);
const closeAsync = promisify(fs.close);

/** What a runner mounts and runs, resolved when it starts. */
export interface RunnerMounts {
  /** Host directory of the built artifact. */
  artifactDir: string;
  /** Host directory of the dependency layer, if the build made one. */
  layerDir: string | null;
  command: RunnerCommand;
  /** Mounts found when the runner starts (the API socket of a pipeline algorithm). */
  extraMounts?: Mount[];
  /** Frees what load() opened for this runner (its API socket) once the runner is gone. */
  release?: () => Promise<void>;
  /**
   * With `network: 'internet'`: the runner's own channel of the egress proxy (public addresses
   * only), closed when the runner ends.
   */
  egress?: { socket: string; close(): Promise<void> };
}

export interface RunnerSpec {
  /** The artifact's key (`<algorithm id>/<environment>/<commit>`), for diagnostics. */
  artifact: string;
  /** Resolves the artifact (its checked manifest) and the harness command; a rejection is a LoadingError. */
  load(): Promise<RunnerMounts>;
  /** Host directory of the language's harness. */
  harnessDir: string;
  /** Extra environment for the algorithm (ALGORITHMIA_API…), merged over the harness's. */
  env?: Record<string, string>;
  extraMounts?: Mount[];
  /** `internet`: outbound to public addresses through the egress proxy (RunnerMounts.egress); never the host's network. */
  network: 'none' | 'internet';
  memoryBytes: number;
  pids: number;
  cpus?: number;
  /** Parent CPU group shared by the runners of one account (cgroups.ts `Limits.cpuGroup`). */
  cpuGroup?: string;
  /** Largest response accepted (docs/compatibility.md §2: 15 MB of output), before base64 overhead. */
  outputLimitBytes: number;
  /** Root-only directory where the response FIFO is made (and unlinked at once). */
  fifoDir: string;
  /** How long load() may take. */
  startTimeoutMs: number;
}

export interface CallOutcome {
  response: PipeResponse;
  stdout: string;
  /** How long it waited in the runner behind another call before the harness could read it. */
  waitedMs?: number;
}

/** Failures of the runner itself, mapped to the platform's error types by the caller. */
export class RunnerFailure extends Error {
  constructor(
    readonly errorType: 'TimeoutError' | 'OutOfMemoryError' | 'SystemExit' | 'TooLargeError' | 'LoadingError',
    message: string,
    /**
     * The end of what explains it: the failing call's own output, or the load-time output. Kept
     * out of `message`, which every caller sees; output is for the algorithm's members only.
     */
    readonly output?: string,
  ) {
    super(message);
  }
}

/**
 * A call written behind another one that the runner never began (it died first): it ran nowhere
 * and can be sent to another runner as it is.
 */
export class CallNotStarted extends Error {
  constructor() {
    super('the runner stopped before it began this call');
  }
}

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

const SENTINEL = 'PIPE_INIT_COMPLETE';
/** Inside the sandbox the response FIFO is fd 3 (SandboxSpec.fds), reopened by path. */
const FIFO_FD_INSIDE = '/proc/self/fd/3';
const STDOUT_CAP = 1024 * 1024;
/** How much of the output that explains a failure goes with it (RunnerFailure.output). */
const FAILURE_OUTPUT_CHARS = 2000;
/**
 * Deepest nesting a response may have. Responses are re-serialized for the caller, and V8's
 * JSON.stringify overflows its stack on very deep values: a line deeper than this (a harness
 * would not write one; user code writing to fd 3 might) fails its call, never the server.
 */
export const MAX_RESPONSE_DEPTH = 1000;

export class RunnerProcess {
  readonly id = crypto.randomUUID();
  /** Output printed before PIPE_INIT_COMPLETE (load time). */
  loadOutput = '';
  private proc!: SandboxProcess;
  private fifo: net.Socket | undefined;
  /** What load() opened for this runner, freed by cleanup(). */
  private release: (() => Promise<void>) | undefined;
  private cleanedUp = false;
  /** The egress proxy channel of a full-network runner, closed with it. */
  private egress: RunnerMounts['egress'];
  private responseBuffer = '';
  /** Calls written and not settled, in the order written: one without output marks. */
  private calls: PendingCall[] = [];
  private written = 0;
  /** This runner's output mark (when its harness writes marks) and where each stream is at. */
  private mark: string | undefined;
  private stdoutMarks: OutputMarks | undefined;
  private stderrMarks: OutputMarks | undefined;
  private exited: Outcome | undefined;
  /** Told to die (output cap, timeout, stop, kill): never serves another call, even before it is gone. */
  private dying = false;
  /** The end of stderr while the runner loads, for the LoadingError when it exits before it is ready. */
  private stderrTail = '';
  /** PIPE_INIT_COMPLETE arrived: output from now on is the calls'. */
  private loaded = false;
  /** When the pool last had it answer a call (the pool keeps it, with its clock). */
  lastUsed = 0;

  constructor(
    private readonly supervisor: Supervisor,
    readonly spec: RunnerSpec,
  ) {}

  /** Host pid of the sandbox process tree, for measurements. */
  get pid(): number | undefined {
    return this.proc?.pid;
  }

  /** Running and fit to serve: false from the moment it is told to die, not only once it is gone. */
  get alive(): boolean {
    return this.proc !== undefined && this.exited === undefined && !this.dying;
  }

  /** Takes more calls while it runs one (its harness marks where each call's output ends). */
  get pipelines(): boolean {
    return this.mark !== undefined;
  }

  /** Starts the harness and resolves once it printed PIPE_INIT_COMPLETE. */
  async start(): Promise<void> {
    let loaded: RunnerMounts;
    try {
      loaded = await this.spec.load();
    } catch (err) {
      throw new RunnerFailure('LoadingError', `the algorithm's build cannot be run: ${(err as Error).message}`);
    }
    this.release = loaded.release;
    this.egress = loaded.egress;
    if (this.cleanedUp) {
      // Stopped while it loaded: what load() opened is freed, nothing starts.
      this.cleanup();
      throw new RunnerFailure('LoadingError', 'the runner was stopped while it started');
    }
    if (this.spec.network === 'internet' && !this.egress) {
      throw new RunnerFailure('LoadingError', 'a full-network runner needs an egress proxy channel, and none was opened');
    }
    if (loaded.command.outputMarks) {
      // Random per runner: a caller cannot put it in the output (an input the algorithm echoes)
      // to move where a call's output ends. Only the algorithm's own code can read it.
      this.mark = `algohost-output-mark-${crypto.randomBytes(16).toString('hex')}`;
      this.stdoutMarks = new OutputMarks(this.mark);
      this.stderrMarks = new OutputMarks(this.mark);
    }
    const sandboxEnd = await this.openFifo();
    const mounts: Mount[] = [
      { host: loaded.artifactDir, inside: RUNNER_INSIDE.app },
      { host: this.spec.harnessDir, inside: RUNNER_INSIDE.harness },
      ...(loaded.layerDir ? [{ host: loaded.layerDir, inside: RUNNER_INSIDE.deps }] : []),
      ...(this.spec.extraMounts ?? []),
      ...(loaded.extraMounts ?? []),
    ];
    try {
      this.proc = await this.supervisor.start({
        argv: loaded.command.argv,
        env: {
          PATH: '/usr/local/bin:/usr/bin:/bin',
          HOME: '/tmp',
          LANG: 'C.UTF-8',
          ...loaded.command.env,
          ...this.spec.env,
          ALGOHOST_RESPONSE_FIFO: RUNNER_INSIDE.responseFifo,
          ...(this.mark ? { ALGOHOST_OUTPUT_MARK: this.mark } : {}),
        },
        cwd: RUNNER_INSIDE.app,
        mounts,
        // The runner's writable places are its own tmpfs. A full one is an error for the
        // algorithm (ENOSPC), not a memory kill of the runner; both count against its memory.
        tmpfs: ['/tmp', path.dirname(RUNNER_INSIDE.responseFifo)],
        tmpfsBytes: Math.floor(this.spec.memoryBytes / 4),
        symlinks: [
          { target: FIFO_FD_INSIDE, inside: RUNNER_INSIDE.responseFifo },
          { target: FIFO_FD_INSIDE, inside: '/tmp/algoout' },
        ],
        fds: [sandboxEnd],
        network: this.spec.network,
        ...(this.egress ? { egressSocket: this.egress.socket } : {}),
        limits: { memoryBytes: this.spec.memoryBytes, pids: this.spec.pids, cpus: this.spec.cpus, cpuGroup: this.spec.cpuGroup },
        // Runners live until stopped; each call has its own timeout.
        wallTimeMs: 365 * 24 * 3600 * 1000,
        outputLimitBytes: Number.MAX_SAFE_INTEGER,
      });
    } catch (err) {
      this.cleanup();
      throw err;
    } finally {
      // The child has its copy (or there is no child): the host keeps only its read-write end.
      fs.close(sandboxEnd, () => {});
    }
    this.proc.stdin.on('error', () => {});
    this.proc.stderr.setEncoding('utf8').on('data', (d: string) => {
      if (!this.loaded) this.keepTail(d);
      this.captureOutput(d, this.stderrMarks);
    });
    this.proc.done.then((outcome) => this.onExit(outcome));

    await new Promise<void>((resolve, reject) => {
      let seen = '';
      const timer = setTimeout(() => {
        this.die('timeout');
        reject(
          new RunnerFailure('LoadingError', `the algorithm did not finish loading within ${Math.round(this.spec.startTimeoutMs / 1000)} s`),
        );
      }, this.spec.startTimeoutMs);
      const onData = (d: string) => {
        seen += d;
        const at = seen.indexOf(SENTINEL);
        if (at < 0) return;
        clearTimeout(timer);
        this.loaded = true;
        this.proc.stdout.off('data', onData);
        this.loadOutput = seen.slice(0, at);
        this.proc.stdout.on('data', (x: string) => this.captureOutput(x, this.stdoutMarks));
        const rest = seen.slice(at + SENTINEL.length).replace(/^\r?\n/, '');
        if (rest) this.captureOutput(rest, this.stdoutMarks);
        resolve();
      };
      this.proc.stdout.setEncoding('utf8').on('data', onData);
      this.proc.done.then((o) => {
        clearTimeout(timer);
        // What it printed (its stdout, then its stderr) may show the algorithm's code: output.
        const printed = (seen + this.stderrTail).trim().slice(-FAILURE_OUTPUT_CHARS);
        reject(new RunnerFailure('LoadingError', `the runner exited while loading (${describe(o)})`, printed || undefined));
      });
    });
  }

  /**
   * Sends one request; resolves with the response and what the algorithm printed. A runner that
   * pipelines takes more while a call runs: each waits in the harness's stdin, its timeout
   * counting from when the call before it is answered, and if the runner dies first it is
   * rejected with CallNotStarted.
   */
  call(request: PipeRequest, timeoutMs: number): Promise<CallOutcome> {
    if (!this.alive) return Promise.reject(new RunnerFailure('SystemExit', 'the runner is not running'));
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
      for (const chunk of pipeRequestChunks(request)) this.proc.stdin.write(chunk);
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

  /** Asks the harness to exit (a dying runner is not asked) and resolves once its process is gone. */
  async stop(): Promise<void> {
    if (this.proc !== undefined && this.exited === undefined) {
      let t: NodeJS.Timeout | undefined;
      if (!this.dying) {
        this.dying = true;
        this.proc.stdin.end(); // EOF on stdin: the harness exits 0
        t = setTimeout(() => this.proc.kill('cancelled'), 2000);
      }
      await this.proc.done;
      clearTimeout(t);
    }
    this.cleanup();
  }

  kill(): void {
    this.die('cancelled');
  }

  /**
   * Kills the process tree; from now on the runner is not alive, though its process may linger a
   * moment. A call waiting behind the running one is handed back at once: it never began.
   */
  private die(reason: KillReason): void {
    if (this.proc === undefined || this.exited !== undefined) return;
    this.dying = true;
    this.proc.kill(reason);
    const running = this.running();
    for (const c of [...this.calls]) if (!c.response && c !== running) this.fail(c, new CallNotStarted());
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

  /** Keeps the last 4000 or more characters of stderr, copying them only now and then. */
  private keepTail(text: string): void {
    this.stderrTail += text;
    if (this.stderrTail.length > 16_000) this.stderrTail = this.stderrTail.slice(-4000);
  }

  private readonly addOutput = (piece: string, seq: number): void => {
    for (const c of this.calls) if (c.seq === seq && c.output.length < STDOUT_CAP) c.output += piece;
  };

  private onResponseData(chunk: string): void {
    // Only the new chunk can end a line: a big response must not be rescanned per chunk.
    let from = this.responseBuffer.length;
    this.responseBuffer += chunk;
    if (this.responseBuffer.length > this.spec.outputLimitBytes * 1.4 + 4096) {
      this.responseBuffer = '';
      const p = this.running();
      this.die('output_limit');
      if (p) this.fail(p, new RunnerFailure('TooLargeError', `the output exceeds the limit of ${this.spec.outputLimitBytes / 1e6} MB`));
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
    if (size > this.spec.outputLimitBytes) {
      return new RunnerFailure(
        'TooLargeError',
        `the output of ${Math.round(size / 1e5) / 10} MB exceeds the limit of ${this.spec.outputLimitBytes / 1e6} MB`,
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

  /**
   * The process is gone: a call already answered keeps its answer (with the output that
   * arrived), the call it was running fails with the reason it died, and one written behind that
   * never began.
   */
  private onExit(outcome: Outcome): void {
    this.exited = outcome;
    const running = this.running();
    for (const c of [...this.calls]) {
      if (c.response) this.settle(c);
      else if (c === running) this.fail(c, this.deathOf(outcome, c));
      else this.fail(c, new CallNotStarted());
    }
    this.cleanup();
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
        `the algorithm ran out of memory (limit ${Math.round(this.spec.memoryBytes / 1024 / 1024)} MiB)`,
      );
    }
    if (outcome.kind === 'killed' && outcome.reason === 'timeout') return new RunnerFailure('TimeoutError', 'the call timed out');
    const printed = call.output.trim().slice(-FAILURE_OUTPUT_CHARS);
    return new RunnerFailure('SystemExit', `the algorithm's process exited during the call (${describe(outcome)})`, printed || undefined);
  }

  /**
   * Makes the response FIFO: the host's end (read-write, never EOF) becomes `this.fifo`; the
   * returned write end goes to the sandbox. The name is gone before any sandbox exists.
   */
  private async openFifo(): Promise<number> {
    const fifoPath = path.join(this.spec.fifoDir, this.id);
    let hostEnd: number | undefined;
    try {
      // The supervisor gives it to the runner's uid (the harness reopens it through
      // /proc/self/fd/3, which checks the FIFO's own permissions).
      await execFileAsync('mkfifo', ['-m', '0600', fifoPath]);
      hostEnd = await openAsync(fifoPath, fs.constants.O_RDWR | fs.constants.O_NONBLOCK | fs.constants.O_NOFOLLOW);
      // Blocking for the sandbox (its writes wait rather than fail); open returns at once: a reader exists.
      const sandboxEnd = await openAsync(fifoPath, fs.constants.O_WRONLY | fs.constants.O_NOFOLLOW);
      const fifo = new net.Socket({ fd: hostEnd, readable: true, writable: false });
      this.fifo = fifo;
      fifo.setEncoding('utf8');
      fifo.on('data', (chunk: string) => this.onResponseData(chunk));
      fifo.on('error', () => {});
      return sandboxEnd;
    } catch (err) {
      if (hostEnd !== undefined && !this.fifo) await closeAsync(hostEnd).catch(() => {});
      throw err;
    } finally {
      await fs.promises.rm(fifoPath, { force: true });
    }
  }

  private cleanup(): void {
    this.cleanedUp = true;
    this.fifo?.destroy();
    const release = this.release;
    this.release = undefined;
    release?.().catch(() => {});
    const egress = this.egress;
    this.egress = undefined;
    void egress?.close();
  }
}

function describe(o: Outcome): string {
  if (o.kind === 'exited') return `exit code ${o.code}`;
  return o.reason === 'signal' ? `killed by ${o.signal}` : `killed: ${o.reason}`;
}
