/**
 * A worker of the cluster: takes builds and async calls from JetStream, a few at a time, and
 * answers sync calls sent to it over NATS, running all of them on this node (its builder and
 * runner pool). The `cluster.worker` job (jobs/catalog.ts) starts it, has it announce itself
 * every few seconds (its presence entry: load, warm artifacts, GPU, flow statuses; API nodes
 * route sync calls from these, cluster/directory.ts), and stops it. A worker that declares a GPU
 * also takes the GPU environments' builds and async calls, in slots of their own.
 *
 * Durable work is acknowledged only once its outcome is recorded in the database; while it
 * runs the worker tells JetStream it is still working, so a message comes back to another
 * worker only when this one went silent (killed, cut off) for the ack wait.
 */
import os from 'node:os';
import type { JsMsg, Consumer } from '@nats-io/jetstream';
import { Empty, type Msg, type Subscription, TimeoutError } from '@nats-io/transport-node';
import type { BuildService, DispatchOutcome } from '../domain/builds/build-service.js';
import type { AsyncCallService } from '../domain/calls/async-calls.js';
import { type AlgorithmRuntime, type RunTarget, RuntimeFailure } from '../domain/calls/ports.js';
import { DomainError, Errors } from '../domain/errors.js';
import type { ConsumerStatus } from '../domain/events/model.js';
import { type CallKeyRef, HEARTBEAT_MS, openAsyncJob, openBuildWork, pipeRequestOf, type RunReply, RunMessageReader } from './dispatch.js';
import { signPresence, type PresenceEntry } from './directory.js';
import { Slots } from '../lib/slots.js';
import { encodeFrame } from './frames.js';
import { artifactToken, type NatsCluster } from './nats-cluster.js';
import { MESSAGE_WINDOW_MS, MessageRefused } from './signed-messages.js';

type DeepReadonlyRef = Readonly<Omit<CallKeyRef, 'capabilities'>> & {
  readonly capabilities: readonly CallKeyRef['capabilities'][number][];
};

export interface WorkerLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface ClusterWorkerDeps {
  cluster: NatsCluster;
  builds: BuildService;
  asyncCalls: AsyncCallService;
  /** This node's runner pool. */
  runtime: AlgorithmRuntime;
  /** Makes an API node's call key valid here for one call (KeyService.adoptCallKey); undefined when its account is gone. */
  adoptCallKey: (secret: string, ref: CallKeyRef, ttlMs: number) => Promise<(() => void) | undefined>;
  /**
   * Where a sync call of this build of this algorithm runs, from the database
   * (cluster/run-targets.ts); a DomainError when the build is not a succeeded build of it.
   */
  runTarget: (algorithmId: string, artifact: string, insights: boolean) => Promise<RunTarget>;
  /** The artifacts this node has warm runners of (the pool's), for routing sync calls here. */
  warmArtifacts: () => Set<string>;
  /** This node's warm runners (busy or idle). */
  warmRunners: () => number;
  /** What the subscriber flows running here report, by flow id. */
  flows: () => Record<string, ConsumerStatus>;
  settings: { buildSlots: number; asyncSlots: number; ackWaitMs: number; gpu: boolean };
  log: WorkerLog;
}

/** How long one pull for work waits on an empty queue before asking again (and seeing a stop). */
const PULL_EXPIRES_MS = 2000;
/** A build whose algorithm has another build running is offered again after this long. */
const BUSY_DELAY_MS = 2000;
/** Announcing after a reconnection: tries, this far apart (JetStream's recovery takes a moment). */
const REANNOUNCE_TRIES = 20;
const REANNOUNCE_RETRY_MS = 250;

export class ClusterWorker {
  private stopping = false;
  private readonly loops: Promise<void>[] = [];
  private subscription: Subscription | undefined;
  private readonly startedAt = new Date().toISOString();
  private callsInFlight = 0;
  /** The sync calls running here (the message and its nonce, which answers are bound to), each heartbeaten until its answer goes. */
  private readonly running = new Slots<{ msg: Msg; nonce: Buffer }>();
  private readonly reader = new RunMessageReader();
  /** Numbers this worker's reports (entries and call answers), so a reader keeps the newest. */
  private seq = 0;

  constructor(private readonly deps: ClusterWorkerDeps) {}

  async start(): Promise<void> {
    const { cluster, settings } = this.deps;
    const { stream, consumers } = cluster.names;
    const kinds: [string, string][] = [[consumers.build, consumers.async]];
    if (settings.gpu) kinds.push([consumers.gpuBuild, consumers.gpuAsync]);
    for (const [build, async] of kinds) {
      const builds = await consumerAtStart(cluster, stream, build);
      const calls = await consumerAtStart(cluster, stream, async);
      for (let i = 0; i < settings.buildSlots; i++) this.loops.push(this.pull(builds, (m) => this.build(m)));
      for (let i = 0; i < settings.asyncSlots; i++) this.loops.push(this.pull(calls, (m) => this.asyncCall(m)));
    }
    this.serve();
    cluster.link.onReconnect(() => void this.announceOnReconnect());
    await this.announce();
    // API nodes route to a worker once they see this entry; the line says it is there (tests wait for it).
    this.deps.log.info({ worker: cluster.nodeId }, `cluster worker ${cluster.nodeId} announced: taking builds and calls`);
  }

  /** Renews the presence entry. */
  async announce(): Promise<void> {
    const { cluster, settings } = this.deps;
    const warmRunners = this.deps.warmRunners();
    const entry: PresenceEntry = {
      id: cluster.nodeId,
      host: os.hostname(),
      pid: process.pid,
      startedAt: this.startedAt,
      gpu: settings.gpu,
      load: warmRunners + this.callsInFlight,
      warmRunners,
      callsInFlight: this.callsInFlight,
      warm: [...this.deps.warmArtifacts()].map(artifactToken),
      flows: this.deps.flows(),
      seq: ++this.seq,
    };
    await cluster.workers.put(cluster.nodeId, signPresence(cluster, entry));
  }

  /**
   * After nats-server restarted: API nodes route to this worker again once they hear its entry,
   * and its next renewal may be seconds away (or its entry expired while NATS was down), so it
   * announces itself at once. JetStream may still be recovering its store for a moment after the
   * connection is back, hence the few tries.
   */
  private async announceOnReconnect(): Promise<void> {
    for (let attempt = 1; !this.stopping && this.deps.cluster.link.connected; attempt++) {
      try {
        await this.announce();
        this.deps.log.info({ worker: this.deps.cluster.nodeId }, 'cluster worker announced again: NATS is back');
        return;
      } catch (err) {
        if (attempt >= REANNOUNCE_TRIES) {
          this.deps.log.warn({ err }, 'cluster worker: announcing after NATS came back failed; the next renewal tries again');
          return;
        }
        await new Promise((r) => setTimeout(r, REANNOUNCE_RETRY_MS));
      }
    }
  }

  /**
   * Stops taking work; builds in progress are cancelled and go back to the queue for another
   * worker. Async calls still running end when the runners stop, after this: drain() then
   * waits for their outcomes to be recorded.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    this.subscription?.unsubscribe();
    await this.deps.builds.stop();
    await this.deps.cluster.workers.delete(this.deps.cluster.nodeId).catch(() => {});
  }

  async drain(): Promise<void> {
    this.stopping = true;
    await Promise.all(this.loops);
  }

  private async pull(consumer: Consumer, handle: (m: JsMsg) => Promise<DispatchOutcome>): Promise<void> {
    while (!this.stopping) {
      let m: JsMsg | null;
      try {
        m = await consumer.next({ expires: PULL_EXPIRES_MS });
      } catch (err) {
        if (this.stopping) return;
        this.deps.log.warn({ err }, 'cluster worker: pulling work failed; retrying');
        await new Promise((r) => setTimeout(r, 1000));
        continue;
      }
      if (!m) continue;
      const msg = m;
      // Progress reports keep the message ours while the work runs (three per ack wait).
      const beat = setInterval(() => msg.working(), Math.max(250, Math.floor(this.deps.settings.ackWaitMs / 3)));
      try {
        const outcome = await handle(msg);
        if (outcome === 'busy') msg.nak(BUSY_DELAY_MS);
        else if (outcome === 'stopped') msg.nak();
        else await msg.ackAck().catch(() => msg.ack());
      } catch (err) {
        this.deps.log.error({ err, subject: msg.subject }, 'cluster worker: a piece of work failed; it is offered again');
        msg.nak(BUSY_DELAY_MS);
      } finally {
        clearInterval(beat);
      }
    }
  }

  private async build(m: JsMsg): Promise<DispatchOutcome> {
    let buildId: string;
    try {
      buildId = openBuildWork(this.deps.cluster, m.subject, m.data);
    } catch (err) {
      return this.unsigned(err);
    }
    return this.deps.builds.runDispatched(buildId, m.info.redelivered);
  }

  private async asyncCall(m: JsMsg): Promise<DispatchOutcome> {
    let job;
    try {
      job = openAsyncJob(this.deps.cluster, m.subject, m.data);
    } catch (err) {
      return this.unsigned(err);
    }
    this.callsInFlight++;
    try {
      await this.deps.asyncCalls.runDispatched(job, m.info.deliveryCount);
      return 'done';
    } finally {
      this.callsInFlight--;
    }
  }

  /**
   * Work whose MAC does not verify (made or changed without the cluster key): acknowledged, so
   * it leaves the stream, and never run. The signer logged it.
   */
  private unsigned(err: unknown): DispatchOutcome {
    if (err instanceof MessageRefused) return 'done';
    throw err;
  }

  /** Answers the sync calls API nodes send to this worker: only those signed for this worker's subject and their reply subject. */
  private serve(): void {
    const { cluster } = this.deps;
    this.subscription = cluster.nc.subscribe(cluster.names.subjects.runOn(cluster.nodeId), {
      callback: (err, msg) => {
        if (err || !msg.reply) return;
        let opened;
        try {
          opened = cluster.signer.open('run', msg.subject, msg.reply, msg.data, { windowMs: MESSAGE_WINDOW_MS, once: true });
        } catch {
          return; // not an API node's, or sent before: no answer at all
        }
        const { payload, nonce } = opened;
        const running = { msg, nonce: Buffer.from(nonce) };
        const slot = this.running.put(running);
        void this.run(payload).then((reply) => {
          this.running.take(slot);
          msg.respond(this.answer(running, reply));
        });
      },
    });
    // Heartbeats while calls run tell their callers this worker is alive (see NatsRuntime): one
    // timer for all of them, since a timer armed and cleared per call is a cost on every call.
    // Once stopping, calls still running (until the runners stop) keep their heartbeats.
    const heartbeat = setInterval(() => {
      for (const [, running] of this.running.entries()) running.msg.respond(this.answer(running, Empty));
      if (this.stopping && this.running.size === 0) clearInterval(heartbeat);
    }, HEARTBEAT_MS);
    heartbeat.unref();
  }

  /**
   * Makes the call's key valid on this worker for the call: only for an algorithm that may call
   * the API (pipeline), and only when the key's call context names the algorithm this call runs.
   * The reference itself is believed because the message is signed by an API node, which minted
   * the key for this very call.
   */
  private async adopt(target: RunTarget, secret: string, ref: DeepReadonlyRef, timeoutMs: number): Promise<(() => void) | undefined> {
    if (!target.pipeline || ref.call?.algorithmId !== target.algorithmId) {
      throw Errors.forbidden('this call carries a call key that is not for the algorithm it runs');
    }
    return this.deps.adoptCallKey(secret, { ...ref, capabilities: [...ref.capabilities] }, timeoutMs + 60_000);
  }

  /** An answer (or an empty heartbeat) signed for the call's reply subject and bound to its request. */
  private answer(running: { msg: Msg; nonce: Buffer }, payload: Uint8Array): Uint8Array {
    return this.deps.cluster.signer.sign('answer', running.msg.reply!, '', payload, running.nonce).data;
  }

  private async run(data: Uint8Array): Promise<Uint8Array> {
    this.callsInFlight++;
    let reply: RunReply;
    try {
      const { meta, bytes } = this.reader.read(data);
      const request = pipeRequestOf(meta, bytes);
      // What runs, with which network and which owner, comes from the database, not the message.
      const target = await this.deps.runTarget(meta.target.algorithmId, meta.target.artifact, request.insights_token !== undefined);
      const forget = meta.callKey && request.api_key ? await this.adopt(target, request.api_key, meta.callKey, meta.timeoutMs) : undefined;
      try {
        reply = { ok: await this.deps.runtime.execute(target, request, meta.timeoutMs) };
      } finally {
        forget?.();
      }
    } catch (err) {
      if (err instanceof RuntimeFailure)
        reply = { failure: { errorType: err.errorType, message: err.message, ...(err.output ? { output: err.output } : {}) } };
      else if (err instanceof DomainError) {
        reply = { error: { kind: err.kind, code: err.code, message: err.message, details: err.details, id: err.id } };
      } else {
        this.deps.log.error({ err }, 'cluster worker: a sync call failed');
        reply = { failure: { errorType: 'SystemExit', message: 'the worker failed to run this call; call again' } };
      }
    } finally {
      this.callsInFlight--;
    }
    // The caller's node routes its next calls by this (fresher than the presence entry).
    // Signed with the rest of the answer (serve()).
    reply.report = { id: this.deps.cluster.nodeId, seq: ++this.seq, load: this.deps.warmRunners() + this.callsInFlight };
    return encodeFrame(reply);
  }
}

/**
 * A consumer looked up at start: a busy nats-server may let a JetStream API request time out
 * (5 s), which is asked again a few times rather than failing the node's start; any other error
 * (a missing consumer, a permission) fails at once.
 */
async function consumerAtStart(cluster: NatsCluster, stream: string, name: string): Promise<Consumer> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await cluster.js.consumers.get(stream, name);
    } catch (err) {
      if (!(err instanceof TimeoutError) || attempt >= 4) throw err;
    }
  }
}
