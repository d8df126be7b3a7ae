/**
 * The warm-call bench's baseline, run as a process of its own (as algohost is): a bare Node HTTP
 * server forwarding each request body to one warm Python process running algohost's harness on
 * the same algorithm (no auth, no sandbox, no envelope), answering with the harness's response
 * line. The smallest thing that serves a call over HTTP with the pipe protocol.
 * Usage: node --import tsx bench/bare-baseline.ts <algorithm checkout>; prints "listening <url>".
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { ROOT } from './support.js';

const HARNESS = path.join(ROOT, 'packages/server/src/runtime/languages/python/runner/runner.py');
const appDir = process.argv[2];
if (!appDir) throw new Error('usage: bare-baseline.ts <algorithm checkout>');

const fifo = path.join(appDir, 'algoout');
fs.rmSync(fifo, { force: true });
execFileSync('mkfifo', [fifo]);
const fd = fs.openSync(fifo, fs.constants.O_RDWR | fs.constants.O_NONBLOCK);
const responses = new net.Socket({ fd, readable: true, writable: false });
const py = spawn('/usr/bin/python3', ['-u', HARNESS], {
  cwd: appDir,
  env: { PATH: '/usr/bin:/bin', ALGOHOST_RESPONSE_FIFO: fifo, PYTHONDONTWRITEBYTECODE: '1' },
  stdio: ['pipe', 'pipe', 'inherit'],
});
await new Promise<void>((resolve) => py.stdout.on('data', (d: Buffer) => d.toString().includes('PIPE_INIT_COMPLETE') && resolve()));

// One call at a time on the one process, in arrival order, as algohost's single warm runner.
const waiting: { body: string; answer: (line: string) => void }[] = [];
let inFlight: ((line: string) => void) | undefined;
const next = () => {
  const call = waiting.shift();
  if (!call) return;
  inFlight = call.answer;
  py.stdin.write(`${JSON.stringify({ content_type: 'json', data: JSON.parse(call.body || 'null') })}\n`);
};
let buf = '';
responses.setEncoding('utf8').on('data', (d: string) => {
  buf += d;
  let nl: number;
  while ((nl = buf.indexOf('\n')) >= 0) {
    const line = buf.slice(0, nl);
    buf = buf.slice(nl + 1);
    const answer = inFlight;
    inFlight = undefined;
    answer?.(line);
    next();
  }
});

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    waiting.push({
      body: Buffer.concat(chunks).toString(),
      answer: (line) => {
        res.setHeader('content-type', 'application/json');
        res.end(line);
      },
    });
    if (!inFlight) next();
  });
});
server.listen(0, '127.0.0.1', () => console.log(`listening http://127.0.0.1:${(server.address() as net.AddressInfo).port}`));
process.on('SIGTERM', () => {
  py.kill();
  process.exit(0);
});
