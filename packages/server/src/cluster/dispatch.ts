/**
 * What an API node sends to the workers: queued builds and accepted async calls as durable
 * JetStream messages (the publish resolves once the stream stored them), sync calls as NATS
 * requests (NatsRuntime), and where it hears live build output from.
 */
import type { Msg } from '@nats-io/transport-node';
import type { Build } from '../domain/builds/model.js';
import type { BuildDispatch } from '../domain/builds/build-service.js';
import type { BuildEvent, BuildEvents } from '../domain/builds/build-events.js';
import type { AsyncDispatch, AsyncJob } from '../domain/calls/async-calls.js';
import { type AlgorithmRuntime, type Execution, type PipeRequest, type RunTarget, RuntimeFailure } from '../domain/calls/ports.js';
import { DomainError, Errors } from '../domain/errors.js';
import type { Capability } from '../domain/accounts/model.js';
import type { CallContext, Principal } from '../domain/auth/principal.js';
import { decodeFrame, encodeFrame } from './frames.js';
import { type NatsCluster, SUBJECTS } from './nats-cluster.js';

export function natsBuildDispatch(cluster: NatsCluster): BuildDispatch {
  return {
    queued: async (build: Build) => {
      await cluster.js.publish(SUBJECTS.build, build.id, { msgID: build.id });
    },
  };
}

export function natsAsyncDispatch(cluster: NatsCluster): AsyncDispatch {
  return {
    submitted: async ({ requestId, caller, input }: AsyncJob) => {
      const { body, ...rest } = input;
      await cluster.js.publish(SUBJECTS.async, encodeFrame({ requestId, caller, input: rest }, body), { msgID: requestId });
    },
  };
}

/** An async job as a worker reads it back. */
export function decodeAsyncJob(data: Uint8Array): AsyncJob {
  const { meta, bytes } = decodeFrame<Omit<AsyncJob, 'input'> & { input: Omit<AsyncJob['input'], 'body'> }>(data);
  return { ...meta, input: { ...meta.input, body: bytes } };
}

/** A sync call as it travels: the request without its JSON input, which is the frame's bytes. */
export interface RunMessage {
  target: RunTarget;
  timeoutMs: number;
  request: Omit<PipeRequest, 'json'>;
  hasJson: boolean;
  /** For pipeline_enabled algorithms: whom the call's key (request.api_key) acts for. */
  callKey?: CallKeyRef;
}

/** A call key's principal by reference (the worker reads the account itself). */
export interface CallKeyRef {
  accountId: string;
  capabilities: Capability[];
  call?: CallContext;
}

/** A worker's answer to a sync call. */
export type RunReply =
  | { ok: Execution }
  | { failure: { errorType: string; message: string } }
  | { error: { kind: DomainError['kind']; code: number; message: string; details?: DomainError['details']; id?: string } };

/**
 * A worker sends an empty message to the caller this often while it runs a call (and its final
 * answer at the end); a caller that hears nothing for SILENCE_MS takes the worker for gone
 * (killed, cut off, or NATS restarted) and answers SystemExit instead of waiting out the timeout.
 */
export const HEARTBEAT_MS = 2000;
const SILENCE_MS = 3 * HEARTBEAT_MS;

interface Pending {
  resolve(msg: Msg | undefined): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
}

/**
 * The AlgorithmRuntime of an API node: each call is one NATS message, first to the workers that
 * have the build warm (a queue group per artifact), else to any worker, which starts a runner.
 * Answers (heartbeats and the result) come back on one subscription of this node's own inbox
 * prefix, one reply subject per call.
 */
export class NatsRuntime implements AlgorithmRuntime {
  private readonly inbox: string;
  private readonly pending = new Map<string, Pending>();
  private next = 0;

  constructor(
    private readonly cluster: NatsCluster,
    /** The API node's live call keys (KeyService.callKeyPrincipal). */
    private readonly callKeys: (secret: string) => Principal | undefined,
  ) {
    this.inbox = `_INBOX.algohost.${cluster.nodeId}`;
    cluster.nc.subscribe(`${this.inbox}.*`, {
      callback: (err, msg) => {
        if (!err) this.answer(msg);
      },
    });
  }

  async execute(target: RunTarget, request: PipeRequest, timeoutMs: number): Promise<Execution> {
    const { json, ...rest } = request;
    const message: RunMessage = { target, timeoutMs, request: rest, hasJson: json !== undefined };
    const key = request.api_key === undefined ? undefined : this.callKeys(request.api_key);
    if (key) {
      message.callKey = { accountId: key.account.id, capabilities: [...key.capabilities], ...(key.call ? { call: key.call } : {}) };
    }
    const data = encodeFrame(message, json);
    const reply = (await this.ask(SUBJECTS.run(target.artifact), data)) ?? (await this.ask(SUBJECTS.runAny, data));
    if (!reply) throw Errors.unavailable('no worker is connected to this cluster; start one (ALGOHOST_ROLE=worker) and call again');
    const { meta } = decodeFrame<RunReply>(reply.data);
    if ('ok' in meta) return meta.ok;
    if ('failure' in meta) throw new RuntimeFailure(meta.failure.errorType, meta.failure.message);
    const e = meta.error;
    throw new DomainError(e.kind, e.code, e.message, e.details, e.id);
  }

  /** The final answer, or undefined when nobody listens on the subject. */
  private ask(subject: string, data: Uint8Array): Promise<Msg | undefined> {
    const token = String(this.next++);
    return new Promise((resolve, reject) => {
      const entry: Pending = { resolve, reject, timer: this.silence(token) };
      this.pending.set(token, entry);
      this.cluster.nc.publish(subject, data, { reply: `${this.inbox}.${token}` });
    });
  }

  private silence(token: string): NodeJS.Timeout {
    return setTimeout(() => {
      const p = this.pending.get(token);
      if (!p) return;
      this.pending.delete(token);
      p.reject(new RuntimeFailure('SystemExit', 'the worker running this call stopped answering (it stopped, or lost NATS); call again'));
    }, SILENCE_MS);
  }

  private answer(msg: Msg): void {
    const token = msg.subject.slice(this.inbox.length + 1);
    const p = this.pending.get(token);
    if (!p) return;
    clearTimeout(p.timer);
    // NATS answers a message nobody subscribes to with an empty 503 status message.
    if (msg.data.length === 0 && msg.headers?.code === 503) {
      this.pending.delete(token);
      return p.resolve(undefined);
    }
    // A heartbeat: the worker is still at it.
    if (msg.data.length === 0) {
      p.timer = this.silence(token);
      return;
    }
    this.pending.delete(token);
    p.resolve(msg);
  }
}

/** Worker side of the relay: each build event of this node also goes to the other nodes. */
export function relayBuildEvent(cluster: NatsCluster): (buildId: string, event: BuildEvent) => void {
  return (buildId, event) => {
    cluster.nc.publish(SUBJECTS.buildEvents(buildId), JSON.stringify({ from: cluster.nodeId, event }));
  };
}

/** API side of the relay: build events of other nodes reach this node's followers. */
export function receiveBuildEvents(cluster: NatsCluster, events: BuildEvents): void {
  cluster.nc.subscribe(SUBJECTS.allBuildEvents, {
    callback: (err, msg) => {
      if (err) return;
      const buildId = msg.subject.slice(SUBJECTS.allBuildEvents.length - 1);
      const { from, event } = msg.json<{ from: string; event: BuildEvent }>();
      if (from !== cluster.nodeId) events.deliver(buildId, event);
    },
  });
}
