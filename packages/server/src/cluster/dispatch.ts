/**
 * What an API node sends to the workers: queued builds and accepted async calls as durable
 * JetStream messages (the publish resolves once the stream stored them), sync calls as NATS
 * requests (NatsRuntime), and where it hears live build output from.
 */
import { RequestError, type Msg } from '@nats-io/transport-node';
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
 * Beyond the call's own timeout, how long a caller waits for a worker to start a runner and
 * answer; past it the worker is taken for gone and the caller gets SystemExit, not a hang.
 */
const START_ALLOWANCE_MS = 60_000;

/**
 * The AlgorithmRuntime of an API node: each call is one NATS request, first to the workers that
 * have the build warm (a queue group per artifact), else to any worker, which starts a runner.
 */
export class NatsRuntime implements AlgorithmRuntime {
  constructor(
    private readonly cluster: NatsCluster,
    /** The API node's live call keys (KeyService.callKeyPrincipal). */
    private readonly callKeys: (secret: string) => Principal | undefined,
  ) {}

  async execute(target: RunTarget, request: PipeRequest, timeoutMs: number): Promise<Execution> {
    const { json, ...rest } = request;
    const message: RunMessage = { target, timeoutMs, request: rest, hasJson: json !== undefined };
    const key = request.api_key === undefined ? undefined : this.callKeys(request.api_key);
    if (key) {
      message.callKey = { accountId: key.account.id, capabilities: [...key.capabilities], ...(key.call ? { call: key.call } : {}) };
    }
    const data = encodeFrame(message, json);
    const opts = { timeout: timeoutMs + START_ALLOWANCE_MS };
    let reply: Msg;
    try {
      reply = await this.ask(SUBJECTS.run(target.artifact), data, opts)
        .then((r) => r ?? this.ask(SUBJECTS.runAny, data, opts))
        .then((r) => {
          if (!r) throw Errors.unavailable('no worker is connected to this cluster; start one (ALGOHOST_ROLE=worker) and call again');
          return r;
        });
    } catch (err) {
      if (err instanceof DomainError) throw err;
      throw new RuntimeFailure('SystemExit', `the worker running this call did not answer (${(err as Error).message}); call again`);
    }
    const { meta } = decodeFrame<RunReply>(reply.data);
    if ('ok' in meta) return meta.ok;
    if ('failure' in meta) throw new RuntimeFailure(meta.failure.errorType, meta.failure.message);
    const e = meta.error;
    throw new DomainError(e.kind, e.code, e.message, e.details, e.id);
  }

  /** The reply, or undefined when nobody listens on the subject. */
  private async ask(subject: string, data: Uint8Array, opts: { timeout: number }): Promise<Msg | undefined> {
    try {
      return await this.cluster.nc.request(subject, data, opts);
    } catch (err) {
      if (err instanceof RequestError && err.isNoResponders()) return undefined;
      throw err;
    }
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
