/**
 * Compiles the server's TypeScript to plain JavaScript in packages/server/dist (one .js per .ts,
 * the same tree, not bundled) and copies the other files the server reads beside its modules
 * (harnesses, build scripts, Git hooks), so paths made from import.meta.url resolve as in src/.
 * Why: `npm start` runs this output, not tsx's on-the-fly loader, which keeps every function's
 * name with an extra call per closure made: a cost on every API call. esbuild takes well under
 * a second, so `npm start` compiles every time and never serves stale code.
 * Run: node --import tsx scripts/build-server.ts
 */
import { build } from 'esbuild';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const SERVER = fileURLToPath(new URL('../packages/server/', import.meta.url));
const SRC = path.join(SERVER, 'src');
const OUT = path.join(SERVER, 'dist');

const sources: string[] = [];
const assets: string[] = [];
for (const entry of fs.readdirSync(SRC, { recursive: true, withFileTypes: true })) {
  if (!entry.isFile()) continue;
  const file = path.join(entry.parentPath, entry.name);
  (entry.name.endsWith('.ts') ? sources : assets).push(file);
}

// Into a fresh folder renamed over the old one: a server starting meanwhile never sees half a tree.
const next = `${OUT}.next`;
fs.rmSync(next, { recursive: true, force: true });
await build({
  entryPoints: sources,
  outdir: next,
  outbase: SRC,
  bundle: false,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: 'linked',
  logLevel: 'warning',
});
for (const file of assets) {
  const to = path.join(next, path.relative(SRC, file));
  fs.mkdirSync(path.dirname(to), { recursive: true });
  fs.copyFileSync(file, to);
  fs.chmodSync(to, fs.statSync(file).mode & 0o777);
}
fs.rmSync(OUT, { recursive: true, force: true });
fs.renameSync(next, OUT);
