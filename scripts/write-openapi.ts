/**
 * Writes openapi.json (the OpenAPI 3.1 document generated from the route schemas), or with
 * --check fails when the committed file differs from what the code generates.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openApiDocument } from '../packages/server/src/main/openapi.js';

const target = fileURLToPath(new URL('../openapi.json', import.meta.url));
const text = `${JSON.stringify(await openApiDocument({}), null, 2)}\n`;
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
