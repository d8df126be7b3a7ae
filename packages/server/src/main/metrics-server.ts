/**
 * /metrics on an address of its own (ALGOHOST_METRICS_ADDRESS), for a scraper on a network the
 * API's users are not on: GET /metrics only, with the bearer token when ALGOHOST_METRICS_TOKEN
 * is set; everything else is 404. The API port then has no /metrics (api/metrics-route.ts).
 */
import http from 'node:http';
import { hasMetricsToken, METRICS_CONTENT_TYPE } from '../api/metrics-route.js';
import { setSecurityHeaders } from '../api/security-headers.js';

export interface MetricsServer {
  url: string;
  close(): Promise<void>;
}

export async function startMetricsServer(opts: {
  address: string;
  token: string | undefined;
  render: () => Promise<string>;
  headers: Record<string, string>;
  onError: (err: unknown) => void;
}): Promise<MetricsServer> {
  const { host, port } = parseAddress(opts.address);
  const server = http.createServer((req, res) => {
    setSecurityHeaders(res, opts.headers);
    const path = (req.url ?? '/').split('?')[0];
    const answer = (status: number, message: string) =>
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify({ error: { message } }));
    if (path !== '/metrics') return answer(404, 'only /metrics is served here');
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('allow', 'GET, HEAD');
      return answer(405, 'use GET');
    }
    if (opts.token && !hasMetricsToken(req.headers.authorization, opts.token)) {
      return answer(401, '/metrics needs Authorization: Bearer <ALGOHOST_METRICS_TOKEN>');
    }
    opts.render().then(
      (text) => res.writeHead(200, { 'content-type': METRICS_CONTENT_TYPE }).end(req.method === 'HEAD' ? undefined : text),
      (err: unknown) => {
        opts.onError(err);
        answer(500, 'the metrics could not be rendered');
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = server.address();
  const actualPort = typeof bound === 'object' && bound ? bound.port : port;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${actualPort}`,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}

/** `host:port` or `[v6]:port`; the config check already refused anything else. */
export function parseAddress(address: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(address);
  if (!m) throw new Error(`not host:port: ${address}`);
  return { host: (m[1] ?? m[2])!, port: Number(m[3]) };
}
