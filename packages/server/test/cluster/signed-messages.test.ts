/**
 * cluster/signed-messages.ts: what makes a cluster message believable. A message verifies only
 * under the cluster key, on the subject, reply subject and purpose it was signed for, and (an
 * answer) for the request it answers; with a window, it is refused once outside it or heard a
 * second time. The attacks of a client that reaches NATS without the key, played on the
 * primitive (the cluster test security-cluster-messages.test.ts plays them on real nodes).
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { describe, test } from 'node:test';
import { MESSAGE_WINDOW_MS, MessageRefused, MessageSigner, SIGNED_HEAD_BYTES } from '../../src/cluster/signed-messages.js';

const KEY = crypto.randomBytes(32);
const payload = Buffer.from('{"target":{"algorithmId":"a1","artifact":"a1/python311/abc"}}');
const WINDOW = { windowMs: MESSAGE_WINDOW_MS, once: true };

describe('signed cluster messages', () => {
  test('a message verifies on the subject, reply subject and purpose it was signed for, and gives its payload back', () => {
    const node = new MessageSigner(KEY);
    const { data } = node.sign('run', 'algohost.run.node.w1', '_INBOX.algohost.n1.0_0', payload);
    assert.equal(data.length, SIGNED_HEAD_BYTES + payload.length);
    const other = new MessageSigner(KEY);
    assert.deepEqual(other.open('run', 'algohost.run.node.w1', '_INBOX.algohost.n1.0_0', data, WINDOW).payload, payload);
  });

  test('made without the key, changed on the way, or moved to another subject, reply subject or purpose: refused', () => {
    const node = new MessageSigner(KEY);
    const worker = new MessageSigner(KEY);
    const subject = 'algohost.run.node.w1';
    const reply = '_INBOX.algohost.n1.0_0';
    const refused = (data: Uint8Array, s = subject, r = reply, purpose: 'run' | 'answer' = 'run') =>
      assert.throws(() => worker.open(purpose, s, r, data, WINDOW), MessageRefused);
    // Mallory's own key, and a plain message as the old wire format had it.
    refused(new MessageSigner(crypto.randomBytes(32)).sign('run', subject, reply, payload).data);
    refused(payload);
    refused(Buffer.alloc(0));
    const genuine = () => node.sign('run', subject, reply, payload).data;
    const changed = genuine();
    changed.writeUInt8(changed.readUInt8(changed.length - 2) ^ 1, changed.length - 2);
    refused(changed);
    const later = genuine();
    later.writeDoubleBE(later.readDoubleBE(1) + 1, 1); // the issued-at is covered too
    refused(later);
    refused(genuine(), 'algohost.run.node.w2');
    refused(genuine(), subject, '_INBOX.mallory.1');
    refused(genuine(), subject, reply, 'answer');
    // Subject and reply cannot trade characters between them (each is encoded with its length).
    const split = node.sign('run', 'a.b', 'c', payload).data;
    assert.throws(() => worker.open('run', 'a.', 'bc', split), MessageRefused);
  });

  test("an answer verifies only for the request it answers: a reply made for another call is not this call's", () => {
    const api = new MessageSigner(KEY);
    const worker = new MessageSigner(KEY);
    const reply = '_INBOX.algohost.n1.3_7';
    const request = api.sign('run', 'algohost.run.node.w1', reply, payload);
    const other = api.sign('run', 'algohost.run.node.w1', reply, payload);
    const { nonce } = worker.open('run', 'algohost.run.node.w1', reply, request.data, WINDOW);
    const answer = worker.sign('answer', reply, '', Buffer.from('{"ok":1}'), nonce).data;
    assert.deepEqual(api.open('answer', reply, '', answer, { ...WINDOW, boundTo: request.nonce }).payload, Buffer.from('{"ok":1}'));
    const answer2 = worker.sign('answer', reply, '', Buffer.from('{"ok":1}'), nonce).data;
    assert.throws(() => api.open('answer', reply, '', answer2, { ...WINDOW, boundTo: other.nonce }), MessageRefused);
    assert.throws(() => api.open('answer', reply, '', answer2, WINDOW), MessageRefused, 'an answer is bound to its request');
  });

  test('heard a second time within the window, or outside it either way: refused', () => {
    let now = 1_700_000_000_000;
    const clock = () => now;
    const api = new MessageSigner(KEY, undefined, clock);
    const worker = new MessageSigner(KEY, undefined, clock);
    const subject = 'algohost.run.node.w1';
    const send = () => api.sign('run', subject, 'r', payload).data;
    const first = send();
    worker.open('run', subject, 'r', first, WINDOW);
    assert.throws(() => worker.open('run', subject, 'r', first, WINDOW), /seen before/);
    // A message stamped a window ahead (the sender's clock) stays refused as a replay until it is outside the window.
    now += MESSAGE_WINDOW_MS;
    const ahead = send();
    now -= MESSAGE_WINDOW_MS;
    worker.open('run', subject, 'r', ahead, WINDOW);
    for (let step = 0; step < 8; step++) {
      now += MESSAGE_WINDOW_MS / 4;
      assert.throws(() => worker.open('run', subject, 'r', ahead, WINDOW), MessageRefused, `after ${step + 1} quarter windows`);
    }
    const old = send();
    now += MESSAGE_WINDOW_MS + 1;
    assert.throws(() => worker.open('run', subject, 'r', old, WINDOW), /outside the window/);
    now -= 2 * (MESSAGE_WINDOW_MS + 1);
    assert.throws(() => worker.open('run', subject, 'r', old, WINDOW), /outside the window/, 'from too far ahead');
  });

  test('durable work has no window (it waits in the stream) but still verifies', () => {
    let now = 1_700_000_000_000;
    const api = new MessageSigner(KEY, undefined, () => now);
    const worker = new MessageSigner(KEY, undefined, () => now);
    const { data } = api.sign('work', 'algohost.work.async', '', payload);
    now += 6 * 3600_000;
    assert.deepEqual(worker.open('work', 'algohost.work.async', '', data).payload, payload);
    assert.throws(() => worker.open('work', 'algohost.work.gpu.async', '', data), MessageRefused);
  });

  test('a key shorter than 32 bytes is refused', () => {
    assert.throws(() => new MessageSigner(crypto.randomBytes(16)), /at least 32 bytes/);
  });
});
