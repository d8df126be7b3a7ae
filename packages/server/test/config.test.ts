import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { loadConfig, SETTINGS } from '../src/config/config.js';

test('every field of Config has exactly one setting (env var, flag, default, description)', () => {
  const source = fs.readFileSync(fileURLToPath(new URL('../src/config/config.ts', import.meta.url)), 'utf8');
  const iface = /export interface Config \{([\s\S]*?)\n\}/.exec(source)![1]!;
  const fields = [...iface.matchAll(/^\s+(\w+):/gm)].map((m) => m[1]).sort();
  assert.deepEqual([...SETTINGS.map((s) => s.key)].sort(), fields);
  for (const s of SETTINGS) {
    assert.match(s.env, /^ALGOHOST_[A-Z0-9_]+$/);
    assert.match(s.flag, /^--[a-z0-9-]+$/);
    assert.ok(s.describe.length > 10, s.key);
  }
});

test('defaults fill every setting that is not optional', () => {
  const config = loadConfig({}, []);
  for (const s of SETTINGS) if (s.kind !== 'optional') assert.notEqual(config[s.key], undefined, s.key);
  assert.equal(config.port, 8080);
  assert.equal(config.host, '127.0.0.1');
  assert.equal(config.publicUrl, 'http://127.0.0.1:8080');
  assert.equal(config.runnersPerAlgorithm, 4);
});

test('flags win over environment variables; bad values are refused with the setting named', () => {
  assert.equal(loadConfig({ ALGOHOST_PORT: '9000' }, ['--port', '9001']).port, 9001);
  assert.throws(() => loadConfig({ ALGOHOST_PORT: '70000' }, []), /ALGOHOST_PORT.*65535/);
  assert.throws(() => loadConfig({ ALGOHOST_BUILD_CACHE_SHARED: 'maybe' }, []), /true or false/);
  assert.throws(() => loadConfig({}, ['--nope', 'x']), /unknown option --nope/);
});
