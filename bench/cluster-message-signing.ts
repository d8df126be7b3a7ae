/**
 * What signing cluster messages (cluster/signed-messages.ts) adds to a warm sync call: the API
 * node signs the request and checks the answer, the worker checks the request and signs the
 * answer (and its heartbeats, one per 2 s of a long call). Measured here on the messages a warm
 * call of a small JSON input carries, and on larger inputs, in this process:
 *   node --import tsx bench/cluster-message-signing.ts [iterations=200000]
 */
import crypto from 'node:crypto';
import { encodeFrame } from '../packages/server/src/cluster/frames.js';
import { MESSAGE_WINDOW_MS, MessageSigner } from '../packages/server/src/cluster/signed-messages.js';

const ITERATIONS = Number(process.argv[2] ?? 200_000);
const key = crypto.randomBytes(32);
const api = new MessageSigner(key);
const worker = new MessageSigner(key);
const subject = 'algohost.run.node.0b6f3c1e-7d0a-4c38-9f3e-2c1d5b7a9e10';
const reply = '_INBOX.algohost.7c9e2a41-1f0b-4d7e-8a36-5b2c9d0e4f11.12_345678';
const windowed = { windowMs: MESSAGE_WINDOW_MS, once: true };

/** One call's four operations: sign and check the request, sign and check its answer. */
function roundTrip(request: Uint8Array, answer: Uint8Array): void {
  const sent = api.sign('run', subject, reply, request);
  const heard = worker.open('run', subject, reply, sent.data, windowed);
  const back = worker.sign('answer', reply, '', answer, heard.nonce).data;
  api.open('answer', reply, '', back, { ...windowed, boundTo: sent.nonce });
}

function measure(label: string, inputBytes: number, iterations: number): void {
  const request = encodeFrame(
    {
      target: { algorithmId: crypto.randomUUID(), artifact: `${crypto.randomUUID()}/python311/${'a'.repeat(40)}` },
      timeoutMs: 300_000,
      call: { contentType: 'application/json', checkedJson: true },
    },
    Buffer.alloc(inputBytes, 0x31),
  );
  const answer = encodeFrame({
    ok: { response: { result: 1, metadata: { content_type: 'json' } }, stdout: '', cold: false, queueMs: 0, startMs: 0, runMs: 0.05 },
    report: { id: 'w', seq: 1, load: 1 },
  });
  for (let i = 0; i < Math.min(iterations, 5000); i++) roundTrip(request, answer);
  const t = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) roundTrip(request, answer);
  const us = Number(process.hrtime.bigint() - t) / 1000 / iterations;
  // The same bytes hashed once each (one SHA-256 pass over request and answer): the floor, to
  // read the figure against on a loaded machine.
  const h = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) {
    crypto.createHash('sha256').update(request).digest();
    crypto.createHash('sha256').update(answer).digest();
  }
  const hashUs = Number(process.hrtime.bigint() - h) / 1000 / iterations;
  console.log(
    `${label.padEnd(28)} ${us.toFixed(2).padStart(9)} µs per call (2 signs + 2 checks); plain SHA-256 of the same bytes ${hashUs.toFixed(2)} µs; request ${request.length} B`,
  );
}

measure('warm call, 7-byte input', 7, ITERATIONS);
measure('1 KiB input', 1024, ITERATIONS);
measure('64 KiB input', 64 * 1024, Math.ceil(ITERATIONS / 20));
measure('10 MiB input (the maximum)', 10 * 1024 * 1024, 20);
