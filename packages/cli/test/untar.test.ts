/** The template unpacker (node-tar): ustar prefixes for long paths, modes kept, links skipped, and no path escapes the target. */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { create } from 'tar';
import { tarGzip } from '../../server/src/lib/tar.js';
import { unpackTarGz } from '../src/lib/untar.js';

test('unpacks files with long paths and keeps the executable bit', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'algo-untar-'));
  try {
    const long = `${'d'.repeat(90)}/${'e'.repeat(60)}/file.txt`;
    const tgz = tarGzip(
      [
        { path: 'src/run.sh', content: Buffer.from('#!/bin/sh\n'), mode: 0o755 },
        { path: long, content: Buffer.from('deep'), mode: 0o644 },
      ],
      0,
    );
    const entries = unpackTarGz(new Uint8Array(tgz), dir);
    assert.deepEqual(
      entries.map((e) => e.path),
      ['src/run.sh', long],
    );
    assert.equal(fs.readFileSync(path.join(dir, long), 'utf8'), 'deep');
    assert.equal(fs.statSync(path.join(dir, 'src/run.sh')).mode & 0o111, 0o111);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('refuses entries that climb out of the target directory or are absolute', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'algo-untar-'));
  try {
    for (const evil of ['../evil.txt', 'a/../../evil.txt', '/tmp/evil.txt']) {
      const tgz = tarGzip([{ path: evil, content: Buffer.from('x'), mode: 0o644 }], 0);
      assert.throws(() => unpackTarGz(new Uint8Array(tgz), path.join(dir, 'out')), /points outside the target directory/, evil);
    }
    assert.ok(!fs.existsSync(path.join(dir, 'evil.txt')));
    assert.throws(() => unpackTarGz(new Uint8Array([0x1f, 0x8b, 1, 2, 3]), dir), /not valid gzip/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('an archive with one entry outside the target writes nothing at all', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'algo-untar-'));
  try {
    const tgz = tarGzip(
      [
        { path: 'src/first.txt', content: Buffer.from('x'), mode: 0o644 },
        { path: 'src/../../evil.txt', content: Buffer.from('x'), mode: 0o644 },
      ],
      0,
    );
    assert.throws(() => unpackTarGz(new Uint8Array(tgz), path.join(dir, 'out')), /"src\/\.\.\/\.\.\/evil\.txt": it points outside/);
    assert.ok(!fs.existsSync(path.join(dir, 'out', 'src', 'first.txt')));
    assert.ok(!fs.existsSync(path.join(dir, 'evil.txt')));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('symbolic links are skipped; damaged archives are refused with a clear message', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'algo-untar-'));
  try {
    fs.mkdirSync(path.join(dir, 'in', 'src'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'in', 'src', 'a.txt'), 'a');
    fs.symlinkSync('/etc/passwd', path.join(dir, 'in', 'src', 'passwd'));
    const tgz = create({ gzip: true, sync: true, portable: true, cwd: path.join(dir, 'in') }, ['src']).read() as Buffer;
    const entries = unpackTarGz(new Uint8Array(tgz), path.join(dir, 'out'));
    assert.deepEqual(
      entries.map((e) => [e.path, e.type]),
      [
        ['src', 'directory'],
        ['src/a.txt', 'file'],
      ],
    );
    assert.deepEqual(fs.readdirSync(path.join(dir, 'out', 'src')), ['a.txt']);
    assert.throws(
      () => unpackTarGz(new Uint8Array(tgz.subarray(0, tgz.length - 20)), path.join(dir, 'cut')),
      /not valid gzip: unexpected end/,
    );
    const garbage = Buffer.from('not a tar archive, not at all. '.repeat(40));
    assert.throws(() => unpackTarGz(new Uint8Array(garbage), path.join(dir, 'junk')), /the archive is damaged/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
