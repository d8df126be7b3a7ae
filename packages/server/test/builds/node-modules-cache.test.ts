/**
 * scripts/lib/node-modules.sh: the node_modules a fresh clone copies from a cache outside the
 * checkout instead of running npm ci. What the cache holds runs as the server, so an entry that
 * another user owns, or that anyone else may write (a cache shared through
 * ALGOHOST_NODE_MODULES_CACHE), is never copied: npm ci runs instead. `npm` here is a stand-in on
 * PATH that records its call and makes a node_modules of its own (no registry is asked); `node`
 * is the real one.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';

const LIB = path.resolve(import.meta.dirname, '../../../../scripts/lib/node-modules.sh');
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'algohost-nm-cache-'));
const bin = path.join(root, 'bin');
const cache = path.join(root, 'cache');
fs.mkdirSync(bin);
fs.writeFileSync(
  path.join(bin, 'npm'),
  `#!/bin/sh
[ "$1" = ci ] || exit 64
echo ci >> "$NPM_CALLS"
mkdir -p node_modules/pkg packages/client/node_modules/tool
echo 'from npm ci' > node_modules/pkg/index.js
echo 'from npm ci' > packages/client/node_modules/tool/index.js
`,
  { mode: 0o755 },
);
after(() => fs.rmSync(root, { recursive: true, force: true }));

let checkouts = 0;
/** A checkout with a lock file, and install_node_modules run in it: what it printed and whether npm ci ran. */
function install(dir?: string): { dir: string; output: string; ranNpmCi: boolean } {
  const checkout = dir ?? path.join(root, `checkout-${++checkouts}`);
  fs.mkdirSync(path.join(checkout, 'packages/client'), { recursive: true });
  fs.writeFileSync(path.join(checkout, 'package-lock.json'), '{"name":"x","lockfileVersion":3}\n');
  const calls = path.join(checkout, '.npm-calls');
  fs.rmSync(calls, { force: true });
  const output = execFileSync('bash', ['-c', `source ${LIB} && install_node_modules 2>&1`], {
    cwd: checkout,
    env: {
      PATH: `${bin}:${path.dirname(process.execPath)}:/usr/bin:/bin`,
      HOME: root,
      ALGOHOST_NODE_MODULES_CACHE: cache,
      NPM_CALLS: calls,
    },
    // stdin not inherited: bash reads ~/.bashrc when its stdin is a socket, as a test runner's may be.
    stdio: ['ignore', 'pipe', 'pipe'],
    encoding: 'utf8',
  });
  return { dir: checkout, output, ranNpmCi: fs.existsSync(calls) };
}

const onlyEntry = () => {
  const entries = fs.readdirSync(cache).filter((n) => !n.startsWith('.'));
  assert.equal(entries.length, 1);
  return path.join(cache, entries[0]!);
};

describe('the node_modules cache (scripts/lib/node-modules.sh)', () => {
  test('npm ci fills the cache; a fresh checkout of the same lock copies it, workspaces included, without npm ci', () => {
    const first = install();
    assert.ok(first.ranNpmCi);
    const second = install();
    assert.equal(second.ranNpmCi, false, second.output);
    assert.match(second.output, /copied from/);
    assert.equal(fs.readFileSync(path.join(second.dir, 'node_modules/pkg/index.js'), 'utf8'), 'from npm ci\n');
    assert.equal(fs.readFileSync(path.join(second.dir, 'packages/client/node_modules/tool/index.js'), 'utf8'), 'from npm ci\n');
    assert.equal(install(second.dir).output, '', 'an installed checkout is left as it is');
  });

  test('an entry in which others may write a file is not copied: npm ci runs, and the planted code stays out', () => {
    const entry = onlyEntry();
    const planted = path.join(entry, 'node_modules/pkg/index.js');
    fs.writeFileSync(planted, 'planted by another user\n');
    fs.chmodSync(planted, 0o666);
    const r = install();
    assert.ok(r.ranNpmCi, r.output);
    assert.match(r.output, /is not used/);
    assert.equal(fs.readFileSync(path.join(r.dir, 'node_modules/pkg/index.js'), 'utf8'), 'from npm ci\n');
    // The entry was made again from that npm ci: it is trusted, and copied, from now on.
    assert.equal(fs.readFileSync(planted, 'utf8'), 'from npm ci\n');
    assert.equal(install().ranNpmCi, false);
  });

  test('a cache directory others may write is not used: they could swap an entry', () => {
    fs.chmodSync(cache, 0o777);
    try {
      const r = install();
      assert.ok(r.ranNpmCi, r.output);
      assert.match(r.output, /is not used/);
    } finally {
      fs.chmodSync(cache, 0o755);
    }
  });

  test('an entry with a file another user owns is not copied', { skip: process.getuid?.() !== 0 && 'chown needs root' }, () => {
    const entry = onlyEntry();
    const planted = path.join(entry, 'node_modules/pkg/index.js');
    fs.writeFileSync(planted, 'planted by nobody\n');
    fs.chownSync(planted, 65534, 65534);
    const r = install();
    assert.ok(r.ranNpmCi, r.output);
    assert.equal(fs.readFileSync(path.join(r.dir, 'node_modules/pkg/index.js'), 'utf8'), 'from npm ci\n');
  });
});
