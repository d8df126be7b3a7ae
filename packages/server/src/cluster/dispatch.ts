/**
 * What an API node sends to the workers: queued builds and accepted async calls as durable
 * JetStream messages (the publish resolves once the stream stored them), sync calls as NATS
 * requests (NatsRuntime), and where it hears live build output from.
 */
import type { Msg } from '@nats-io/transport-node';
import { LRUCache } from 'lru-cache';
import type { Build } from '../domain/builds/model.js';
import type { BuildDispatch } from '../domain/builds/build-service.js';
import type { BuildEvent, BuildEvents } from '../domain/builds/build-events.js';
import type { AsyncDispatch, AsyncJob } from '../domain/calls/async-calls.js';
import type { CallRequest } from '../domain/calls/request.js';
import { type AlgorithmRuntime, type Execution, type PipeRequest, type RunTarget, RuntimeFailure } from '../domain/calls/ports.js';
import { toPipeRequest } from '../domain/calls/call-service.js';
import { DomainError, Errors } from '../domain/errors.js';
import type { Capability } from '../domain/accounts/model.js';
import type { CallContext, Principal } from '../domain/accounts/principal.js';
import type { LoadReport, WorkerDirectory } from './directory.js';
import { Slots } from '../lib/slots.js';
import { decodeFrame, encodeFrame, splitFrame } from './frames.js';
import { artifactToken, type NatsCluster } from './nats-cluster.js';
import { BUS_UNREACHABLE } from './nats-link.js';
import { MESSAGE_WINDOW_MS } from './signed-messages.js';

/** What a build or call that needs a GPU is told while no live worker declares one. */
const NO_GPU_WORKER = 'no live worker of this cluster declares a GPU (ALGOHOST_WORKER_GPU=true)';

/**
 * Queued builds to the workers; those of GPU environments (`gpuEnvironment`) to the GPU
 * workers' subject, where they wait, saying so, while no GPU worker is live.
 */
export function natsBuildDispatch(
  cluster: NatsCluster,
  directory: WorkerDirectory,
  gpuEnvironment: (name: string) => boolean,
): BuildDispatch {
  return {
    queued: async (build: Build) => {
      const gpu = gpuEnvironment(build.environmentName);
      const subject = gpu ? cluster.names.subjects.gpuBuild : cluster.names.subjects.build;
      const { data } = cluster.signer.sign('work', subject, '', Buffer.from(build.id));
      await cluster.js.publish(subject, data, { msgID: build.id });
      if (gpu && !directory.hasGpuWorker()) {
        return `${build.environmentName} needs a GPU and ${NO_GPU_WORKER}: the build waits in the queue until one joins`;
      }
      return undefined;
    },
  };
}

export function natsAsyncDispatch(cluster: NatsCluster): AsyncDispatch {
  return {
    submitted: async ({ requestId, caller, input, gpu }: AsyncJob) => {
      const subject = gpu ? cluster.names.subjects.gpuAsync : cluster.names.subjects.async;
      const queued = wireCall(input) as QueuedInput;
      queued.address = input.address;
      const { data } = cluster.signer.sign('work', subject, '', encodeFrame({ requestId, caller, input: queued }, input.body));
      await cluster.js.publish(subject, data, { msgID: requestId });
    },
  };
}

/**
 * A queued build's id as a worker reads it back, once its MAC verifies (throws MessageRefused
 * otherwise). The build then runs only if the database has it queued (BuildService.runDispatched).
 */
export function openBuildWork(cluster: NatsCluster, subject: string, data: Uint8Array): string {
  return cluster.signer.open('work', subject, '', data).payload.toString('utf8');
}

/**
 * An async job as a worker reads it back, once its MAC verifies (throws MessageRefused
 * otherwise). It runs only while its stored request runs, and only as the request's account
 * (AsyncCallService.runDispatched).
 */
export function openAsyncJob(cluster: NatsCluster, subject: string, data: Uint8Array): AsyncJob {
  const { payload } = cluster.signer.open('work', subject, '', data);
  const { meta, bytes } = decodeFrame<Omit<AsyncJob, 'input'> & { input: QueuedInput }>(payload);
  const job: AsyncJob = { requestId: meta.requestId, caller: meta.caller, input: callRequestOf(meta.input, bytes) };
  if (meta.gpu !== undefined) job.gpu = meta.gpu;
  return job;
}

/**
 * An async call's input as it waits in the work queue, which keeps it across a restart: as this
 * version queues it, or as the version before did (the path as sent and the `timeout` query
 * string, both checked when the call was accepted), so a job accepted before an upgrade still
 * runs after it.
 */
type QueuedInput = Omit<CallRequest, 'body' | 'address'> & { address?: CallRequest['address']; path?: string; timeout?: string };

function callRequestOf(queued: QueuedInput, body: Buffer): CallRequest {
  const input: CallRequest = { address: queued.address ?? queued.path ?? '', contentType: queued.contentType, body };
  copyOptions(queued, input);
  if (input.timeoutSeconds === undefined && queued.timeout !== undefined) input.timeoutSeconds = Number(queued.timeout);
  return input;
}

/**
 * A call as it travels to a worker (a sync call's message, an async job): the CallRequest but
 * its body, which is the frame's bytes, and its address, which the sender names its own way.
 * Options are copied only when set, so that the text of a warm call's message is the same call
 * after call (RunMessageReader).
 */
export type WireCall = Omit<CallRequest, 'address' | 'body'>;

function wireCall(call: CallRequest): WireCall {
  const wire: WireCall = { contentType: call.contentType };
  copyOptions(call, wire);
  return wire;
}

/** The options of a call that are set, one by one (docs/performance.md, rule 2: no spread). */
function copyOptions(from: WireCall, to: WireCall): void {
  if (from.checkedJson !== undefined) to.checkedJson = from.checkedJson;
  if (from.timeoutSeconds !== undefined) to.timeoutSeconds = from.timeoutSeconds;
  if (from.stdout !== undefined) to.stdout = from.stdout;
  if (from.event !== undefined) to.event = from.event;
}

/**
 * A sync call as it travels: the CallRequest (WireCall; its input is the frame's bytes), what
 * the API node made for this one call (a call key, an Insights token), and which build of which
 * algorithm to run. Only that: the worker reads everything else (the algorithm's settings, its
 * network access, the build's environment, whether the build is the algorithm's at all) from
 * the database (cluster/run-targets.ts), never from a message; it makes the runner's request
 * from the call itself (pipeRequestOf).
 */
export interface RunMessage {
  target: WireTarget;
  timeoutMs: number;
  call: WireCall;
  /** For pipeline_enabled algorithms: the call's key, and whom it acts for. */
  apiKey?: string;
  callKey?: CallKeyRef;
  /** For versions with insights_enabled: the token of this call's reports. */
  insightsToken?: string;
}

/**
 * A sync call as the version before sent it, still read during a rolling upgrade (an API node
 * not yet upgraded sends calls to an upgraded worker): the runner's request itself, without a
 * JSON input, which was the frame's bytes.
 */
export interface PipeRunMessage {
  target: WireTarget;
  timeoutMs: number;
  request: Omit<PipeRequest, 'json'>;
  hasJson: boolean;
  callKey?: CallKeyRef;
}

/**
 * The runner's request of a sync call a worker heard, in either format. The API node checked
 * the input already (a JSON input's grammar and depth are not scanned again); a refused input
 * still throws the catalog's error, as on the API node.
 */
export function pipeRequestOf(meta: DeepReadonly<RunMessage | PipeRunMessage>, bytes: Buffer): PipeRequest {
  if ('request' in meta) {
    const old = meta.request as PipeRequest;
    if (!meta.hasJson) return old;
    const request: PipeRequest = { content_type: old.content_type, data: old.data, json: bytes };
    if (old.api_key !== undefined) request.api_key = old.api_key;
    if (old.event !== undefined) request.event = old.event;
    if (old.insights_token !== undefined) request.insights_token = old.insights_token;
    return request;
  }
  const call = meta.call;
  const request = toPipeRequest(call.contentType, bytes, call.checkedJson === true);
  if (meta.apiKey !== undefined) request.api_key = meta.apiKey;
  if (call.event !== undefined) request.event = call.event as Record<string, string>;
  if (meta.insightsToken !== undefined) request.insights_token = meta.insightsToken;
  return request;
}

export type WireTarget = Pick<RunTarget, 'algorithmId' | 'artifact'>;

/**
 * Reads the sync calls a worker hears. The JSON part of a warm call is mostly the same text call
 * after call (the target, the timeout, a JSON input's `{"content_type":"json"}`), and parsing it
 * was the costliest step between a worker hearing a call and writing it to its runner
 * (docs/performance.md, rule 8). A part that holds nothing of one call's own (no input text, no
 * call key, token or event) is parsed once and kept by its text, and calls share it: what
 * read() returns is read-only (not frozen: V8 copies a frozen object's fields, as the worker does
 * for each call, several times slower).
 */
export class RunMessageReader {
  private readonly parsed = new LRUCache<string, DeepReadonly<RunMessage | PipeRunMessage>>({ max: 256 });

  /** `data` is the payload of a message whose MAC verified (MessageSigner.open). */
  read(data: Uint8Array): { meta: DeepReadonly<RunMessage | PipeRunMessage>; bytes: Buffer } {
    const { json, bytes } = splitFrame(data);
    let meta = this.parsed.get(json);
    if (meta === undefined) {
      const parsed = JSON.parse(json) as RunMessage | PipeRunMessage;
      if (holdsNothingOfOneCall(parsed)) this.parsed.set(json, parsed);
      meta = parsed;
    }
    return { meta, bytes };
  }
}

type DeepReadonly<T> = T extends (infer E)[]
  ? readonly DeepReadonly<E>[]
  : T extends object
    ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
    : T;

function holdsNothingOfOneCall(m: RunMessage | PipeRunMessage): boolean {
  if (m.callKey !== undefined) return false;
  if ('request' in m) {
    if (!m.hasJson) return false;
    const keys = Object.keys(m.request);
    return keys.length === 1 && keys[0] === 'content_type';
  }
  // The input is the frame's bytes whatever its type: only a key, a token or an event are one call's.
  return m.apiKey === undefined && m.insightsToken === undefined && m.call.event === undefined;
}

/**
 * A call key's principal by reference (the worker reads the account itself). Believed because
 * the message carrying it is signed by an API node, which minted the key for this call.
 */
export interface CallKeyRef {
  accountId: string;
  capabilities: readonly Capability[];
  call?: CallContext;
}

/** A worker's answer to a sync call, with its load once the call ended (for routing the next ones). */
export type RunReply = (
  | { ok: Execution }
  | { failure: { errorType: string; message: string; output?: string } }
  | { error: { kind: DomainError['kind']; code: number; message: string; details?: DomainError['details']; id?: string } }
) & { report?: LoadReport };

/**
 * A worker sends an empty message to the caller this often while it runs a call (and its final
 * answer at the end); a caller that hears nothing for SILENCE_MS takes the worker for gone
 * (killed, cut off, or NATS restarted) and answers SystemExit instead of waiting out the timeout.
 */
export const HEARTBEAT_MS = 2000;
const SILENCE_MS = 3 * HEARTBEAT_MS;
/** How often the API node looks for calls whose worker went silent. */
const SWEEP_MS = 1000;
/** How long a call made while this node's NATS connection is down waits for it to come back. */
const RECONNECT_WAIT_MS = 2000;
/** For this long after the connection came back, a call that finds no worker waits for one to announce itself. */
const RECOVERY_MS = 5000;
/** How long such a call waits for an entry before looking again. */
const RECOVERY_POLL_MS = 250;
/** A pending call's nonce until its request is signed (a moment later, before anything can answer). */
const EMPTY_NONCE = Buffer.alloc(0);

interface Pending {
  /** Which call this is: its slot is reused by later calls, and a late answer must not reach them. */
  seq: number;
  /** The request's nonce: only answers signed for it are heard (a first reply of anyone else's is dropped). */
  nonce: Buffer;
  /** The answer's payload, once it verified; undefined when nobody listens on the worker's subject. */
  resolve(payload: Buffer | undefined): void;
  reject(err: Error): void;
  /** When the worker was last heard from (the call sent, or its last heartbeat). */
  heard: number;
}

/**
 * The AlgorithmRuntime of an API node: each call is one NATS message to one worker, picked from
 * the live workers' presence entries (WorkerDirectory.pick: one that has the build warm, else
 * the least loaded, which starts a runner; a GPU worker for a GPU environment). The API node
 * picks rather than a NATS queue group because a queue group cannot leave out a member that
 * went silent: its subscriptions live until nats-server's ping timeout. Answers (heartbeats and
 * the result) come back on one subscription of this node's own inbox prefix, one reply subject
 * per call.
 */
export class NatsRuntime implements AlgorithmRuntime {
  private readonly inbox: string;
  private readonly pending = new Slots<Pending>();
  private next = 0;

  constructor(
    private readonly cluster: NatsCluster,
    private readonly directory: WorkerDirectory,
    /** The API node's live call keys (KeyService.callKeyPrincipal). */
    private readonly callKeys: (secret: string) => Principal | undefined,
    private readonly now: () => number = () => performance.now(),
  ) {
    // Under this node's own inbox prefix: only its NATS user may subscribe there (docs/cluster.md §3).
    this.inbox = cluster.replyPrefix;
    cluster.nc.subscribe(`${this.inbox}.*`, {
      callback: (err, msg) => {
        if (!err) this.answer(msg);
      },
    });
    // One sweep for all calls rather than a timer armed per call and re-armed per heartbeat
    // (timers are a cost on every call). A silent worker is noticed SILENCE_MS to
    // SILENCE_MS + SWEEP_MS after it was last heard.
    setInterval(() => this.sweep(), SWEEP_MS).unref();
    // Neither these calls' requests nor their answers can travel now: the callers are told at
    // once to call again, rather than waiting SILENCE_MS for a runner failure.
    cluster.link.onDisconnect(() => {
      for (const [slot, p] of this.pending.entries()) {
        this.pending.take(slot);
        p.reject(Errors.unavailable(BUS_UNREACHABLE));
      }
    });
  }

  async execute(target: RunTarget, request: PipeRequest, timeoutMs: number, call?: CallRequest): Promise<Execution> {
    // Only the call service calls an API node's runtime, and it always says what was called.
    if (call === undefined) throw new Error('a call handed to the workers needs its CallRequest');
    const message: RunMessage = { target: { algorithmId: target.algorithmId, artifact: target.artifact }, timeoutMs, call: wireCall(call) };
    // The API node checked the input (call-service.ts): the worker does not scan it again.
    if (request.json !== undefined) message.call.checkedJson = true;
    const key = request.api_key === undefined ? undefined : this.callKeys(request.api_key);
    if (key) {
      message.apiKey = request.api_key;
      const ref: CallKeyRef = { accountId: key.account.id, capabilities: [...key.capabilities] };
      if (key.call) ref.call = key.call;
      message.callKey = ref;
    }
    if (request.insights_token !== undefined) message.insightsToken = request.insights_token;
    const data = encodeFrame(message, call.body);
    const token = artifactToken(target.artifact);
    const gpu = target.environment.machine_type === 'GPU';
    // A call made as nats-server restarts waits for this node's next try to reconnect, no longer
    // (checked first: a warm call should not pay for an await).
    if (!this.cluster.link.connected) await this.cluster.link.ready(RECONNECT_WAIT_MS);
    // A worker that is gone without its entry expiring yet (nobody subscribed) is skipped for the next.
    const tried = new Set<string>();
    let meta: RunReply | undefined;
    let refreshed = false;
    while (!meta) {
      let worker = this.directory.pick(token, gpu, tried);
      if (!worker && !refreshed) {
        refreshed = true;
        try {
          await this.directory.refresh();
        } catch {
          throw Errors.unavailable(BUS_UNREACHABLE);
        }
        worker = this.directory.pick(token, gpu, tried);
      }
      // Just after NATS came back the workers are announcing themselves again (and subscribing
      // again): wait for their entries rather than answer that there is none.
      const recovering = worker ? 0 : RECOVERY_MS - this.cluster.link.sinceReconnect();
      if (recovering > 0) {
        await this.directory.heard(Math.min(recovering, RECOVERY_POLL_MS));
        tried.clear();
        continue;
      }
      if (!worker) {
        if (gpu) throw Errors.unavailable(`${target.environment.name} needs a GPU and ${NO_GPU_WORKER}; call again once one runs`);
        throw Errors.unavailable('no worker is connected to this cluster; start one (ALGOHOST_ROLE=worker) and call again');
      }
      tried.add(worker.id);
      this.directory.sending(worker.id);
      let answer: Buffer | undefined;
      try {
        answer = await this.ask(this.cluster.names.subjects.runOn(worker.id), data);
      } catch (err) {
        this.directory.answered(worker.id, token);
        this.directory.silent(worker.id);
        throw err;
      }
      if (!answer) {
        this.directory.answered(worker.id, token);
        this.directory.silent(worker.id);
        continue;
      }
      meta = decodeFrame<RunReply>(answer).meta;
      this.directory.answered(worker.id, token, meta.report);
    }
    if ('ok' in meta) return meta.ok;
    if ('failure' in meta) throw new RuntimeFailure(meta.failure.errorType, meta.failure.message, meta.failure.output);
    const e = meta.error;
    throw new DomainError(e.kind, e.code, e.message, e.details, e.id);
  }

  /** The final answer, or undefined when nobody listens on the subject. */
  private ask(subject: string, payload: Uint8Array): Promise<Buffer | undefined> {
    const seq = this.next++;
    return new Promise((resolve, reject) => {
      const pending: Pending = { seq, nonce: EMPTY_NONCE, resolve, reject, heard: this.now() };
      const slot = this.pending.put(pending);
      // The reply subject names the slot and the call (one subject token: `<slot>_<seq>`).
      const reply = `${this.inbox}.${slot}_${seq}`;
      const { data, nonce } = this.cluster.signer.sign('run', subject, reply, payload);
      pending.nonce = nonce;
      this.cluster.nc.publish(subject, data, { reply });
    });
  }

  /** Fails the calls whose worker has not been heard from for SILENCE_MS. */
  private sweep(): void {
    const before = this.now() - SILENCE_MS;
    for (const [slot, p] of this.pending.entries()) {
      if (p.heard > before) continue;
      this.pending.take(slot);
      p.reject(new RuntimeFailure('SystemExit', 'the worker running this call stopped answering (it stopped, or lost NATS); call again'));
    }
  }

  private answer(msg: Msg): void {
    const token = msg.subject.slice(this.inbox.length + 1);
    const cut = token.indexOf('_');
    const slot = Number(token.slice(0, cut));
    const p = this.pending.get(slot);
    if (!p || p.seq !== Number(token.slice(cut + 1))) return;
    // NATS answers a message nobody subscribes to with an empty 503 status message.
    if (msg.data.length === 0 && msg.headers?.code === 503) {
      this.pending.take(slot);
      return p.resolve(undefined);
    }
    let payload: Buffer;
    try {
      payload = this.cluster.signer.open('answer', msg.subject, '', msg.data, {
        boundTo: p.nonce,
        windowMs: MESSAGE_WINDOW_MS,
        once: true,
      }).payload;
    } catch {
      // Not the worker's (the signer logged it): the call keeps waiting for the real answer.
      return;
    }
    // A heartbeat: the worker is still at it.
    if (payload.length === 0) {
      p.heard = this.now();
      return;
    }
    this.pending.take(slot);
    p.resolve(payload);
  }
}

/** Worker side of the relay: each build event of this node also goes to the other nodes. */
export function relayBuildEvent(cluster: NatsCluster): (buildId: string, event: BuildEvent) => void {
  return (buildId, event) => {
    const subject = cluster.names.subjects.buildEvents(buildId);
    cluster.nc.publish(
      subject,
      cluster.signer.sign('build-event', subject, '', Buffer.from(JSON.stringify({ from: cluster.nodeId, event }))).data,
    );
  };
}

/** API side of the relay: build events of other nodes reach this node's followers. */
export function receiveBuildEvents(cluster: NatsCluster, events: BuildEvents): void {
  cluster.nc.subscribe(cluster.names.subjects.allBuildEvents, {
    callback: (err, msg) => {
      if (err) return;
      const buildId = msg.subject.slice(cluster.names.subjects.allBuildEvents.length - 1);
      let payload: Buffer;
      try {
        payload = cluster.signer.open('build-event', msg.subject, '', msg.data, { windowMs: MESSAGE_WINDOW_MS, once: true }).payload;
      } catch {
        return; // not a worker's: its followers never see it
      }
      const { from, event } = JSON.parse(payload.toString('utf8')) as { from: string; event: BuildEvent };
      if (from !== cluster.nodeId) events.deliver(buildId, event);
    },
  });
}
