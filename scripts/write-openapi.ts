/**
 * Writes openapi.json (the OpenAPI 3.1 document generated from the route schemas), or with
 * --check fails when the committed file differs from what the code generates.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../packages/server/src/config/config.js';
import { pino } from 'pino';
import { buildApi } from '../packages/server/src/api/app.js';
import { buildServices } from '../packages/server/src/main/services.js';
import { checkSettings } from '../packages/server/src/main/settings.js';
import { VERSION } from '../packages/server/src/main/server.js';

const target = fileURLToPath(new URL('../openapi.json', import.meta.url));
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'algohost-openapi-'));
try {
  const config = loadConfig({ ALGOHOST_DATA_DIR: dataDir, ALGOHOST_LOG_LEVEL: 'silent' }, []);
  const logger = pino({ enabled: false });
  const services = await buildServices(config, checkSettings(config), logger, { publicUrl: config.publicUrl });
  const app = await buildApi(services, { logger, bodyLimit: config.bodyLimitBytes, version: VERSION });
  await app.ready();
  const text = `${JSON.stringify(app.swagger(), null, 2)}\n`;
  await app.close();
  await services.db.destroy();
  if (process.argv.includes('--check')) {
    const current = fs.existsSync(target) ? fs.readFileSync(target, 'utf8') : '';
    if (current !== text) {
      console.error('openapi.json is out of date with the route schemas: run `npm run openapi` and commit it.');
      process.exitCode = 1;
    } else {
      console.log('openapi.json matches the code');
    }
  } else {
    fs.writeFileSync(target, text);
    console.log(`wrote ${path.relative(process.cwd(), target)}`);
  }
} finally {
  fs.rmSync(dataDir, { recursive: true, force: true });
}
