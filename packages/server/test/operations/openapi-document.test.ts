/**
 * Writing the OpenAPI document (scripts/write-openapi.ts) builds the whole API but never starts
 * the node: nothing on the host changes and nothing keeps the process alive. Timers start in the
 * node's start step.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { ConnectionGuard } from '../../src/api/connection-limits.js';
import { openApiDocument } from '../../src/main/openapi.js';

const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

test('building the OpenAPI document touches nothing on the host', async () => {
  const parent = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'algohost-openapi-'));
  try {
    const dataDir = path.join(parent, 'data');
    const blobDir = path.join(parent, 'blobs');
    const cgroup = fs.readFileSync('/proc/self/cgroup', 'utf8');
    const timersBefore = timers();
    // Read-only besides (for a user the mode binds): making anything in it would fail.
    await fs.promises.chmod(parent, 0o500);
    const document = (await openApiDocument({ ALGOHOST_DATA_DIR: dataDir, ALGOHOST_BLOB_DIR: blobDir })) as { paths: object };
    assert.ok(Object.keys(document.paths).length > 50, 'the document lists the API');
    await fs.promises.chmod(parent, 0o700);
    assert.deepEqual(await fs.promises.readdir(parent), [], 'no directory or file was made');
    assert.equal(fs.readFileSync('/proc/self/cgroup', 'utf8'), cgroup, 'the process stayed in its cgroup');
    assert.ok(timers() <= timersBefore, 'no timer was left running');
  } finally {
    await fs.promises.rm(parent, { recursive: true, force: true });
  }
});

test('the connection guard starts its body-rate check in the start step, not when made, and stops it on close', (t) => {
  // Its timer is unref'd (it never keeps the process alive), so it is seen by the calls made.
  const started = t.mock.method(globalThis, 'setInterval');
  const cleared = t.mock.method(globalThis, 'clearInterval');
  const guard = new ConnectionGuard({ maxConnections: 10, maxPerClient: 5, bodyTimeoutMs: 1000, minBodyBytesPerSecond: 100 });
  guard.attach(http.createServer(), { tcp: true });
  assert.equal(started.mock.callCount(), 0, 'made and attached: no timer');
  guard.start();
  guard.start();
  assert.equal(started.mock.callCount(), 1, 'started (twice): one timer');
  const timer = started.mock.calls[0]!.result;
  guard.stop();
  assert.ok(
    cleared.mock.calls.some((c) => c.arguments[0] === timer),
    'stopped: its timer is cleared',
  );
});
