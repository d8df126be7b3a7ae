/**
 * Starts the real process the way a user does (`node --import tsx packages/server/src/main/start.ts`)
 * and checks what they see: the generated admin key, the key file, the ready line, clean shutdown,
 * restarts, `--help` and the exit code of bad settings.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { SETTINGS } from '../../src/config/config.js';
import { generateApiKey } from '../../src/domain/accounts/secrets.js';
import { client } from '../support/http.js';
import { assertError } from '../support/assertions.js';
import { createPostgresDatabase, DATABASES, makeTempDir } from '../support/server.js';
import { serverEntryArgs } from '../support/server-entry.js';

const REPO_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const KEY_ANYWHERE = /sim[A-Za-z0-9+/]{25}/g;
/** A guard against a hung child, not a performance assertion. */
const WAIT_LIMIT_MS = 60_000;

/** Every setting a user can configure; the list of the config schema is checked against it too. */
const KNOWN_SETTINGS = [
  'ALGOHOST_PORT',
  'ALGOHOST_HOST',
  'ALGOHOST_DATA_DIR',
  'ALGOHOST_DATABASE_URL',
  'ALGOHOST_PUBLIC_URL',
  'ALGOHOST_ADMIN_KEY',
  'ALGOHOST_LOG_LEVEL',
  'ALGOHOST_DEFAULT_ENVIRONMENT',
  'ALGOHOST_DEFAULT_NETWORK_ACCESS',
  'ALGOHOST_SESSION_TTL',
  'ALGOHOST_BODY_LIMIT',
  'ALGOHOST_GIT',
];

interface Proc {
  child: ChildProcess;
  /** stdout and stderr so far, interleaved as they arrived. */
  output(): string;
  stdout(): string;
  stderr(): string;
  waitFor(pattern: RegExp): Promise<void>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const children = new Set<ChildProcess>();

/** The environment of a user's shell: ours without any ALGOHOST_* or test-runner variables. */
function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!k.startsWith('ALGOHOST_') && !k.startsWith('NODE_TEST')) env[k] = v;
  }
  return { ...env, ...extra };
}

function run(extraEnv: Record<string, string>, args: string[] = []): Proc {
  const child = spawn(process.execPath, [...serverEntryArgs(), ...args], {
    cwd: REPO_ROOT,
    env: cleanEnv(extraEnv),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let all = '';
  let out = '';
  let err = '';
  const waiters = new Set<() => void>();
  const notify = () => waiters.forEach((w) => w());
  child.stdout!.setEncoding('utf8').on('data', (d: string) => {
    out += d;
    all += d;
    notify();
  });
  child.stderr!.setEncoding('utf8').on('data', (d: string) => {
    err += d;
    all += d;
    notify();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('close', (code, signal) => {
      children.delete(child);
      notify();
      resolve({ code, signal });
    });
  });
  const waitFor = (pattern: RegExp) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (pattern.test(all)) done(resolve);
        else if (child.exitCode !== null || child.signalCode !== null) {
          done(() => reject(new Error(`process exited before printing ${pattern}:\n${all}`)));
        }
      };
      const timer = setTimeout(() => done(() => reject(new Error(`no ${pattern} from the process:\n${all}`))), WAIT_LIMIT_MS);
      const done = (f: () => void) => {
        clearTimeout(timer);
        waiters.delete(check);
        f();
      };
      waiters.add(check);
      check();
    });
  return { child, output: () => all, stdout: () => out, stderr: () => err, waitFor, exited };
}

/**
 * SIGTERM, then the exit. The process is done only when it has exited: this waits for that,
 * bounded by WAIT_LIMIT_MS only so that a hung child fails the test with its output instead of
 * hanging the run.
 */
async function stop(p: Proc): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  p.child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`the process did not exit within ${WAIT_LIMIT_MS / 1000} s of SIGTERM:\n${p.output()}`)),
      WAIT_LIMIT_MS,
    );
  });
  try {
    return await Promise.race([p.exited, hung]);
  } finally {
    clearTimeout(timer);
  }
}

async function killAll(): Promise<void> {
  await Promise.all(
    [...children].map(
      (c) =>
        new Promise<void>((resolve) => {
          if (c.exitCode !== null || c.signalCode !== null) return resolve();
          c.once('close', () => resolve());
          c.kill('SIGKILL');
        }),
    ),
  );
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
const listeningLine = (port: number) => `algohost listening on http://127.0.0.1:${port}`;

/**
 * Starts the server on a port that was free when chosen and waits for its ready line. Another
 * process on a busy machine may take the port before the server binds it (EADDRINUSE): then the
 * start is retried on a new port, with the environment `env` gives for that attempt.
 */
async function startListening(
  env: (port: number, attempt: number) => Promise<Record<string, string>> | Record<string, string>,
): Promise<{ proc: Proc; port: number }> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const proc = run(await env(port, attempt));
    try {
      await proc.waitFor(new RegExp(escape(listeningLine(port))));
      return { proc, port };
    } catch (err) {
      if (attempt >= 5 || !/EADDRINUSE/.test(proc.output())) throw err;
      await proc.exited;
    }
  }
}
const count = (text: string, needle: string) => text.split(needle).length - 1;

for (const database of DATABASES) {
  describe(`starting the server process (${database})`, () => {
    const dirs: string[] = [];
    const drops: (() => Promise<void>)[] = [];
    let dataDir: string;
    let dbEnv: Record<string, string> = {};
    let firstKey: string | undefined;

    /** A fresh data directory (and PostgreSQL database), removed in `after`. */
    async function freshInstall(): Promise<{ dataDir: string; dbEnv: Record<string, string> }> {
      const dir = await makeTempDir('algohost-startup-');
      dirs.push(dir);
      if (database !== 'postgres') return { dataDir: dir, dbEnv: {} };
      const pgdb = await createPostgresDatabase();
      drops.push(pgdb.drop);
      return { dataDir: dir, dbEnv: { ALGOHOST_DATABASE_URL: pgdb.url } };
    }

    before(async () => {
      ({ dataDir, dbEnv } = await freshInstall());
    });
    after(async () => {
      await killAll();
      for (const drop of drops) await drop();
      for (const dir of dirs) await fs.promises.rm(dir, { recursive: true, force: true });
    });

    test('first start: prints a generated admin key once, writes it to initial-admin-key (0600), logs where it listens', async () => {
      const { proc, port } = await startListening(async (p, attempt) => {
        // A start that lost its port may have made the admin already: retry on a fresh install.
        if (attempt > 1) ({ dataDir, dbEnv } = await freshInstall());
        return { ALGOHOST_PORT: String(p), ALGOHOST_DATA_DIR: dataDir, ...dbEnv };
      });
      // The key is printed after the ready line, once the server is up and SIGTERM is handled.
      await proc.waitFor(/initial-admin-key/);

      const printed = proc.stdout().match(KEY_ANYWHERE) ?? [];
      assert.equal(printed.length, 1, `one key printed:\n${proc.output()}`);
      const key = printed[0]!;
      assert.match(key, /^sim[A-Za-z0-9+/]{25}$/);

      const keyFile = path.join(dataDir, 'initial-admin-key');
      const stat = fs.statSync(keyFile);
      assert.equal(stat.mode & 0o777, 0o600, `mode of initial-admin-key is ${(stat.mode & 0o777).toString(8)}`);
      assert.equal(fs.readFileSync(keyFile, 'utf8').trim(), key);
      assert.ok(proc.stdout().includes(keyFile), 'the message names the key file');

      const api = client(`http://127.0.0.1:${port}`);
      const me = await api.get('/v1/users/admin', { key });
      assert.equal(me.status, 200, me.text);
      assert.equal(me.body.username, 'admin');
      assert.equal(me.body.self_link, `http://127.0.0.1:${port}/v1/users/admin`);
      assert.equal((await api.get('/v1/users/admin', { auth: key })).status, 200);
      assertError(await api.get('/v1/users/admin'), 401);

      const { code, signal } = await stop(proc);
      assert.equal(signal, null);
      assert.equal(code, 0, proc.output());
      assert.equal(count(proc.output(), key), 1, `the key is printed exactly once:\n${proc.output()}`);
      assert.equal(count(proc.output(), listeningLine(port)), 1, `one ready line:\n${proc.output()}`);
      const ready = proc
        .output()
        .split('\n')
        .filter((l) => l.includes('algohost listening on'));
      assert.equal(ready.length, 1, `one ready line:\n${proc.output()}`);
      assert.equal(proc.stderr(), '', 'nothing on stderr');
      firstKey = key;
    });

    test('second start with the same data dir: no new key, the first key still works', async () => {
      assert.ok(firstKey, 'the first start ran');
      const keyFile = path.join(dataDir, 'initial-admin-key');
      const keyFileBefore = fs.readFileSync(keyFile, 'utf8');
      // The ready line is logged before start-up has finished; a SIGTERM sent right after it
      // must still end in a clean exit (start.ts takes signals before the server starts).
      const { proc, port } = await startListening((p) => ({ ALGOHOST_PORT: String(p), ALGOHOST_DATA_DIR: dataDir, ...dbEnv }));

      const api = client(`http://127.0.0.1:${port}`);
      const me = await api.get('/v1/users/admin', { key: firstKey });
      assert.equal(me.status, 200, me.text);
      assert.equal(me.body.username, 'admin');

      const { code, signal } = await stop(proc);
      assert.equal(signal, null, `killed by ${signal} instead of stopping cleanly:\n${proc.output()}`);
      assert.equal(code, 0, proc.output());
      assert.deepEqual(proc.output().match(KEY_ANYWHERE), null, `no key printed:\n${proc.output()}`);
      assert.ok(!/admin API key/i.test(proc.output()), proc.output());
      assert.equal(fs.readFileSync(keyFile, 'utf8'), keyFileBefore, 'the key file is unchanged');
    });

    test('ALGOHOST_ADMIN_KEY on first start becomes the admin key', async () => {
      const install = await freshInstall();
      const chosen = generateApiKey();
      const { proc, port } = await startListening((p) => ({
        ALGOHOST_PORT: String(p),
        ALGOHOST_DATA_DIR: install.dataDir,
        ALGOHOST_ADMIN_KEY: chosen,
        ...install.dbEnv,
      }));

      const api = client(`http://127.0.0.1:${port}`);
      const me = await api.get('/v1/users/admin', { key: chosen });
      assert.equal(me.status, 200, me.text);
      assert.equal(me.body.username, 'admin');
      assertError(await api.get('/v1/users/admin', { key: generateApiKey() }), 401);

      const { code, signal } = await stop(proc);
      assert.equal(signal, null, `killed by ${signal} instead of stopping cleanly:\n${proc.output()}`);
      assert.equal(code, 0, proc.output());
      assert.ok(!proc.output().includes(chosen), 'the chosen key is not echoed');
      assert.deepEqual(proc.output().match(KEY_ANYWHERE), null, `no generated key printed:\n${proc.output()}`);
      assert.ok(!fs.existsSync(path.join(install.dataDir, 'initial-admin-key')), 'no key file when the operator chose the key');
    });
  });
}

describe('the command line', { concurrency: true }, () => {
  const dirs: string[] = [];
  after(async () => {
    await killAll();
    for (const dir of dirs) await fs.promises.rm(dir, { recursive: true, force: true });
  });
  const tempDir = async () => {
    const dir = await makeTempDir('algohost-cli-');
    dirs.push(dir);
    return dir;
  };

  test('--help lists every ALGOHOST_* setting with its flag and exits 0', async () => {
    const proc = run({}, ['--help']);
    const { code, signal } = await proc.exited;
    assert.equal(code, 0, `signal ${signal}: ${proc.output()}`);
    const help = proc.stdout();
    for (const name of new Set([...KNOWN_SETTINGS, ...SETTINGS.map((s) => s.env)])) {
      assert.match(help, new RegExp(`\\b${name}\\b`), `--help mentions ${name}`);
    }
    for (const s of SETTINGS) assert.ok(help.includes(s.flag), `--help mentions ${s.flag}`);
    assert.equal(proc.stderr(), '');
  });

  test('an unknown flag exits with code 2 and a one-line message', async () => {
    const proc = run({ ALGOHOST_DATA_DIR: path.join(await tempDir(), 'data') }, ['--no-such-flag']);
    const { code, signal } = await proc.exited;
    assert.equal(code, 2, `signal ${signal}: ${proc.output()}`);
    const message = proc.stderr().trim();
    assert.equal(message.split('\n').length, 1, `one line: ${JSON.stringify(proc.stderr())}`);
    assert.match(message, /--no-such-flag/);
    assert.equal(proc.stdout(), '');
  });

  for (const port of ['abc', '-1', '1.5', '80x']) {
    test(`ALGOHOST_PORT=${port} exits with code 2 and a one-line message`, async () => {
      const proc = run({ ALGOHOST_PORT: port, ALGOHOST_DATA_DIR: path.join(await tempDir(), 'data') });
      const { code, signal } = await proc.exited;
      assert.equal(code, 2, `signal ${signal}: ${proc.output()}`);
      const message = proc.stderr().trim();
      assert.equal(message.split('\n').length, 1, `one line: ${JSON.stringify(proc.stderr())}`);
      assert.match(message, /ALGOHOST_PORT/);
      assert.equal(proc.stdout(), '');
    });
  }

  test('ALGOHOST_PORT=99999 (out of range) exits with code 2 and a one-line message', async () => {
    const proc = run({ ALGOHOST_PORT: '99999', ALGOHOST_DATA_DIR: path.join(await tempDir(), 'data') });
    const { code, signal } = await proc.exited;
    assert.equal(code, 2, `signal ${signal}: ${proc.output()}`);
    assert.equal(proc.stderr().trim().split('\n').length, 1, proc.stderr());
  });

  for (const [value, pattern] of [
    ['python311', /not name=MiB/],
    ['nosuchenv=512', /no environment named "nosuchenv"/],
    ['python311=4', /at least 16 MiB/],
  ] as const) {
    test(`ALGOHOST_ENVIRONMENT_MEMORY=${value} exits with code 2 and says what is wrong, before touching the disk or the port`, async () => {
      // The port is taken: a server that bound it before checking its settings would report
      // EADDRINUSE instead of the mistake.
      const taken = net.createServer();
      await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
      const port = (taken.address() as net.AddressInfo).port;
      try {
        const dataDir = path.join(await tempDir(), 'data');
        const proc = run({ ALGOHOST_ENVIRONMENT_MEMORY: value, ALGOHOST_DATA_DIR: dataDir, ALGOHOST_PORT: String(port) });
        const { code, signal } = await proc.exited;
        assert.equal(code, 2, `signal ${signal}: ${proc.output()}`);
        assert.equal(proc.stderr().trim().split('\n').length, 1, proc.stderr());
        assert.match(proc.stderr(), pattern);
        assert.equal(fs.existsSync(dataDir), false, 'the data dir was not made');
      } finally {
        taken.close();
      }
    });
  }
});
