/**
 * The JavaScript budget of the web UI (docs/design/performance.md): what the first page loads, gzipped,
 * is at most 200 KB. "What the first page loads" is read from the built index.html: its module
 * scripts and the chunks it preloads; chunks imported later (the Markdown renderer) do not count.
 * It also reports what the server sends a browser that accepts brotli: the build's `.br` copies
 * (scripts/precompress-web.ts), when there are.
 * Run by scripts/test.sh after building (scripts/build-web.sh).
 * Usage: node --import tsx scripts/check-web-bundle.ts [dist directory]
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const BUDGET_BYTES = 200 * 1024;
const dist = process.argv[2] ?? fileURLToPath(new URL('../packages/web/dist', import.meta.url));

const indexFile = path.join(dist, 'index.html');
if (!fs.existsSync(indexFile)) {
  console.error(`${indexFile} is missing: build the web UI first (bash scripts/build-web.sh)`);
  process.exit(1);
}
const html = fs.readFileSync(indexFile, 'utf8');
const urls = new Set<string>();
for (const m of html.matchAll(/<script\b[^>]*\btype="module"[^>]*\bsrc="([^"]+)"/g)) urls.add(m[1]!);
for (const m of html.matchAll(/<link\b[^>]*\brel="modulepreload"[^>]*\bhref="([^"]+)"/g)) urls.add(m[1]!);
if (urls.size === 0) {
  console.error(`${indexFile} loads no module script: is it Vite's build output?`);
  process.exit(1);
}

const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
let total = 0;
let brotli: number | undefined = 0;
for (const url of urls) {
  const file = path.join(dist, url.replace(/^\//, ''));
  const gzipped = gzipSync(fs.readFileSync(file), { level: 9 }).byteLength;
  const br = fs.existsSync(`${file}.br`) ? fs.statSync(`${file}.br`).size : undefined;
  total += gzipped;
  brotli = br === undefined || brotli === undefined ? undefined : brotli + br;
  console.log(`${url}: ${kb(gzipped)} gzipped${br === undefined ? '' : `, ${kb(br)} in brotli`}`);
}
const verdict = total <= BUDGET_BYTES ? 'within' : 'OVER';
const sent = brotli === undefined ? '' : ` (${kb(brotli)} sent in brotli)`;
console.log(`first page JavaScript: ${kb(total)} gzipped${sent}, ${verdict} the budget of ${BUDGET_BYTES / 1024} KB`);
if (total > BUDGET_BYTES) process.exit(1);
