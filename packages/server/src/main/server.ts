/** Starts and stops a whole algohost node; used by `npm start` and by the tests. */
import fs from 'node:fs';
import type { FastifyServerOptions } from 'fastify';
import type { Config } from '../config/config.js';
import { buildApi } from '../api/app.js';
import type { Api } from '../api/context.js';
import { bootstrapAdmin, buildServices, type BootstrapResult, type Services } from './services.js';

const VERSION = (JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

export interface RunningServer {
  url: string;
  app: Api;
  services: Services;
  bootstrap: BootstrapResult;
  close(): Promise<void>;
}

export async function startServer(config: Config, logger: FastifyServerOptions['logger']): Promise<RunningServer> {
  const services = await buildServices(config);
  try {
    const bootstrap = await bootstrapAdmin(services, config);
    const app = await buildApi(services, { logger, bodyLimit: config.bodyLimitBytes, version: VERSION });
    await app.listen({ port: config.port, host: config.host, listenTextResolver: (address) => `algohost listening on ${address}` });
    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    const url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
    // Port 0 means "any free port": links can only name the real port once it is known.
    if (/:0$/.test(services.links.publicUrl)) services.links.publicUrl = url;
    let closing: Promise<void> | undefined;
    return {
      url,
      app,
      services,
      bootstrap,
      close: () =>
        (closing ??= (async () => {
          await app.close();
          await services.db.destroy();
        })()),
    };
  } catch (err) {
    await services.db.destroy();
    throw err;
  }
}

export { VERSION };
