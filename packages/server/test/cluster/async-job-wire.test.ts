/**
 * cluster/dispatch.ts: an async call waits in the JetStream work queue, which keeps it across a
 * restart of every node. A job queued by this version and one queued by the version before (the
 * path as sent, the `timeout` query string) both come out as the same CallRequest, so an async
 * call accepted just before an upgrade still runs after it. The real queue is exercised by
 * cluster.test.ts; this checks the two wire shapes on the real signer and frames.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { test } from 'node:test';
import { openAsyncJob } from '../../src/cluster/dispatch.js';
import { encodeFrame } from '../../src/cluster/frames.js';
import type { NatsCluster } from '../../src/cluster/nats-cluster.js';
import { MessageSigner } from '../../src/cluster/signed-messages.js';

const SUBJECT = 'algohost.work.async';
const caller = { accountId: 'acc-1', via: 'standard_key', capabilities: ['call_algorithms'], keyId: 'key-1' };
const body = Buffer.from('{"n": 3}');

function queued(input: Record<string, unknown>): { cluster: NatsCluster; data: Buffer } {
  const signer = new MessageSigner(crypto.randomBytes(32));
  const { data } = signer.sign('work', SUBJECT, '', encodeFrame({ requestId: 'req-1', caller, input }, body));
  // openAsyncJob reads only the node's signer.
  return { cluster: { signer } as unknown as NatsCluster, data };
}

test('a job as this version queues it comes out as it went in', () => {
  const { cluster, data } = queued({ address: 'alice/Hello/1.0.0', contentType: 'application/json', timeoutSeconds: 30, stdout: true });
  const job = openAsyncJob(cluster, SUBJECT, data);
  assert.equal(job.requestId, 'req-1');
  assert.deepEqual(job.caller, caller);
  assert.deepEqual(job.input, { address: 'alice/Hello/1.0.0', contentType: 'application/json', timeoutSeconds: 30, stdout: true, body });
});

test('a job queued by the version before (path, timeout as a query string) runs with the same request', () => {
  const { cluster, data } = queued({ path: 'algo://alice/Hello/1.0.0/', contentType: 'application/json', timeout: '45' });
  const job = openAsyncJob(cluster, SUBJECT, data);
  assert.deepEqual(job.input, { address: 'algo://alice/Hello/1.0.0/', contentType: 'application/json', timeoutSeconds: 45, body });
});
