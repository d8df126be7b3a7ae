/**
 * How users get `algo`: `npx algo` from the repository root after `npm install`, and
 * `npm install -g` from the repository, which puts `algo` on the PATH.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { REPO_ROOT, makeHome, spawnCollect } from './support/run-cli.js';

const VERSION = (JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'packages/cli/package.json'), 'utf8')) as { version: string }).version;

test('npx algo works from the repository root', async () => {
  const home = await makeHome();
  try {
    const r = await spawnCollect('npx', ['--no-install', 'algo', '--version'], { home, cwd: REPO_ROOT });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim(), VERSION);
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
  }
});

test('npm install -g from the repository puts algo on the PATH', async () => {
  const home = await makeHome();
  const prefix = fs.mkdtempSync(path.join(os.tmpdir(), 'algo-global-'));
  try {
    const install = await spawnCollect('npm', ['install', '-g', '--prefix', prefix, REPO_ROOT], { home, cwd: os.tmpdir() });
    assert.equal(install.code, 0, install.stderr);
    const bin = path.join(prefix, 'bin');
    assert.ok(fs.existsSync(path.join(bin, 'algo')), 'algo is in the global bin directory');
    // Run it by name from elsewhere, as a shell would find it on the PATH.
    const r = await spawnCollect('algo', ['--help'], { home, cwd: os.tmpdir(), env: { PATH: `${bin}:${process.env.PATH}` } });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /Usage: algo/);
    assert.match(r.stdout, /migrate/);
  } finally {
    fs.rmSync(prefix, { recursive: true, force: true });
    fs.rmSync(home, { recursive: true, force: true });
  }
});
