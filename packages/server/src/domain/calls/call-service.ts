/**
 * Calling an algorithm (docs/compatibility.md §2): who may call what, which build a version names, the
 * input and output limits, and the response envelope. Algorithm failures are results
 * (HTTP 200 with `error`); what the call path refuses is an outcome too (CallRefused, carrying
 * the catalog's DomainError), returned rather than thrown.
 */
import { isUtf8 } from 'node:buffer';
import crypto from 'node:crypto';
import { scanJson } from '../../lib/json-scan.js';
import { RefreshingCache } from '../../lib/refreshing-cache.js';
import { Tally } from '../../lib/tally.js';
import { DomainError, Errors, invalid } from '../errors.js';
import type { Logger } from '../logger.js';
import { isAdmin, requireCapability, type Principal } from '../accounts/principal.js';
import type { OwnerAccess } from '../accounts/access.js';
import type { AccountStore } from '../accounts/ports.js';
import type { AlgorithmStore } from '../algorithms/ports.js';
import type { Catalog } from '../catalog/catalog.js';
import type { VersionService } from '../versions/version-service.js';
import type { KeyService } from '../accounts/key-service.js';
import type { Algorithm } from '../algorithms/model.js';
import type { Environment } from '../catalog/model.js';
import {
  type AlgorithmRuntime,
  type CallObserver,
  type InsightsTokens,
  type PipeRequest,
  type RunTarget,
  RuntimeFailure,
} from './ports.js';
import {
  type AlgoAddress,
  type AlgorithmCaller,
  type CallMetadata,
  type CallOutcome,
  type CallRefused,
  type CallRequest,
  DEFAULT_TIMEOUT_S,
  MAX_INPUT_BYTES,
  MAX_INPUT_DEPTH,
  MAX_TIMEOUT_S,
} from './request.js';

export interface CallSettings {
  /** Calls one account may have in flight at once (429 beyond). */
  maxInFlightPerAccount: number;
  /** Whether GPU environments can run: this node's GPU, or in a cluster a live worker that declares one. */
  gpuAvailable: () => boolean;
}

/**
 * How long a resolution is served without resolving again, unless the composition root says
 * otherwise (`resolutionTtlMs`): a change made on another node of a cluster (a publish, a
 * settings or membership change) applies here within it.
 */
const RESOLVE_TTL_MS = 2000;
const RESOLVE_MAX = 10_000;

/** Who resolved an address and what it parsed to: what resolving it again takes. */
interface ResolveContext {
  principal: Principal;
  address: AlgoAddress;
}

interface Resolved {
  algorithm: Algorithm;
  environment: Environment;
  member: boolean;
  semanticVersion?: string;
  /** Calls of this version get an Insights token (insights_enabled, a published version, Insights on). */
  insights: boolean;
  /**
   * Where its calls run. Made once per resolution and shared by its calls, read-only: a warm
   * call then allocates no target of its own (and the pool keys its runners by this object).
   */
  target: RunTarget;
}

/** What CallService is made from (named, so the composition root reads as a list of parts). */
export interface CallServiceDeps {
  accounts: AccountStore;
  algorithms: AlgorithmStore;
  versions: VersionService;
  access: OwnerAccess;
  catalog: Catalog;
  runtime: AlgorithmRuntime;
  keys: KeyService;
  settings: CallSettings;
  /** Told of every successful execution (Event Flows' publishers); never awaited by the call. */
  onSucceeded?: CallObserver['succeeded'];
  /** Insights: calls of versions with insights_enabled get a token to report with. */
  insights?: InsightsTokens;
  /** Where a failed background refresh of a cached resolution is reported. */
  log: Logger;
  /**
   * How long a resolution is served (default RESOLVE_TTL_MS). A node alone makes every change
   * itself and forgets resolutions at once (`forgetResolutions`), so it may keep them longer.
   */
  resolutionTtlMs?: number;
}

export class CallService implements AlgorithmCaller {
  private readonly inFlight = new Tally<string>();
  /**
   * Resolutions by caller and path, never older than their TTL; one still called is
   * resolved again in the background before then, and calls that miss together resolve once
   * (lib/refreshing-cache.ts). The least recently used go first when full.
   */
  private readonly resolved: RefreshingCache<string, Resolved, ResolveContext>;

  private readonly accounts: AccountStore;
  private readonly algorithms: AlgorithmStore;
  private readonly versions: VersionService;
  private readonly access: OwnerAccess;
  private readonly catalog: Catalog;
  private readonly runtime: AlgorithmRuntime;
  private readonly keys: KeyService;
  private readonly settings: CallSettings;
  private readonly onSucceeded?: CallObserver['succeeded'];
  private readonly insights?: InsightsTokens;

  constructor(deps: CallServiceDeps) {
    this.accounts = deps.accounts;
    this.algorithms = deps.algorithms;
    this.versions = deps.versions;
    this.access = deps.access;
    this.catalog = deps.catalog;
    this.runtime = deps.runtime;
    this.keys = deps.keys;
    this.settings = deps.settings;
    this.onSucceeded = deps.onSucceeded;
    this.insights = deps.insights;
    const log = deps.log;
    this.resolved = new RefreshingCache({
      max: RESOLVE_MAX,
      // An address still called is resolved again in the background before its entry expires.
      ttlMs: deps.resolutionTtlMs ?? RESOLVE_TTL_MS,
      load: (_key, { principal, address }) => this.resolve(principal, address),
      // An address that stopped resolving (deleted, made private) is dropped: the next call sees why.
      onRefreshError: (err, key) => {
        if (!(err instanceof DomainError)) log.warn({ err, resolution: key }, 'resolving a called address again failed');
      },
    });
  }

  async call(p: Principal, input: CallRequest): Promise<CallOutcome> {
    // What is checked before anything runs throws the catalog's errors (as the resolution
    // cache's loads do); they leave the call path as a refusal, never thrown.
    let timeoutS: number;
    let request: PipeRequest;
    let resolved: Resolved;
    try {
      requireCapability(p, 'call_algorithms');
      const { cacheKey, cached, address } = this.lookUp(p, input.address);
      timeoutS = checkTimeout(input.timeoutSeconds);
      request = toPipeRequest(input.contentType, input.body, input.checkedJson === true);
      resolved = cached ?? (await this.resolved.fetch(cacheKey, { principal: p, address: address! }));
    } catch (err) {
      return refusedOrThrow(err);
    }
    const { algorithm, member } = resolved;

    const accountKey = p.account.id;
    const current = this.inFlight.get(accountKey);
    if (current >= this.settings.maxInFlightPerAccount) {
      const max = this.settings.maxInFlightPerAccount;
      return { ok: false, error: Errors.tooManyCallsInFlight({ account: p.account.name, max }, { retryAfterSeconds: 1 }) };
    }
    this.inFlight.add(accountKey, 1);
    const started = performance.now();
    const mayDebug = member && input.stdout === true;
    const maySeeSource = member || algorithm.settings.sourceVisibility === 'open';
    const pipeline = algorithm.settings.pipelineEnabled;
    const callKey = pipeline
      ? this.keys.issueCallKey(p, timeoutS * 1000 + 60_000, { id: algorithm.id, ownerId: algorithm.ownerId })
      : undefined;
    if (callKey) request.api_key = callKey.secret;
    if (input.event) request.event = input.event;
    // Made before the call so that Insights reports from inside it carry it.
    const requestId = `req-${crypto.randomUUID()}`;
    const insights =
      resolved.insights && this.insights
        ? this.insights.openCall({ owner: algorithm.ownerName, name: algorithm.name, version: resolved.semanticVersion!, requestId })
        : undefined;
    if (insights) request.insights_token = insights.token;
    try {
      const exec = await this.runtime.execute(resolved.target, request, timeoutS * 1000, input);
      const duration = (performance.now() - started) / 1000;
      // The harness names its result's type (json, text, binary or void), as the protocol says.
      const content_type = (exec.response.metadata?.content_type as CallMetadata['content_type'] | undefined) ?? 'json';
      const { queueMs: queue_ms, startMs: start_ms, runMs: run_ms, cold: cold_start } = exec;
      const algorithm_version = resolved.semanticVersion;
      // One literal per shape, fields in the envelope's order: no spread of a temporary object,
      // and no property added after the object is made (each would move it to a new shape).
      const metadata: CallMetadata = algorithm_version
        ? { content_type, duration, request_id: requestId, algorithm_version, queue_ms, start_ms, run_ms, cold_start }
        : { content_type, duration, request_id: requestId, queue_ms, start_ms, run_ms, cold_start };
      if (mayDebug) metadata.stdout = exec.stdout;
      if (exec.response.error) {
        const e = exec.response.error;
        const stack = maySeeSource ? (e.stacktrace ?? e.stack_trace ?? '') : '';
        const error = {
          message: e.message ?? 'the algorithm failed',
          error_type: e.error_type ?? 'AlgorithmError',
          stacktrace: stack,
          stack_trace: stack,
        };
        return { ok: true, envelope: { error, metadata }, contentType: 'json', result: undefined, failed: true };
      }
      const contentType = metadata.content_type;
      if (this.onSucceeded && resolved.semanticVersion) {
        this.onSucceeded({
          algorithmId: algorithm.id,
          owner: algorithm.ownerName,
          name: algorithm.name,
          version: resolved.semanticVersion,
          requestId,
          contentType,
          result: exec.response.result,
        });
      }
      return { ok: true, envelope: { result: exec.response.result, metadata }, contentType, result: exec.response.result, failed: false };
    } catch (err) {
      // The runtime refused it (a cluster with no worker that can run it): a refusal, not a result.
      if (!(err instanceof RuntimeFailure)) return refusedOrThrow(err);
      const duration = (performance.now() - started) / 1000;
      // What the algorithm printed is its members' to see, as stdout is: never another caller's.
      const message = member && err.output ? `${err.message}: ${err.output}` : err.message;
      const error = { message, error_type: err.errorType, stacktrace: '', stack_trace: '' };
      const metadata: CallMetadata = { content_type: 'json', duration };
      return { ok: true, envelope: { error, metadata }, contentType: 'json', result: undefined, failed: true };
    } finally {
      callKey?.revoke();
      insights?.close();
      this.inFlight.add(accountKey, -1);
    }
  }

  /**
   * Everything `call` would refuse before running anything (capability, address, version,
   * callability, timeout, input): async calls answer these at once instead of in the result.
   */
  async check(p: Principal, input: CallRequest): Promise<{ ok: true; environment: Environment } | CallRefused> {
    try {
      requireCapability(p, 'call_algorithms');
      const { cacheKey, cached, address } = this.lookUp(p, input.address);
      checkTimeout(input.timeoutSeconds);
      toPipeRequest(input.contentType, input.body, input.checkedJson === true);
      const resolved = cached ?? (await this.resolved.fetch(cacheKey, { principal: p, address: address! }));
      return { ok: true, environment: resolved.environment };
    } catch (err) {
      return refusedOrThrow(err);
    }
  }

  /**
   * The cached resolution of an address, keyed by caller and the path as sent (a hit means the
   * path parsed and resolved before); without one, the parsed address to resolve.
   */
  private lookUp(p: Principal, address: AlgoAddress | string): { cacheKey: string; cached?: Resolved; address?: AlgoAddress } {
    if (typeof address !== 'string') {
      // `owner/name/version` can never be the key of a path: a path's key keeps what was sent.
      const cacheKey = `${p.account.id}|${p.via}|@${address.owner}/${address.name}/${address.version ?? ''}`;
      return { cacheKey, cached: this.resolved.get(cacheKey), address };
    }
    const cacheKey = `${p.account.id}|${p.via}|${address}`;
    const cached = this.resolved.get(cacheKey);
    if (cached) return { cacheKey, cached };
    return { cacheKey, address: parseAlgoPath(address) };
  }

  /**
   * Forgets every cached resolution: called after a publish (what `latest` and ranges name), a
   * change of an algorithm's settings, its deletion, or a membership change.
   */
  forgetResolutions(): void {
    this.resolved.clear();
  }

  /**
   * Which build a call runs and what the caller may see. Cached for a moment per caller and
   * address (cacheKey): the call path is hot, and these answers change rarely. A change made on
   * this node forgets them at once; one made on another node applies within the TTL.
   */
  private async resolve(p: Principal, { owner: ownerName, name, version }: AlgoAddress): Promise<Resolved> {
    const owner = await this.accounts.findByName(ownerName);
    const algorithm = owner && (await this.algorithms.find(owner.id, name));
    const notFound = () => Errors.algorithmAddressNotFound({ address: `algo://${ownerName}/${name}${version ? `/${version}` : ''}` });
    if (!owner || !algorithm) throw notFound();
    const member = isAdmin(p) || (await this.access.isMemberOrSelf(p, owner));
    if (algorithm.settings.algorithmCallability !== 'public' && !member) throw notFound();

    const target = await this.versions.resolveCall(algorithm, owner.name, member, version);
    const environment = this.catalog.environmentByName(target.environmentName);
    if (!environment) throw Errors.unavailable(`environment ${target.environmentName} is no longer in the catalog`);
    if (environment.machine_type === 'GPU' && !this.settings.gpuAvailable()) {
      throw Errors.unavailable(
        `${environment.name} needs a GPU and no live worker of this cluster declares a GPU (ALGOHOST_WORKER_GPU=true); call again once one runs`,
      );
    }
    const insights = target.insightsEnabled && target.semanticVersion !== undefined && this.insights !== undefined;
    const value: Resolved = {
      algorithm,
      environment,
      member,
      semanticVersion: target.semanticVersion,
      insights,
      target: {
        algorithmId: algorithm.id,
        artifact: target.artifact,
        algorithmName: algorithm.name,
        environment,
        network: algorithm.settings.networkAccess === 'full' ? 'internet' : 'none',
        // Insights reports reach the API over the same socket as a pipeline's calls.
        pipeline: algorithm.settings.pipelineEnabled || insights,
        owner: { id: algorithm.ownerId, name: algorithm.ownerName },
      },
    };
    return value;
  }
}

/** A catalog error as the call path's refusal; anything else is a fault, still thrown. */
function refusedOrThrow(err: unknown): CallRefused {
  if (err instanceof DomainError) return { ok: false, error: err };
  throw err;
}

/** `owner/name[/version]`, tolerating a literal `algo://` prefix and a trailing slash. */
export function parseAlgoPath(path: string): AlgoAddress {
  let p = decodeURIComponent(path).replace(/^\/+/, '');
  if (p.startsWith('algo://')) p = p.slice(7);
  else if (p.startsWith('algo:/')) p = p.slice(6); // some proxies collapse the double slash
  p = p.replace(/\/+$/, '');
  const parts = p.split('/');
  if (parts.length < 2 || parts.length > 3 || parts.some((x) => !x)) {
    throw invalid(`"${path}" is not an algorithm address: use /v1/algo/{owner}/{name}[/{version}]`);
  }
  return { owner: parts[0]!, name: parts[1]!, version: parts[2] };
}

function checkTimeout(n: number | undefined): number {
  if (n === undefined) return DEFAULT_TIMEOUT_S;
  if (!Number.isFinite(n) || n <= 0) throw invalid(`timeout must be a positive number of seconds; got "${n}"`);
  if (n > MAX_TIMEOUT_S) throw invalid(`timeout ${n} s exceeds the maximum of ${MAX_TIMEOUT_S} s`);
  return n;
}

/** A call's input as the runners' pipe protocol takes it; throws the catalog's error for an input refused. */
export function toPipeRequest(contentType: string | undefined, body: Buffer, checkedJson: boolean): PipeRequest {
  if (body.length > MAX_INPUT_BYTES) {
    throw Errors.inputTooLarge({ bytes: body.length, limit: MAX_INPUT_BYTES });
  }
  const type = contentType === 'application/json' ? contentType : (contentType ?? 'application/json').split(';')[0]!.trim().toLowerCase();
  if (type === 'application/json' || type === '') return { content_type: 'json', data: undefined, json: jsonInput(body, checkedJson) };
  if (type === 'text/plain' || type === 'application/text') return { content_type: 'text', data: body.toString('utf8') };
  if (type === 'application/octet-stream') return { content_type: 'binary', data: body.toString('base64') };
  throw Errors.unsupportedInputType({ type });
}

/**
 * A JSON input, checked in one pass over its bytes before anything parses it (grammar and
 * nesting, MAX_INPUT_DEPTH), as one line of text for the runner: the host never builds the
 * value, so a 10 MiB input costs about 10 MiB however it is shaped.
 */
function jsonInput(body: Buffer, checked: boolean): Buffer {
  let i = 0;
  while (i < body.length && (body[i] === 0x20 || body[i] === 0x0a || body[i] === 0x0d || body[i] === 0x09)) i++;
  if (i === body.length) return Buffer.from('null');
  if (!checked) {
    const scan = scanJson(body, MAX_INPUT_DEPTH);
    if (!scan.ok && scan.reason === 'depth') {
      throw Errors.badRequest(`input is nested too deeply: ${scan.message}`);
    }
    if (!scan.ok) throw Errors.malformedJson(`input is not valid JSON: ${scan.message}`);
  }
  // As before (when it was decoded to a string): invalid UTF-8 becomes U+FFFD, never raw bytes
  // a harness's decoder could choke on.
  let text = isUtf8(body) ? body : Buffer.from(body.toString('utf8'));
  // Line breaks can only be whitespace between tokens in valid JSON (inside strings they must
  // be escaped): spaces keep the request on one line of the pipe protocol.
  if (text.includes(0x0a) || text.includes(0x0d)) {
    text = Buffer.from(text);
    for (let k = 0; k < text.length; k++) if (text[k] === 0x0a || text[k] === 0x0d) text[k] = 0x20;
  }
  return text;
}
