/**
 * `algo` against a real algohost node, driven as a user would: a temporary HOME, the real
 * binary entry, real git. Covers the commands: auth, languages,
 * environment, template, create, clone, builds (list, --logs, --follow), keys, --json, --profile.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parse } from 'smol-toml';
import { createUser, type TestUser } from '../../server/test/support/fixtures.js';
import { announcedBuildId, commitAndPush, git } from '../../server/test/support/git.js';
import { client, type Client } from '../../server/test/support/http.js';
import { makeTempDir, startTestServer, type TestServer } from '../../server/test/support/server.js';
import { algo, algoOnTerminal, assertOk, assertOneLineFailure, hasScript, makeHome, type CliResult } from './support/run-cli.js';

interface Profiles {
  profiles: Record<string, Record<string, string>>;
}

/** A Python module the byte-compiler needs seconds for: a build that is still running when we follow it. */
function writeSlowModule(dir: string, functions: number): void {
  const lines: string[] = [];
  for (let i = 0; i < functions; i++) lines.push(`def f${i}(x):\n    return x + ${i}\n`);
  fs.writeFileSync(path.join(dir, 'src', 'slow.py'), lines.join(''));
}

const json = <T = any>(r: CliResult): T => {
  assertOk(r, 'command');
  return JSON.parse(r.stdout) as T;
};

describe('algo against a running server', () => {
  let srv: TestServer;
  let api: Client;
  let alice: TestUser;
  let bob: TestUser;
  let home: string;
  let work: string;
  let specId: string;
  let envId: string;
  const run = (args: string[], input?: string) => algo(args, { home, input });
  const readConfig = () => parse(fs.readFileSync(path.join(home, '.algorithmia', 'config'), 'utf8')) as unknown as Profiles;

  before(async () => {
    srv = await startTestServer();
    api = client(srv.url);
    alice = await createUser(api, srv.adminKey, 'alice');
    bob = await createUser(api, srv.adminKey, 'bob');
    home = await makeHome();
    work = await makeTempDir('algo-cli-work-');
  });
  after(async () => {
    await srv.stop();
    await fs.promises.rm(home, { recursive: true, force: true });
    await fs.promises.rm(work, { recursive: true, force: true });
  });

  test('--help lists the commands; --version prints the version', async () => {
    const help = await run(['--help']);
    assertOk(help, 'algo --help');
    for (const cmd of [
      'auth',
      'languages',
      'environment',
      'template',
      'create',
      'clone',
      'run',
      'builds',
      'publish',
      'versions',
      'ls',
      'mkdir',
      'rmdir',
      'rm',
      'cp',
      'cat',
      'keys',
      'migrate',
      'migrate-data',
    ]) {
      assert.match(help.stdout, new RegExp(`^  ${cmd}\\b`, 'm'), `help lists ${cmd}`);
    }
    const version = await run(['--version']);
    assertOk(version, 'algo --version');
    assert.match(version.stdout.trim(), /^\d+\.\d+\.\d+$/);
  });

  test('auth stores a profile from flags, checking the key with the server (http:// accepted)', async () => {
    const r = await run(['auth', '--server', srv.url, '--key', alice.key, '--username', 'alice']);
    assertOk(r, 'auth');
    assert.match(r.stdout, /Profile "default" saved/);
    const file = path.join(home, '.algorithmia', 'config');
    assert.equal(fs.statSync(file).mode & 0o777, 0o600, 'the config holds keys: mode 0600');
    const profile = readConfig().profiles.default!;
    assert.deepEqual(
      {
        api_key: profile.api_key,
        api_server: profile.api_server,
        ca_cert: profile.ca_cert,
        bearer_token: profile.bearer_token,
        username: profile.username,
      },
      { api_key: alice.key, api_server: srv.url, ca_cert: '', bearer_token: '', username: 'alice' },
    );
    assertOk(await run(['auth', '--profile', 'bob', '--server', `${srv.url}/`, '--key', bob.key, '--username', 'bob']), 'auth bob');
    assert.equal(readConfig().profiles.bob!.api_server, srv.url, 'a trailing slash is dropped');
    assert.equal(readConfig().profiles.default!.api_key, alice.key, 'other profiles are kept');
  });

  test('auth refuses a malformed key, a non-HTTP address and a key the server rejects, saving nothing', async () => {
    assertOneLineFailure(
      await run(['auth', '--profile', 'x', '--server', srv.url, '--key', 'not-a-key']),
      /28 characters long and starts with "sim"/,
    );
    assertOneLineFailure(
      await run(['auth', '--profile', 'x', '--server', srv.url, '--key', `x${alice.key.slice(1)}`]),
      /starts with "sim"/,
    );
    assertOneLineFailure(
      await run(['auth', '--profile', 'x', '--server', 'ftp://example.test', '--key', alice.key]),
      /http:\/\/ or https:\/\//,
    );
    assertOneLineFailure(await run(['auth', '--profile', 'x', '--server', srv.url, '--key', `sim${'A'.repeat(25)}`]), /refused the key/);
    assertOneLineFailure(await run(['auth', '--profile', 'x', '--server', srv.url]), /missing --key/);
    assert.equal(readConfig().profiles.x, undefined);
  });

  test(
    'auth on a terminal asks for the address, the key and the account',
    { skip: !hasScript && 'util-linux script is not installed' },
    async () => {
      const r = await algoOnTerminal(['auth', '--profile', 'tty'], { home, input: `${srv.url}\n${alice.key}\nalice\n` });
      assertOk(r, 'interactive auth');
      assert.match(r.stdout, /API address/);
      const profile = readConfig().profiles.tty!;
      assert.equal(profile.api_key, alice.key);
      assert.equal(profile.api_server, srv.url);
      assert.equal(profile.username, 'alice');
    },
  );

  test('languages: a table, and JSON with --json', async () => {
    const table = await run(['languages']);
    assertOk(table, 'languages');
    assert.match(table.stdout, /^NAME\s+DISPLAY NAME$/m);
    assert.match(table.stdout, /^python3\s+Python 3/m);
    const langs = json<{ name: string; configuration: string }[]>(await run(['languages', '--json']));
    assert.ok(langs.some((l) => l.name === 'python3'));
    for (const l of langs) JSON.parse(l.configuration);
  });

  test('environment <language>: ids for create, specification ids for template', async () => {
    const envs = json<{ id: string; name: string; environment_specification_id: string; machine_type: string }[]>(
      await run(['environment', 'python3', '--json']),
    );
    const py = envs.find((e) => e.name === 'python311');
    assert.ok(py, 'python311 is listed');
    specId = py.environment_specification_id;
    envId = py.id;
    const table = await run(['environment', 'python3']);
    assertOk(table, 'environment');
    assert.match(table.stdout, new RegExp(`^python311\\s+${envId}\\s+${specId}\\s+CPU`, 'm'));
    assertOneLineFailure(await run(['environment', 'cobol']), /HTTP 404/);
  });

  test('template <spec id> <dir> downloads the tar.gz and unpacks it', async () => {
    const dir = path.join(work, 'template');
    const r = await run(['template', specId, dir]);
    assertOk(r, 'template');
    assert.match(r.stdout, /Unpacked \d+ files into/);
    for (const f of ['src/Algorithm.py', 'requirements.txt', 'algorithmia.conf', 'README.md']) {
      assert.ok(fs.statSync(path.join(dir, f)).isFile(), `${f} unpacked`);
    }
    assert.match(fs.readFileSync(path.join(dir, 'src/Algorithm.py'), 'utf8'), /def apply\(input\)/);
    assert.equal(JSON.parse(fs.readFileSync(path.join(dir, 'algorithmia.conf'), 'utf8')).algoname, 'Algorithm');
    assertOneLineFailure(await run(['template', '00000000-0000-0000-0000-000000000000', path.join(work, 'none')]), /HTTP 404/);
  });

  test(
    'template on a terminal shows a progress indicator on stderr',
    { skip: !hasScript && 'util-linux script is not installed' },
    async () => {
      const r = await algoOnTerminal(['template', specId, path.join(work, 'template-tty')], { home });
      assertOk(r, 'template on a terminal');
      assert.match(r.stdout, /Downloading template/);
    },
  );

  test('create with flags: legacy language + hardware, or an environment id; the owner defaults to the profile', async () => {
    const hello = json(await run(['create', 'alice/Hello', '--language', 'python3', '--environment', 'cpu', '--json']));
    assert.equal(hello.owner, 'alice');
    assert.equal(hello.name, 'Hello');
    assert.equal(hello.settings.algorithm_environment, envId);
    const second = json(
      await run([
        'create',
        'Second',
        '--environment',
        envId,
        '--label',
        'Second one',
        '--license',
        'mit',
        '--source-visibility',
        'open',
        '--settings',
        '{"royalty_microcredits": 0}',
        '--json',
      ]),
    );
    assert.equal(second.owner, 'alice');
    assert.equal(second.details.label, 'Second one');
    assert.equal(second.settings.license, 'mit');
    const table = await run(['create', 'alice/Third', '--language', 'python3']);
    assertOk(table, 'create');
    assert.match(table.stdout, /Created algorithm alice\/Third/);
    assert.match(table.stdout, /algo clone alice\/Third/);
    assertOneLineFailure(await run(['create', 'alice/Hello', '--language', 'python3']), /HTTP 409/);
    assertOneLineFailure(await run(['create', 'alice/Bad', '--settings', '{oops']), /--settings is not valid JSON/);
    assertOneLineFailure(await run(['create', 'alice/Bad', '--license', 'wtfpl']), /expected one of apl, apache2, gpl3, mit/);
  });

  test(
    'create on a terminal asks for language, environment and settings',
    { skip: !hasScript && 'util-linux script is not installed' },
    async () => {
      // language 1 (python3), environment 1 (python311), license 2 (apache2), network access 2 (full), label.
      const r = await algoOnTerminal(['create', 'alice/Asked'], { home, input: '1\n1\n2\n2\nAsked Label\n' });
      assertOk(r, 'interactive create');
      assert.match(r.stdout, /Language:/);
      const got = await api.get('/v1/algorithms/alice/Asked', { key: alice.key });
      assert.equal(got.status, 200, got.text);
      assert.equal(got.body.settings.license, 'apache2');
      assert.equal(got.body.settings.network_access, 'full');
      assert.equal(got.body.settings.source_visibility, 'open', 'closed needs apl, so open is the only choice');
      assert.equal(got.body.details.label, 'Asked Label');
    },
  );

  test('clone runs git clone with the key in the address; the template files are there', async () => {
    const dir = path.join(work, 'Hello');
    const r = await run(['clone', 'alice/Hello', dir]);
    assertOk(r, 'clone');
    assert.match(r.stdout, /Cloned alice\/Hello into/);
    for (const f of ['src/Hello.py', 'requirements.txt', 'algorithmia.conf']) assert.ok(fs.existsSync(path.join(dir, f)), `${f} cloned`);
    assert.equal(JSON.parse(fs.readFileSync(path.join(dir, 'algorithmia.conf'), 'utf8')).algoname, 'Hello');
    const log = await git(['log', '--oneline'], dir);
    assert.equal(log.stdout.trim().split('\n').length, 1);
    assert.doesNotMatch(r.stderr + r.stdout, new RegExp(alice.key.replace(/[+/]/g, '\\$&')), 'the key is not printed');
    assertOneLineFailure(await run(['clone', 'alice/Nope', path.join(work, 'nope')]), /git clone failed: .*not found/);
    assertOneLineFailure(await run(['clone', 'bob/Hello', path.join(work, 'nope')]), /git clone failed/);
  });

  test('clone with a key holding "/" (sent as %2F)', async () => {
    let key = '';
    for (let i = 0; i < 40 && !key.includes('/'); i++) {
      const res = await api.post('/v1/users/alice/keys', { key: srv.adminKey, body: {} });
      key = res.body.key;
    }
    assert.ok(key.includes('/'), 'made a key with a slash');
    assertOk(await run(['auth', '--profile', 'slash', '--server', srv.url, '--key', key, '--username', 'alice']), 'auth');
    const dir = path.join(work, 'Slash');
    assertOk(await run(['clone', 'alice/Hello', dir, '--profile', 'slash']), 'clone');
    const remote = await git(['remote', 'get-url', 'origin'], dir);
    assert.match(remote.stdout, /%2F/);
  });

  test('builds lists the build of a push (table and --json); --logs prints a finished log', async () => {
    const dir = path.join(work, 'Hello');
    fs.appendFileSync(path.join(dir, 'src', 'Hello.py'), '\n# edited\n');
    const push = await commitAndPush(dir, 'edit', { wait: true });
    const id = announcedBuildId(push.stderr);
    assert.ok(id, push.stderr);
    const list = json<{ build_id: string; status: string; commit_sha: string }[]>(await run(['builds', 'alice', 'Hello', '--json']));
    const build = list.find((b) => b.build_id === id);
    assert.ok(build, 'the pushed build is listed');
    assert.equal(build.status, 'succeeded');
    const table = await run(['builds', 'alice/Hello']);
    assertOk(table, 'builds');
    assert.match(table.stdout, /^BUILD ID\s+STATUS/m);
    assert.match(table.stdout, new RegExp(`^${id}\\s+succeeded\\s+push`, 'm'));
    const logs = await run(['builds', 'alice', 'Hello', '--logs', id]);
    assertOk(logs, 'builds --logs');
    assert.match(logs.stdout, /Build succeeded/);
    assertOneLineFailure(await run(['builds', 'alice', 'Nope']), /No such algorithm/);
    const none = await run(['builds', 'alice', 'Third']);
    assertOk(none, 'builds of an algorithm never pushed');
    assert.match(none.stderr, /No builds of alice\/Third yet/);
  });

  test('builds --follow streams a running build to its end', async () => {
    const dir = path.join(work, 'Hello');
    writeSlowModule(dir, 60000);
    const push = await commitAndPush(dir, 'slow');
    const id = announcedBuildId(push.stderr);
    assert.ok(id, push.stderr);
    const r = await run(['builds', 'alice', 'Hello', '--follow']);
    assertOk(r, 'builds --follow');
    assert.match(r.stdout, /byte-compile the sources/);
    assert.match(r.stdout, /Build succeeded/);
    assert.match(r.stderr, new RegExp(`Build ${id} succeeded`));
    const finished = json<{ status: string; build_id: string }>(await run(['builds', 'alice', 'Hello', '--follow', id, '--json']));
    assert.equal(finished.build_id, id);
    assert.equal(finished.status, 'succeeded');
  });

  test('builds --follow of a failing build ends non-zero with one line', async () => {
    const dir = path.join(work, 'Hello');
    fs.writeFileSync(path.join(dir, 'src', 'broken.py'), 'def broken(:\n');
    const push = await commitAndPush(dir, 'broken');
    const id = announcedBuildId(push.stderr)!;
    const r = await run(['builds', 'alice', 'Hello', '--follow', id]);
    assert.match(r.stdout, /SyntaxError/);
    assertOneLineFailure(r, new RegExp(`build ${id} failed`));
  });

  test('keys: list, create (the secret once), revoke', async () => {
    const before = json<{ id: string }[]>(await run(['keys', '--json']));
    assert.ok(before.some((k) => k.id === alice.keyId));
    const created = json<{ id: string; key: string; description: string }>(await run(['keys', 'create', '--description', 'ci', '--json']));
    assert.match(created.key, /^sim[A-Za-z0-9+/]{25}$/);
    assert.equal(created.description, 'ci');
    const plain = await run(['keys', 'create', '--capabilities', 'call_algorithms,read_data']);
    assertOk(plain, 'keys create');
    assert.match(plain.stdout.trim(), /^sim[A-Za-z0-9+/]{25}$/, 'stdout is the key alone');
    const table = await run(['keys', 'list']);
    assertOk(table, 'keys list');
    assert.match(table.stdout, new RegExp(`^${created.id}\\s+${created.key.slice(0, 6).replace(/[+/]/g, '\\$&')}`, 'm'));
    assert.doesNotMatch(table.stdout, new RegExp(created.key.replace(/[+/]/g, '\\$&')), 'secrets are not listed');
    assertOk(await run(['keys', 'revoke', created.id]), 'keys revoke');
    const after = json<{ id: string }[]>(await run(['keys', '--json']));
    assert.ok(!after.some((k) => k.id === created.id));
    assertOneLineFailure(await run(['keys', 'revoke', created.id]), /HTTP 404/);
    assertOk(await run(['languages']), 'the key of the profile still works');
  });

  test('keys needs the account: --user, or the username of the profile', async () => {
    assertOk(await run(['auth', '--profile', 'nouser', '--server', srv.url, '--key', alice.key]), 'auth without username');
    assertOneLineFailure(await run(['keys', '--profile', 'nouser']), /pass --user NAME/);
    const keys = json<{ id: string }[]>(await run(['keys', 'list', '--profile', 'nouser', '--user', 'alice', '--json']));
    assert.ok(keys.some((k) => k.id === alice.keyId));
    assertOneLineFailure(await run(['keys', '--user', 'bob']), /HTTP 40[34]/);
  });

  test('--profile selects another profile on every command', async () => {
    const thing = json(await run(['create', 'Thing', '--profile', 'bob', '--language', 'python3', '--json']));
    assert.equal(thing.owner, 'bob');
    const keys = json<{ id: string }[]>(await run(['keys', '--profile', 'bob', '--json']));
    assert.ok(keys.some((k) => k.id === bob.keyId));
    assert.ok(!keys.some((k) => k.id === alice.keyId));
    const builds = await run(['builds', 'alice', 'Hello', '--profile', 'bob']);
    assertOneLineFailure(builds, /No such algorithm|HTTP 404/);
    const langs = json<unknown[]>(await run(['languages', '--profile=bob', '--json']));
    assert.ok(langs.length > 0);
    assertOneLineFailure(
      await run(['languages', '--profile', 'missing']),
      /no profile "missing" in ~\/\.algorithmia\/config: run "algo auth --profile missing"/,
    );
  });

  test('run: an unknown algorithm, a missing or malformed input fail with one line', async () => {
    assertOneLineFailure(await run(['run', 'alice/Nope', '-d', '1']), /algorithm algo:\/\/alice\/Nope not found/);
    assertOneLineFailure(await run(['run', 'alice/Hello']), /no input/);
    assertOneLineFailure(await run(['run', 'alice/Hello', '-j', '{oops']), /-j: the input is not valid JSON/);
    assertOneLineFailure(await run(['run', 'alice/Hello', '-d', '1', '-t', 'x']), /give one input only/);
    assertOneLineFailure(await run(['run', 'alice/Hello', '-D', path.join(work, 'missing.json')]), /no such file or directory/);
    assertOneLineFailure(await run(['run', 'justaname', '-d', '1']), /not an algorithm/);
  });

  test('a profile without the config file, and an unreadable config, fail with one line', async () => {
    const empty = await makeHome();
    try {
      assertOneLineFailure(await algo(['languages'], { home: empty }), /no profile "default" .* run "algo auth" first/);
      fs.mkdirSync(path.join(empty, '.algorithmia'));
      fs.writeFileSync(path.join(empty, '.algorithmia', 'config'), '[profiles.default\napi_key = ');
      assertOneLineFailure(await algo(['languages'], { home: empty }), /is not valid TOML/);
    } finally {
      fs.rmSync(empty, { recursive: true, force: true });
    }
  });
});
