/**
 * Writing the OpenAPI document (scripts/write-openapi.ts) builds the whole API but never starts
 * the node: nothing on the host changes and nothing keeps the process alive.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
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
