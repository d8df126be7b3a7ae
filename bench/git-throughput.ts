/**
 * Clone and push throughput of a 50 MB repository through algohost's Git smart HTTP, against
 * `git http-backend` behind a minimal Node HTTP server (the baseline, run beside it), and the
 * server's memory growth while a 200 MB repository is pushed and cloned.
 * Budgets (docs/design/performance.md, issue 3): throughput ≥ 0.9 × the baseline; memory growth of a few MB.
 * Run: node --import tsx bench/git-throughput.ts [MB=50] [bigMB=200]
 */
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { api, benchUser, git, gitAsync, gitUrl, median, report, rssMb, startAlgohost, tempDir, timeAsync } from './support.js';

const MB = Number(process.argv[2] ?? 50);
const BIG_MB = Number(process.argv[3] ?? 200);
const ROUNDS = 3;

/** A repository of incompressible files totalling `mb` megabytes, in one commit. */
function makeRepo(dir: string, mb: number): void {
  fs.mkdirSync(dir, { recursive: true });
  git(['init', '-q', '-b', 'main', dir]);
  for (let i = 0; i < mb; i++) fs.writeFileSync(path.join(dir, `blob-${i}.bin`), crypto.randomBytes(1024 * 1024));
  git(['add', '-A'], dir);
  git(['commit', '-q', '-m', 'data'], dir);
}

/** The baseline: git http-backend as CGI behind the smallest Node server that streams. */
function startHttpBackend(projectRoot: string): Promise<{ url: string; close: () => void }> {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url!, 'http://x');
    const child = spawn('git', ['http-backend'], {
      env: {
        PATH: process.env.PATH,
        GIT_PROJECT_ROOT: projectRoot,
        GIT_HTTP_EXPORT_ALL: '1',
        GIT_CONFIG_NOSYSTEM: '1',
        GIT_CONFIG_GLOBAL: '/dev/null',
        REMOTE_USER: 'bench',
        REQUEST_METHOD: req.method!,
        PATH_INFO: url.pathname,
        QUERY_STRING: url.search.slice(1),
        CONTENT_TYPE: req.headers['content-type'] ?? '',
        HTTP_CONTENT_ENCODING: String(req.headers['content-encoding'] ?? ''),
        GIT_PROTOCOL: String(req.headers['git-protocol'] ?? ''),
      },
    });
    req.pipe(child.stdin);
    let head = Buffer.alloc(0);
    let headersDone = false;
    child.stdout.on('data', (d: Buffer) => {
      if (headersDone) {
        if (!res.write(d)) child.stdout.pause();
        return;
      }
      head = Buffer.concat([head, d]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      headersDone = true;
      let status = 200;
      for (const line of head.subarray(0, end).toString().split('\r\n')) {
        const [k, ...v] = line.split(':');
        if (k!.toLowerCase() === 'status') status = parseInt(v.join(':'), 10);
        else res.setHeader(k!, v.join(':').trim());
      }
      res.writeHead(status);
      res.write(head.subarray(end + 4));
    });
    res.on('drain', () => child.stdout.resume());
    child.stdout.on('end', () => res.end());
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port;
      resolve({ url: `http://127.0.0.1:${port}`, close: () => server.close() });
    }),
  );
}

const work = tempDir('bench-git-');
const h = await startAlgohost();
try {
  const key = await benchUser(h, 'bench');
  const source = path.join(work, 'source');
  makeRepo(source, MB);

  const backendRoot = path.join(work, 'backend');
  fs.mkdirSync(backendRoot);
  const backend = await startHttpBackend(backendRoot);

  const pushOurs: number[] = [];
  const pushBase: number[] = [];
  const cloneOurs: number[] = [];
  const cloneBase: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const name = `Data${r}`;
    await api(h.url, key, 'POST', '/v1/algorithms/bench', { name });
    git(['init', '-q', '--bare', path.join(backendRoot, `${name}.git`)]);
    // Force-push replaces the template history; both sides receive the same pack.
    pushOurs.push(await timeAsync(() => gitAsync(['push', '-q', '-f', gitUrl(h.url, 'bench', key, 'bench', name), 'main'], source)));
    pushBase.push(await timeAsync(() => gitAsync(['push', '-q', '-f', `${backend.url}/${name}.git`, 'main'], source)));
    const c1 = path.join(work, `c-ours-${r}`);
    const c2 = path.join(work, `c-base-${r}`);
    cloneOurs.push(await timeAsync(() => gitAsync(['clone', '-q', gitUrl(h.url, 'bench', key, 'bench', name), c1])));
    cloneBase.push(await timeAsync(() => gitAsync(['clone', '-q', `${backend.url}/${name}.git`, c2])));
    fs.rmSync(c1, { recursive: true, force: true });
    fs.rmSync(c2, { recursive: true, force: true });
  }
  backend.close();

  // Memory: sample the server's RSS while a big repository goes up and comes back down.
  const big = path.join(work, 'big');
  makeRepo(big, BIG_MB);
  await api(h.url, key, 'POST', '/v1/algorithms/bench', { name: 'Big' });
  await new Promise((r) => setTimeout(r, 500));
  const before = rssMb(h.process.pid!);
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMb(h.process.pid!))), 20);
  const bigPush = await timeAsync(() => gitAsync(['push', '-q', '-f', gitUrl(h.url, 'bench', key, 'bench', 'Big'), 'main'], big));
  await new Promise((r) => setTimeout(r, 50));
  const bigClone = await timeAsync(() =>
    gitAsync(['clone', '-q', gitUrl(h.url, 'bench', key, 'bench', 'Big'), path.join(work, 'big-clone')]),
  );
  await new Promise((r) => setTimeout(r, 100));
  clearInterval(sampler);

  const tput = (ms: number) => `${((MB / ms) * 1000).toFixed(0)} MB/s`;
  report([
    [`push ${MB} MB, algohost (median of ${ROUNDS})`, `${median(pushOurs).toFixed(0)} ms, ${tput(median(pushOurs))}`],
    [`push ${MB} MB, git http-backend (baseline)`, `${median(pushBase).toFixed(0)} ms, ${tput(median(pushBase))}`],
    [`  push throughput ratio (budget ≥ 0.9)`, `${(median(pushBase) / median(pushOurs)).toFixed(2)}`],
    [`clone ${MB} MB, algohost (median of ${ROUNDS})`, `${median(cloneOurs).toFixed(0)} ms, ${tput(median(cloneOurs))}`],
    [`clone ${MB} MB, git http-backend (baseline)`, `${median(cloneBase).toFixed(0)} ms, ${tput(median(cloneBase))}`],
    [`  clone throughput ratio (budget ≥ 0.9)`, `${(median(cloneBase) / median(cloneOurs)).toFixed(2)}`],
    [
      `${BIG_MB} MB push + clone: server RSS before / peak`,
      `${before.toFixed(1)} MB / ${peak.toFixed(1)} MB (growth ${(peak - before).toFixed(1)} MB; push ${bigPush.toFixed(0)} ms, clone ${bigClone.toFixed(0)} ms)`,
    ],
  ]);
} finally {
  await h.stop();
  fs.rmSync(work, { recursive: true, force: true });
}
