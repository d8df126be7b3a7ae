/**
 * Generates src/generated/openapi.ts from the repository's openapi.json with openapi-typescript,
 * formatted with the repository's Prettier settings so that the committed file passes
 * `prettier --check`. With --check it writes nothing and fails when the committed file is stale
 * (run `npm run generate -w @algohost/client` after `npm run openapi`).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import * as prettier from 'prettier';

const here = path.dirname(fileURLToPath(import.meta.url));
const specPath = path.resolve(here, '../../../openapi.json');
const outPath = path.resolve(here, '../src/generated/openapi.ts');

const HEADER = `/**
 * Generated from openapi.json by openapi-typescript (packages/client/scripts/generate-types.ts).
 * Do not edit: run \`npm run generate -w @algohost/client\`; \`npm run check -w @algohost/client\`
 * fails when this file is stale.
 */
`;

async function generate(): Promise<string> {
  const spec = JSON.parse(fs.readFileSync(specPath, 'utf8')) as Record<string, unknown>;
  const ast = await openapiTS(spec as Parameters<typeof openapiTS>[0], { alphabetize: false });
  const source = HEADER + astToString(ast);
  const options = (await prettier.resolveConfig(outPath)) ?? {};
  return prettier.format(source, { ...options, filepath: outPath });
}

const text = await generate();
if (process.argv.includes('--check')) {
  const current = fs.existsSync(outPath) ? fs.readFileSync(outPath, 'utf8') : '';
  if (current !== text) {
    console.error(`${path.relative(process.cwd(), outPath)} is stale: run \`npm run generate -w @algohost/client\``);
    process.exit(1);
  }
  console.log('generated client types are up to date');
} else {
  fs.mkdirSync(path.dirname(outPath), { recursive: true });
  fs.writeFileSync(outPath, text);
  console.log(`wrote ${path.relative(process.cwd(), outPath)}`);
}
