/** Starts and stops a whole algohost node; used by `npm start` and by the tests. */
import http from 'node:http';
import { type Logger, pino } from 'pino';
import type { Config } from '../config/config.js';
import { buildApi, httpServerOptions, type HttpTimeouts } from '../api/app.js';
import { ConnectionGuard } from '../api/connection-limits.js';
import { SandboxApiSockets } from '../api/sandbox-sockets.js';
import { CallLane } from '../api/call-lane.js';
import { InputBudget } from '../api/input-budget.js';
import { RateLimiter } from '../api/rate-limits.js';
import { MAX_INPUT_BYTES } from '../domain/calls/request.js';
import { statusOf } from '../api/errors.js';
import type { Api } from '../api/context.js';
import { gitRoutes } from '../git/smart-http.js';
import { JobRunner } from '../jobs/job-runner.js';
import { Errors } from '../domain/errors.js';
import { securityHeaders, setSecurityHeaders } from '../api/security-headers.js';
import { startMetricsServer, type MetricsServer } from './metrics-server.js';
import { bootstrapAdmin, type BootstrapResult } from './bootstrap.js';
import { buildServices, openNode, VERSION, type Services } from './services.js';
import { checkSettings } from './settings.js';
import { roleOf } from './roles/index.js';

export interface RunningServer {
  url: string;
  app: Api;
  /** Connection caps and the body-rate check of this node's HTTP servers. */
  connections: ConnectionGuard;
  /** The API sockets of pipeline runners, one per runner (api/sandbox-sockets.ts). */
  apiSockets: SandboxApiSockets;
  services: Services;
  bootstrap: BootstrapResult;
  /** Where /metrics is served when ALGOHOST_METRICS_ADDRESS is set. */
  metricsUrl?: string;
  /** Warm calls answered without Fastify (api/call-lane.ts); none on a worker or with per-request logs. */
  lane?: CallLane;
  /** Call inputs held at once on this node (api/input-budget.ts). */
  inputBudget: InputBudget;
  close(): Promise<void>;
}

/** `logOptions`: pino's level, or false for no log at all (tests that read no log). */
export async function startServer(config: Config, logOptions: { level: string } | false): Promise<RunningServer> {
  // One logger, made before anything else: the services report what they handle without
  // failing (a build-log line not stored…) to the same log as the HTTP layer.
  const logger = pino(logOptions === false ? { enabled: false } : { level: logOptions.level });
  const checked = checkSettings(config);
  const timeouts: HttpTimeouts = {
    headersMs: Math.round(config.headersTimeoutSeconds * 1000),
    requestMs: Math.round(config.requestTimeoutSeconds * 1000),
    keepAliveMs: Math.round(config.keepAliveTimeoutSeconds * 1000),
  };
  const listening = await listenStarting(config, timeouts);
  const { server, url, publicUrl } = listening;
  const guard = guardConnections(config, server);
  const sockets = sandboxSockets(config, timeouts, guard);
  let services: Services;
  try {
    services = await buildServices(config, checked, logger, { publicUrl, apiSockets: sockets.apiSockets }, await openNode(config, logger));
    await services.start();
    guard.start();
  } catch (err) {
    await closeServer(server);
    throw err;
  }
  const headers = securityHeaders(publicUrl);
  let metricsServer: MetricsServer | undefined;
  try {
    const bootstrap = await bootstrapAdmin(services, config);
    const front = frontDoor(config);
    const app = await buildNodeApi(config, services, { logger, timeouts, listening, headers, front, guard });
    metricsServer = await startMetrics(config, services, headers, app);
    const lane = serveRequests(config, { services, app, listening, front, guard, headers, logger, sockets });
    logger.info(`algohost listening on ${url}`);
    // Background work starts once the stores are ready and the node is reachable (a queued
    // build's post-receive output and a pipeline's API socket need both).
    const jobs = new JobRunner(services.jobs, app.log);
    await jobs.start();
    const steps = shutdownSteps({ services, jobs, app, server, lane, metricsServer, guard, apiSockets: sockets.apiSockets });
    let closing: Promise<void> | undefined;
    return {
      url,
      app,
      connections: guard,
      apiSockets: sockets.apiSockets,
      ...(lane ? { lane } : {}),
      inputBudget: front.budget,
      services,
      bootstrap,
      ...(metricsServer ? { metricsUrl: metricsServer.url } : {}),
      close: () => (closing ??= stopInOrder(steps, app.log)),
    };
  } catch (err) {
    guard.stop();
    await sockets.apiSockets.closeAll();
    await metricsServer?.close();
    await services.nats?.close();
    await services.db.destroy();
    await closeServer(server);
    throw err;
  }
}

interface Listening {
  server: http.Server;
  /** Where this node listens. */
  url: string;
  /** Where Git's hooks call back. */
  selfUrl: string;
  /** Base of the links and Git URLs the API returns. */
  publicUrl: string;
}

/**
 * Listens first, answering 503 until ready: the node's address (port 0 = any free port) is
 * then known before anything that names it is made, and nothing is patched afterwards.
 */
async function listenStarting(config: Config, timeouts: HttpTimeouts): Promise<Listening> {
  const server = http.createServer(httpServerOptions(timeouts));
  server.on('request', answerStarting);
  await listen(server, config.port, config.host);
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  // Git's hooks call back over loopback when listening on every address.
  const selfUrl = config.host === '0.0.0.0' || config.host === '::' ? `http://127.0.0.1:${port}` : url;
  const publicUrl = /:0$/.test(config.publicUrl) ? url : config.publicUrl;
  return { server, url, selfUrl, publicUrl };
}

/**
 * Idle and trickling clients must not use up the process's descriptors, and the TCP caps keep
 * room for clients that authenticate (api/connection-limits.ts). Made before the API, which
 * tells it which connections authenticated; its body-rate check starts with the node.
 */
function guardConnections(config: Config, server: http.Server): ConnectionGuard {
  const guard = new ConnectionGuard({
    maxConnections: config.maxConnections,
    maxPerClient: config.maxConnectionsPerClient,
    bodyTimeoutMs: Math.round(config.bodyTimeoutSeconds * 1000),
    minBodyBytesPerSecond: config.minBodyBytesPerSecond,
  });
  guard.attach(server, { tcp: true });
  return guard;
}

interface SandboxSockets {
  apiSockets: SandboxApiSockets;
  /** Answers the sandboxes' requests with `listener` from now on. */
  serve(listener: http.RequestListener): void;
}

/**
 * Each pipeline runner's own API socket, bound into its sandbox even when its network is
 * isolated; answered like the TCP port, 503 until the node is ready.
 */
function sandboxSockets(config: Config, timeouts: HttpTimeouts, guard: ConnectionGuard): SandboxSockets {
  let serveSandbox: http.RequestListener = answerStarting;
  const apiSockets = new SandboxApiSockets({
    maxConnectionsPerSandbox: config.maxConnectionsPerSandbox,
    makeServer: () => {
      const socketServer = http.createServer(httpServerOptions(timeouts), (req, res) => serveSandbox(req, res));
      guard.attach(socketServer, { tcp: false });
      return socketServer;
    },
  });
  return {
    apiSockets,
    serve: (listener) => {
      serveSandbox = listener;
    },
  };
}

/** What the API's routes and the call lane share, so either counts against the same limits. */
interface FrontDoor {
  limiter: RateLimiter;
  budget: InputBudget;
  /** One log line per request: then every request goes through Fastify. */
  logRequests: boolean;
}

function frontDoor(config: Config): FrontDoor {
  return {
    limiter: new RateLimiter({
      windowSeconds: config.rateLimitWindowSeconds,
      perKey: config.rateLimitPerKey,
      perAddress: config.rateLimitPerAddress,
    }),
    budget: new InputBudget(config.callInputBudgetBytes, MAX_INPUT_BYTES),
    logRequests: config.logLevel === 'debug' || config.logLevel === 'trace',
  };
}

/** The API and Git's smart HTTP routes, ready to serve. */
async function buildNodeApi(
  config: Config,
  services: Services,
  opts: {
    logger: Logger;
    timeouts: HttpTimeouts;
    listening: Listening;
    headers: Record<string, string>;
    front: FrontDoor;
    guard: ConnectionGuard;
  },
): Promise<Api> {
  const app = await buildApi(services, {
    logger: opts.logger,
    bodyLimit: config.bodyLimitBytes,
    version: VERSION,
    logRequests: opts.front.logRequests,
    corsOrigins: (config.corsOrigins ?? '')
      .split(',')
      .map((o) => o.trim())
      .filter(Boolean),
    callInputBudget: opts.front.budget,
    timeouts: opts.timeouts,
    server: opts.listening.server,
    webDir: config.webDir,
    securityHeaders: opts.headers,
    metrics: { ...(config.metricsToken ? { token: config.metricsToken } : {}), elsewhere: config.metricsAddress !== undefined },
    rateLimits: opts.front.limiter,
    connections: opts.guard,
    workerPort: !roleOf(config).servesApi,
  });
  await app.register(async (scope) =>
    gitRoutes(scope, {
      keys: services.keys,
      algorithms: services.algorithms,
      versions: services.versions,
      repositories: services.repositories,
      pushes: { pushed: (event, say) => services.builds.pushed(event.algorithmId, event.updates, event.pushOptions, say) },
      git: config.gitBinary,
      selfUrl: opts.listening.selfUrl,
      errorStatus: statusOf,
    }),
  );
  await app.ready();
  return app;
}

/** /metrics on its own address (ALGOHOST_METRICS_ADDRESS); none when unset. */
async function startMetrics(
  config: Config,
  services: Services,
  headers: Record<string, string>,
  app: Api,
): Promise<MetricsServer | undefined> {
  if (config.metricsAddress === undefined) return undefined;
  return startMetricsServer({
    address: config.metricsAddress,
    token: config.metricsToken,
    render: () => services.metrics(),
    headers,
    onError: (err) => app.log.error({ err }, 'metrics: rendering failed'),
  });
}

/**
 * Stops answering 503: from now on the TCP port and the sandboxes' sockets serve the node.
 * Warm sync calls skip Fastify's request cycle (api/call-lane.ts); not on a worker's port (it
 * serves only /healthz and /metrics), nor when every request is to be logged.
 */
function serveRequests(
  config: Config,
  n: {
    services: Services;
    app: Api;
    listening: Listening;
    front: FrontDoor;
    guard: ConnectionGuard;
    headers: Record<string, string>;
    logger: Logger;
    sockets: SandboxSockets;
  },
): CallLane | undefined {
  const { services, app, front } = n;
  const lane = front.logRequests
    ? undefined
    : new CallLane({
        keys: services.keys,
        calls: services.calls,
        limiter: front.limiter,
        connections: n.guard,
        budget: front.budget,
        securityHeaders: n.headers,
        logger: n.logger,
      });
  const serve = (req: http.IncomingMessage, res: http.ServerResponse) => {
    if (!lane?.take(req, res)) app.routing(req, res);
  };
  const { server } = n.listening;
  server.off('request', answerStarting);
  server.on('request', roleOf(config).servesApi ? serve : (req, res) => app.routing(req, res));
  // A worker serves its own sandboxes in full (app.ts, workerPort).
  n.sockets.serve(serve);
  return lane;
}

type ShutdownStep = [what: string, stop: () => Promise<unknown>];

/** What the node stops, in this order, each step after the one before has ended. */
function shutdownSteps(n: {
  services: Services;
  jobs: JobRunner;
  app: Api;
  server: http.Server;
  lane: CallLane | undefined;
  metricsServer: MetricsServer | undefined;
  guard: ConnectionGuard;
  apiSockets: SandboxApiSockets;
}): ShutdownStep[] {
  const { services } = n;
  return [
    // In reverse start order; running builds are cancelled and requeued for the next start.
    ['background jobs', () => n.jobs.stop()],
    // After the flows' consumers (which write dead letters through them) have stopped.
    ['Kafka producers', () => services.producers.close()],
    ['build egress proxy', () => services.egress.stop()],
    // Runners next: calls still running end (as SystemExit) and their results are written.
    ['runners', () => services.pool.stopAll()],
    // After the runners, whose channels close with them.
    ['runner egress proxy', () => services.runnerEgress.stop()],
    ['async call results', () => services.asyncCalls.drain()],
    // Cluster mode: async calls a worker was running have ended with the runners; their
    // outcomes are recorded and acknowledged before NATS closes.
    ['cluster work', async () => services.clusterWorker?.drain()],
    ['NATS', async () => services.nats?.close()],
    ['API sockets', () => n.apiSockets.closeAll()],
    [
      'HTTP server',
      () => {
        // Fastify answers what arrives from now on (503 while closing).
        n.lane?.close();
        return n.app.close().then(() => closeServer(n.server));
      },
    ],
    ['metrics server', async () => n.metricsServer?.close()],
    ['connection guard', async () => n.guard.stop()],
    ['blob store', () => services.blobs.close()],
    ['database', () => services.db.destroy()],
  ];
}

/** A failing step is logged and the rest still run, so the database always closes last. */
async function stopInOrder(steps: ShutdownStep[], log: Api['log']): Promise<void> {
  let failure: unknown;
  for (const [what, stop] of steps) {
    try {
      await stop();
    } catch (err) {
      log.error({ err }, `shutdown: stopping the ${what} failed`);
      failure ??= err;
    }
  }
  if (failure !== undefined) throw failure;
}

/** Requests that arrive while the node is starting: retry shortly. */
function answerStarting(_req: http.IncomingMessage, res: http.ServerResponse): void {
  setSecurityHeaders(res, securityHeaders(''));
  const body = JSON.stringify({ error: { code: Errors.unavailable.code, message: 'the server is starting; retry shortly' } });
  res.writeHead(503, { 'content-type': 'application/json; charset=utf-8', 'retry-after': '1' }).end(body);
}

function listen(server: http.Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** Stops listening and waits for the connections to end (idle keep-alive ones are closed now). */
function closeServer(server: http.Server): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) return resolve();
    server.close(() => resolve());
    server.closeIdleConnections();
  });
}

export { VERSION };
