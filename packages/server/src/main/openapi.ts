/**
 * The OpenAPI document, generated from the route schemas. The API is built on services made in
 * memory and never started: writing the document touches nothing on the host (no data
 * directory, no database file, no cgroup, no timer left running).
 */
import crypto from 'node:crypto';
import { pino } from 'pino';
import { buildApi } from '../api/app.js';
import { loadConfig } from '../config/config.js';
import { migrateToLatest, openMemoryDatabase } from '../storage/database.js';
import { buildServices, VERSION } from './services.js';
import { checkSettings } from './settings.js';

/** `env`: the settings to build with (the document does not depend on them). */
export async function openApiDocument(env: Record<string, string | undefined>): Promise<unknown> {
  const config = loadConfig({ ...env, ALGOHOST_LOG_LEVEL: 'silent' }, []);
  const logger = pino({ enabled: false });
  const db = openMemoryDatabase();
  try {
    await migrateToLatest(db);
    // Nothing is sealed with it: a key of the moment.
    const resources = { db, clusterKey: crypto.randomBytes(32) };
    const services = await buildServices(config, checkSettings(config), logger, { publicUrl: config.publicUrl }, resources);
    const app = await buildApi(services, { logger, bodyLimit: config.bodyLimitBytes, version: VERSION });
    await app.ready();
    const document = app.swagger();
    await app.close();
    return document;
  } finally {
    await db.destroy();
  }
}
