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
import crypto from 'node:crypto';
import fs from 'node:fs';
import type net from 'node:net';
import type { PipeRequest } from '../../domain/calls/ports.js';
import { PipeConversation } from './pipe-conversation.js';
import { type CallOutcome, describe, FAILURE_OUTPUT_CHARS, RunnerFailure } from './runner-outcome.js';
import { openResponseFifo, type RunnerMounts, runnerSandboxSpec, type RunnerSpec } from './runner-sandbox.js';
import { type KillReason, type Outcome, type SandboxProcess, type Supervisor } from '../sandbox/supervisor.js';

const SENTINEL = 'PIPE_INIT_COMPLETE';

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
  /** The calls written to the harness and their answers; made once the harness is known. */
  private conversation: PipeConversation | undefined;
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
    return this.conversation?.mark !== undefined;
  }

  /** Starts the harness and resolves once it printed PIPE_INIT_COMPLETE. */
  async start(): Promise<void> {
    const loaded = await this.load();
    // Random per runner: a caller cannot put it in the output (an input the algorithm echoes)
    // to move where a call's output ends. Only the algorithm's own code can read it.
    const mark = loaded.command.outputMarks ? `algohost-output-mark-${crypto.randomBytes(16).toString('hex')}` : undefined;
    const conversation = new PipeConversation(mark, this.spec, (reason) => this.die(reason));
    this.conversation = conversation;
    const { fifo, sandboxEnd } = await openResponseFifo(this.spec.fifoDir, this.id, (chunk: string) => conversation.responseData(chunk));
    this.fifo = fifo;
    try {
      this.proc = await this.supervisor.start(runnerSandboxSpec(this.spec, loaded, mark, sandboxEnd));
    } catch (err) {
      this.cleanup();
      throw err;
    } finally {
      // The child has its copy (or there is no child): the host keeps only its read-write end.
      fs.close(sandboxEnd, () => {});
    }
    conversation.stdin = this.proc.stdin;
    this.proc.stdin.on('error', () => {});
    this.proc.stderr.setEncoding('utf8').on('data', (d: string) => {
      if (!this.loaded) this.keepTail(d);
      conversation.stderrData(d);
    });
    this.proc.done.then((outcome) => this.onExit(outcome));
    await this.loading(conversation);
  }

  /** Resolves the artifact and the harness command, and takes what load() opened. */
  private async load(): Promise<RunnerMounts> {
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
    return loaded;
  }

  /** Resolves once the harness printed PIPE_INIT_COMPLETE; from then on its stdout is the calls'. */
  private loading(conversation: PipeConversation): Promise<void> {
    return new Promise<void>((resolve, reject) => {
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
        this.proc.stdout.on('data', (x: string) => conversation.stdoutData(x));
        const rest = seen.slice(at + SENTINEL.length).replace(/^\r?\n/, '');
        if (rest) conversation.stdoutData(rest);
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
    return this.conversation!.call(request, timeoutMs);
  }

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
    this.conversation?.abandonWaiting();
  }

  /** Keeps the last 4000 or more characters of stderr, copying them only now and then. */
  private keepTail(text: string): void {
    this.stderrTail += text;
    if (this.stderrTail.length > 16_000) this.stderrTail = this.stderrTail.slice(-4000);
  }

  /** The process is gone: every call still written to it settles or fails (PipeConversation.end). */
  private onExit(outcome: Outcome): void {
    this.exited = outcome;
    this.conversation?.end(outcome);
    this.cleanup();
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
