/**
 * The catalog data files on their own (no server): languages, environments and templates
 * agree with each other, each environment's declared runtime is the one installed on this
 * machine (checked only where that runtime is installed), and the tar writer used for the
 * template download produces archives the system tar unpacks exactly.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CATALOG_DIR, readCatalog } from '../../src/storage/catalog-files.js';
import { tarGzip, type TarEntry } from '../../src/lib/tar.js';
import type { EnvironmentSpec } from '../../src/domain/catalog/model.js';
import { makeTempDir } from '../support/server.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const catalog = readCatalog();

describe('catalog files', () => {
  test('languages have unique names and a display name, req_files and artifacts', () => {
    assert.ok(catalog.languages.length > 0);
    assert.equal(new Set(catalog.languages.map((l) => l.name)).size, catalog.languages.length);
    for (const l of catalog.languages) {
      assert.ok(l.display_name.length > 0, l.name);
      assert.ok(Array.isArray(l.req_files), l.name);
      assert.ok(Array.isArray(l.artifacts), l.name);
      for (const a of l.artifacts) {
        assert.equal(typeof a.source, 'string', l.name);
        assert.equal(typeof a.destination, 'string', l.name);
      }
    }
    const legacy = catalog.languages.map((l) => l.legacy_language).filter((x) => x !== undefined);
    assert.equal(new Set(legacy).size, legacy.length, 'legacy language values are unique');
  });

  test('every environment names an existing language and a template with files', () => {
    assert.ok(catalog.environments.length > 0);
    assert.equal(new Set(catalog.environments.map((e) => e.name)).size, catalog.environments.length, 'environment names are unique');
    for (const env of catalog.environments) {
      assert.ok(
        catalog.languages.some((l) => l.name === env.language),
        `${env.name}: language ${env.language} exists`,
      );
      const files = catalog.templates.get(env.template);
      assert.ok(files && files.length > 0, `${env.name}: template ${env.template} exists and has files`);
      assert.ok(fs.statSync(path.join(CATALOG_DIR, 'templates', env.template)).isDirectory());
      assert.ok(
        files.some((f) => f.path === 'algorithmia.conf'),
        `${env.name}: template ${env.template} has algorithmia.conf`,
      );
      assert.ok(env.machine_type === 'CPU' || env.machine_type === 'GPU', env.name);
      assert.ok(env.display_name.length > 0 && env.description.length > 0, env.name);
    }
    // Every language has at least one environment; otherwise it could never be used.
    for (const l of catalog.languages) {
      assert.ok(
        catalog.environments.some((e) => e.language === l.name),
        `language ${l.name} has an environment`,
      );
    }
  });

  test('a language requirement file named first is in each of its templates', () => {
    for (const env of catalog.environments) {
      const language = catalog.languages.find((l) => l.name === env.language)!;
      const files = catalog.templates.get(env.template)!;
      if (language.req_files.length === 0) continue;
      assert.ok(
        files.some((f) => f.path === language.req_files[0]),
        `${env.name}: template ${env.template} has ${language.req_files[0]}`,
      );
    }
  });

  test('specification ids are unique UUIDs', () => {
    const ids = catalog.environments.map((e) => e.specification_id);
    for (const id of ids) assert.match(id, UUID);
    assert.equal(new Set(ids).size, ids.length);
  });

  test('legacy language/hardware pairs each resolve to one environment of a language with that legacy value', () => {
    const seen = new Map<string, string>();
    for (const env of catalog.environments) {
      for (const pair of env.default_for ?? []) {
        assert.ok(!seen.has(pair), `${pair} is claimed by both ${seen.get(pair)} and ${env.name}`);
        seen.set(pair, env.name);
        const [legacy, hardware] = pair.split('/');
        const language = catalog.languages.find((l) => l.name === env.language)!;
        assert.equal(language.legacy_language, legacy, `${env.name}: ${pair} belongs to language ${language.name}`);
        assert.equal(hardware, env.machine_type.toLowerCase(), `${env.name}: ${pair}`);
      }
    }
  });

  test('Scala templates pin the Scala version their environment declares', () => {
    for (const env of catalog.environments.filter((e) => e.runtime.name === 'scala')) {
      const sbt = catalog.templates.get(env.template)!.find((f) => f.path === 'build.sbt');
      assert.ok(sbt, `${env.name}: build.sbt`);
      const version = /scalaVersion\s*:=\s*"([^"]+)"/.exec(sbt.content.toString('utf8'))?.[1];
      assert.ok(version, `${env.name}: build.sbt sets scalaVersion`);
      assert.ok(version === env.runtime.version || version.startsWith(`${env.runtime.version}.`), `${env.name}: ${version}`);
    }
  });
});

/** Runs a command and returns stdout+stderr, or undefined when it is not installed. */
function versionOutput(command: string, args: string[]): string | undefined {
  const res = spawnSync(command, args, { encoding: 'utf8', timeout: 60_000 });
  if (res.error) return undefined;
  return `${res.stdout ?? ''}${res.stderr ?? ''}`;
}

function findExecutable(name: string, extraDirs: string[] = []): string | undefined {
  for (const dir of [...(process.env.PATH ?? '').split(path.delimiter), ...extraDirs]) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** "3.11" matches 3.11 and 3.11.2, never 3.1 or 3.110. */
const versionPattern = (v: string) => `${escape(v)}(?![0-9])`;

interface RuntimeProbe {
  /** The executable, or undefined when it is not installed. */
  find(): string | undefined;
  args: string[];
  matches(output: string, version: string): boolean;
}

const PROBES: Record<string, RuntimeProbe> = {
  python: {
    find: () => (fs.existsSync('/usr/bin/python3') ? '/usr/bin/python3' : undefined),
    args: ['--version'],
    matches: (out, v) => new RegExp(`^Python ${versionPattern(v)}`).test(out.trim()),
  },
  node: {
    // Algorithms run the system's Node (runtime/languages/javascript/adapter.ts), not the Node
    // that runs algohost, which setup may have installed beside it.
    find: () => (fs.existsSync('/usr/bin/node') ? '/usr/bin/node' : undefined),
    args: ['--version'],
    matches: (out, v) => new RegExp(`^v${versionPattern(v)}`).test(out.trim()),
  },
  java: {
    find: () => findExecutable('java'),
    args: ['-version'],
    matches: (out, v) => {
      const full = /version "([^"]+)"/.exec(out)?.[1];
      if (!full) return false;
      const parts = full.split('.');
      const major = parts[0] === '1' ? parts[1] : parts[0];
      return major === v;
    },
  },
  ruby: {
    find: () => findExecutable('ruby'),
    args: ['--version'],
    matches: (out, v) => new RegExp(`^ruby ${versionPattern(v)}`).test(out.trim()),
  },
  R: {
    find: () => findExecutable('Rscript'),
    args: ['--version'],
    matches: (out, v) => new RegExp(`version ${versionPattern(v)}`).test(out),
  },
  rustc: {
    find: () => findExecutable('rustc', [path.join(os.homedir(), '.cargo', 'bin')]),
    args: ['--version'],
    matches: (out, v) => new RegExp(`^rustc ${versionPattern(v)}`).test(out.trim()),
  },
};

/**
 * Runtimes a build brings itself rather than the machine: sbt fetches the Scala library of the
 * build's own scalaVersion. The templates pin it (above), and templates-build.test.ts checks
 * that the built template carries that library.
 */
const BROUGHT_BY_THE_BUILD = new Set(['scala']);

describe('declared runtimes match the installed ones', () => {
  for (const env of (catalog.environments as EnvironmentSpec[]).filter((e) => !BROUGHT_BY_THE_BUILD.has(e.runtime.name))) {
    const { name, version } = env.runtime;
    test(`${env.name} declares ${name} ${version}`, (t) => {
      const probe = PROBES[name];
      assert.ok(probe, `this test knows how to check runtime "${name}"`);
      const executable = probe.find();
      if (!executable) {
        t.skip(`${name} is not installed on this machine`);
        return;
      }
      const output = versionOutput(executable, probe.args);
      if (output === undefined) {
        t.skip(`${executable} could not be run`);
        return;
      }
      assert.ok(probe.matches(output, version), `${env.name} declares ${name} ${version}, but ${executable} reports: ${output.trim()}`);
    });
  }
});

describe('lib/tar.ts', () => {
  let tmp: string;
  before(async () => {
    tmp = await makeTempDir('algohost-tar-');
  });
  after(async () => {
    if (tmp) await fs.promises.rm(tmp, { recursive: true, force: true });
  });

  const longPath = `deeply/${'nested_directory_'.repeat(5)}/${'another_level_'.repeat(4)}/file_with_a_long_name.txt`;
  const allBytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
  const entries: TarEntry[] = [
    { path: 'README.md', content: Buffer.from('# Hello\n'), mode: 0o644 },
    { path: 'bin/run.sh', content: Buffer.from('#!/bin/sh\necho hi\n'), mode: 0o755 },
    { path: 'src/__init__.py', content: Buffer.alloc(0), mode: 0o644 },
    { path: 'data/block.bin', content: Buffer.alloc(512, 7), mode: 0o600 },
    { path: 'data/bytes.bin', content: Buffer.concat([allBytes, allBytes, allBytes]), mode: 0o644 },
    { path: `exactly/${'x'.repeat(100 - 'exactly/'.length)}`, content: Buffer.from('one hundred bytes of path\n'), mode: 0o644 },
    { path: 'src/ünïcode.txt', content: Buffer.from('grüße\n'), mode: 0o644 },
    { path: longPath, content: Buffer.from('far away\n'), mode: 0o640 },
  ];
  const mtime = 1_700_000_000;

  test('an archive unpacks with the system tar to identical bytes, modes and times', () => {
    assert.ok(Buffer.byteLength(longPath) > 100, 'the long path needs the ustar prefix field');
    assert.equal(Buffer.byteLength(entries[5]!.path), 100);
    const archive = tarGzip(entries, mtime);
    const file = path.join(tmp, 'archive.tar.gz');
    const dir = path.join(tmp, 'out');
    fs.writeFileSync(file, archive);
    fs.mkdirSync(dir);
    execFileSync('tar', ['-xpzf', file, '-C', dir], { stdio: 'pipe' });

    const listed = execFileSync('tar', ['-tzf', file], { encoding: 'utf8' }).trim().split('\n');
    assert.deepEqual(
      listed,
      entries.map((e) => e.path),
    );
    for (const e of entries) {
      const full = path.join(dir, e.path);
      assert.ok(fs.existsSync(full), `${e.path} was unpacked`);
      assert.deepEqual(fs.readFileSync(full), e.content, `${e.path}: same bytes`);
      const st = fs.statSync(full);
      assert.equal((st.mode & 0o777).toString(8), e.mode.toString(8), `${e.path}: same mode`);
      assert.equal(Math.floor(st.mtimeMs / 1000), mtime, `${e.path}: mtime`);
    }
  });

  test('an empty file set is a valid, empty archive', () => {
    const file = path.join(tmp, 'empty.tar.gz');
    fs.writeFileSync(file, tarGzip([], mtime));
    assert.equal(execFileSync('tar', ['-tzf', file], { encoding: 'utf8' }), '');
  });

  test('a file name longer than 100 bytes without a directory to split off is refused', () => {
    assert.throws(() => tarGzip([{ path: 'n'.repeat(101), content: Buffer.from('x'), mode: 0o644 }], mtime), /too long/);
  });
});
