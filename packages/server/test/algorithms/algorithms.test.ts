/**
 * Spec endpoint 2 (create an algorithm) and the management routes around it (docs/compatibility.md §3):
 * both request forms, defaults, conflicts, validation, access, legacy language values, the
 * template repository on disk (cloned with the real git CLI), get/update/delete and paging.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { checkedClient } from '../support/assertions.js';
import type { Client } from '../support/http.js';
import { createOrganization, createUser, type TestUser } from '../support/fixtures.js';
import { addMember } from '../support/organizations.js';
import { DATABASES, makeTempDir, startTestServer, type TestServer } from '../support/server.js';

const CATALOG_DIR = fileURLToPath(new URL('../../catalog/', import.meta.url));
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

interface CatalogEnvironment {
  name: string;
  language: string;
  machine_type: 'CPU' | 'GPU';
  template: string;
}
const CATALOG_ENVIRONMENTS = JSON.parse(fs.readFileSync(path.join(CATALOG_DIR, 'environments.json'), 'utf8')) as CatalogEnvironment[];

/** The dependency file and entry point each template kind must put in a new repository. */
const TEMPLATE_FILES: Record<string, { dependencies: string; entry: (name: string) => string }> = {
  python: { dependencies: 'requirements.txt', entry: (n) => `src/${n}.py` },
  r: { dependencies: 'packages.txt', entry: (n) => `src/${n}.r` },
  java: { dependencies: 'pom.xml', entry: (n) => `src/main/java/algorithmia/${n}/${n}.java` },
  scala2: { dependencies: 'build.sbt', entry: (n) => `src/main/scala/algorithmia/${n}/${n}.scala` },
  scala3: { dependencies: 'build.sbt', entry: (n) => `src/main/scala/algorithmia/${n}/${n}.scala` },
  ruby: { dependencies: 'Gemfile', entry: (n) => `src/${n}.rb` },
  rust: { dependencies: 'Cargo.toml', entry: () => 'src/lib.rs' },
  javascript: { dependencies: 'package.json', entry: (n) => `src/${n}.js` },
};

interface EnvironmentJson {
  id: string;
  name: string;
  machine_type: 'CPU' | 'GPU';
  environment_specification_id: string;
}

async function environmentsOf(api: Client, key: string, language: string): Promise<EnvironmentJson[]> {
  const res = await api.get(`/v1/algorithm-environments/edge/languages/${language}/environments`, { key });
  assert.equal(res.status, 200, res.text);
  return res.body as EnvironmentJson[];
}

async function environmentNamed(api: Client, key: string, name: string): Promise<EnvironmentJson> {
  const spec = CATALOG_ENVIRONMENTS.find((e) => e.name === name);
  assert.ok(spec, `environment ${name} is in environments.json`);
  const env = (await environmentsOf(api, key, spec.language)).find((e) => e.name === name);
  assert.ok(env, `environment ${name} is listed by endpoint 4`);
  return env;
}

/** Clones the bare repository straight from disk with the real git CLI; returns its files. */
function cloneFromDisk(srv: TestServer, algorithmId: string, into: string): { dir: string; files: Map<string, Buffer>; commits: number } {
  const bare = path.join(srv.dataDir, 'repositories', `${algorithmId}.git`);
  assert.ok(fs.existsSync(bare), `repository ${bare} exists`);
  const dir = path.join(into, algorithmId);
  const env = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_TERMINAL_PROMPT: '0' };
  execFileSync('git', ['clone', '--quiet', bare, dir], { env, stdio: 'pipe' });
  const commits = Number(execFileSync('git', ['rev-list', '--count', 'HEAD'], { cwd: dir, env, encoding: 'utf8' }).trim());
  const files = new Map<string, Buffer>();
  const walk = (rel: string) => {
    for (const entry of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const relPath = rel ? `${rel}/${entry.name}` : entry.name;
      if (relPath === '.git') continue;
      if (entry.isDirectory()) walk(relPath);
      else files.set(relPath, fs.readFileSync(path.join(dir, relPath)));
    }
  };
  walk('');
  return { dir, files, commits };
}

/** The paths a template should produce for an algorithm name, computed from the template tree. */
function expectedPaths(template: string, name: string): string[] {
  const root = path.join(CATALOG_DIR, 'templates', template);
  const out: string[] = [];
  const walk = (rel: string) => {
    for (const entry of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
      const relPath = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) walk(relPath);
      else out.push(relPath.replaceAll('__ALGO_NAME_LOWER__', name.toLowerCase()).replaceAll('__ALGO_NAME__', name));
    }
  };
  walk('');
  return out.sort();
}

const withoutUpdatedAt = (body: Record<string, unknown>) => ({ ...body, updated_at: undefined });

for (const database of DATABASES) {
  describe(`algorithms (${database})`, () => {
    let srv: TestServer;
    let api: Client;
    let ada: TestUser;
    let bob: TestUser;
    let tmp: string;
    let python311: EnvironmentJson;
    let python37: EnvironmentJson;

    before(async () => {
      srv = await startTestServer({ database });
      api = checkedClient(srv.url);
      tmp = await makeTempDir('algohost-clones-');
      ada = await createUser(api, srv.adminKey, 'ada');
      bob = await createUser(api, srv.adminKey, 'bob');
      python311 = await environmentNamed(api, ada.key, 'python311');
      python37 = await environmentNamed(api, ada.key, 'python37');
    });
    after(async () => {
      await srv?.stop();
      if (tmp) await fs.promises.rm(tmp, { recursive: true, force: true });
    });

    const create = (owner: string, key: string, body: unknown) => api.post(`/v1/algorithms/${owner}`, { key, body });
    const repositoryDirs = () =>
      fs.existsSync(path.join(srv.dataDir, 'repositories'))
        ? fs.readdirSync(path.join(srv.dataDir, 'repositories')).filter((d) => d.endsWith('.git') && !d.startsWith('.'))
        : [];

    test('endpoint 2 with settings.algorithm_environment returns every field of the Algorithm resource', async () => {
      const res = await create('ada', ada.key, {
        name: 'Summarizer',
        details: { label: 'Text Summarizer', summary: 'Makes text shorter.', tagline: 'Less is more' },
        settings: {
          algorithm_environment: python37.id,
          source_visibility: 'closed',
          license: 'apl',
          network_access: 'isolated',
          pipeline_enabled: false,
        },
      });
      assert.equal(res.status, 200, res.text);
      const a = res.body;
      assert.match(a.id, UUID);
      assert.equal(a.name, 'Summarizer');
      assert.deepEqual(a.details, { label: 'Text Summarizer', summary: 'Makes text shorter.', tagline: 'Less is more' });
      assert.equal(a.settings.algorithm_callability, 'private');
      assert.equal(a.settings.source_visibility, 'closed');
      assert.equal(a.settings.package_set, 'python37');
      assert.equal(a.settings.license, 'apl');
      assert.equal(a.settings.network_access, 'isolated');
      assert.equal(a.settings.pipeline_enabled, false);
      assert.equal(a.settings.insights_enabled, false);
      assert.equal(a.settings.algorithm_environment, python37.id);
      assert.equal(a.resource_type, 'algorithm');
      assert.equal(a.git_url, `${srv.url}/git/ada/Summarizer.git`);
      assert.equal(a.self_link, `${srv.url}/v1/algorithms/ada/Summarizer`);
      assert.equal(a.error, undefined, 'a success body never has a top-level error key');

      const got = await api.get('/v1/algorithms/ada/Summarizer', { key: ada.key });
      assert.equal(got.status, 200);
      assert.deepEqual(got.body, a);
    });

    test('endpoint 2 in the Python-only form (language python3-1, environment cpu) keeps what was sent', async () => {
      const res = await create('ada', ada.key, {
        name: 'PyOnly',
        details: { label: 'Python only' },
        settings: {
          language: 'python3-1',
          environment: 'cpu',
          license: 'apl',
          network_access: 'full',
          pipeline_enabled: true,
          source_visibility: 'closed',
        },
      });
      assert.equal(res.status, 200, res.text);
      const a = res.body;
      assert.match(a.id, UUID);
      assert.equal(a.name, 'PyOnly');
      assert.equal(a.details.label, 'Python only');
      assert.equal(a.settings.algorithm_callability, 'private');
      assert.equal(a.settings.source_visibility, 'closed');
      assert.equal(a.settings.license, 'apl');
      assert.equal(a.settings.network_access, 'full');
      assert.equal(a.settings.pipeline_enabled, true);
      assert.equal(a.settings.insights_enabled, false);
      assert.equal(a.settings.language, 'python3-1');
      assert.equal(a.settings.environment, 'cpu');
      assert.equal(a.settings.algorithm_environment, python311.id, 'python3-1/cpu resolves to the python311 environment');
      assert.equal(a.settings.package_set, 'python311');
      assert.equal(a.resource_type, 'algorithm');
      assert.equal(a.git_url, `${srv.url}/git/ada/PyOnly.git`);
      assert.equal(a.self_link, `${srv.url}/v1/algorithms/ada/PyOnly`);
    });

    test('omitted, empty or null settings give the configured defaults (python311, isolated, apl, closed, private)', async () => {
      for (const [name, body] of [
        ['NoSettings', { name: 'NoSettings' }],
        ['EmptySettings', { name: 'EmptySettings', details: {}, settings: {} }],
        ['NullSettings', { name: 'NullSettings', details: null, settings: null }],
      ] as const) {
        const res = await create('ada', ada.key, body);
        assert.equal(res.status, 200, `${name}: ${res.text}`);
        const s = res.body.settings;
        assert.equal(s.algorithm_environment, python311.id, name);
        assert.equal(s.package_set, 'python311', name);
        assert.equal(s.network_access, 'isolated', name);
        assert.equal(s.license, 'apl', name);
        assert.equal(s.source_visibility, 'closed', name);
        assert.equal(s.algorithm_callability, 'private', name);
        assert.equal(s.pipeline_enabled, false, name);
        assert.equal(s.insights_enabled, false, name);
        assert.equal(res.body.details.label, undefined, name);
      }
    });

    test('creating an algorithm that exists (in any letter case) is 409 code 1002 and leaves it unchanged', async () => {
      const first = await create('ada', ada.key, { name: 'Keeper', details: { label: 'Original' }, settings: { network_access: 'full' } });
      assert.equal(first.status, 200, first.text);
      const before = await api.get('/v1/algorithms/ada/Keeper', { key: ada.key });
      const reposBefore = repositoryDirs().length;

      for (const name of ['Keeper', 'keeper', 'KEEPER']) {
        const again = await create('ada', ada.key, {
          name,
          details: { label: 'Overwritten?' },
          settings: { network_access: 'isolated', license: 'mit', source_visibility: 'open', algorithm_environment: python37.id },
        });
        assert.equal(again.status, 409, `${name}: ${again.text}`);
        assert.equal(again.body.error.code, 1002);
        assert.ok(again.body.error.message.length > 0);
        assert.ok(again.headers.get('x-error-message'));
      }
      const afterwards = await api.get('/v1/algorithms/ada/Keeper', { key: ada.key });
      assert.equal(afterwards.status, 200);
      assert.deepEqual(afterwards.body, before.body);
      assert.equal(afterwards.body.details.label, 'Original');
      assert.equal(afterwards.body.updated_at, before.body.updated_at);
      assert.equal(repositoryDirs().length, reposBefore, 'no repository was made for the refused create');
      // Lookups ignore case too: the stored name keeps its spelling.
      const lower = await api.get('/v1/algorithms/ada/keeper', { key: ada.key });
      assert.equal(lower.status, 200);
      assert.equal(lower.body.name, 'Keeper');
    });

    test('two simultaneous creates of one name: one wins, the other is 409, one repository is left', async () => {
      const reposBefore = repositoryDirs().length;
      const results = await Promise.all([
        create('ada', ada.key, { name: 'Racer', details: { label: 'first' } }),
        create('ada', ada.key, { name: 'racer', details: { label: 'second' } }),
      ]);
      assert.deepEqual(results.map((r) => r.status).sort(), [200, 409], results.map((r) => r.text).join('\n'));
      const winner = results.find((r) => r.status === 200)!;
      const got = await api.get('/v1/algorithms/ada/RACER', { key: ada.key });
      assert.equal(got.status, 200);
      assert.equal(got.body.id, winner.body.id);
      assert.equal(got.body.details.label, winner.body.details.label);
      assert.equal(repositoryDirs().length, reposBefore + 1);
      assert.equal(cloneFromDisk(srv, winner.body.id, tmp).commits, 1);
    });

    test('algorithm names are validated: bad ones are 400, good ones at the edges are accepted', async () => {
      for (const name of ['1abc', '_abc', 'has-dash', 'has space', 'dot.ted', 'ünï', '', 'a'.repeat(101), 'x/y']) {
        const res = await create('ada', ada.key, { name });
        assert.equal(res.status, 400, `name ${JSON.stringify(name)}: ${res.text}`);
        assert.ok(res.body.error.message, 'the 400 says why');
      }
      const missing = await create('ada', ada.key, { details: { label: 'No name' } });
      assert.equal(missing.status, 400, missing.text);
      for (const name of ['a', 'A_1_b', `L${'o'.repeat(99)}`]) {
        const res = await create('ada', ada.key, { name });
        assert.equal(res.status, 200, `name ${name}: ${res.text}`);
        assert.equal(res.body.name, name);
      }
    });

    test('owners: unknown owner 404, another user 403, an organization you belong to 200, one you do not 403', async () => {
      const unknown = await create('nobody_here', ada.key, { name: 'Lost' });
      assert.equal(unknown.status, 404, unknown.text);
      assert.equal(unknown.body.error.code, 3000);

      const foreign = await create('bob', ada.key, { name: 'Intruder' });
      assert.equal(foreign.status, 403, foreign.text);
      assert.equal(foreign.body.error.code, 2001);
      assert.equal((await api.get('/v1/algorithms/bob/Intruder', { key: bob.key })).status, 404);

      await createOrganization(api, ada.key, 'adacorp');
      const forOrg = await create('adacorp', ada.key, { name: 'OrgAlgo', details: { label: 'Team work' } });
      assert.equal(forOrg.status, 200, forOrg.text);
      assert.equal(forOrg.body.git_url, `${srv.url}/git/adacorp/OrgAlgo.git`);
      assert.equal(forOrg.body.self_link, `${srv.url}/v1/algorithms/adacorp/OrgAlgo`);

      const notMember = await create('adacorp', bob.key, { name: 'BobInOrg' });
      assert.equal(notMember.status, 403, notMember.text);
      await addMember(api, 'adacorp', ada.key, bob);
      const member = await create('adacorp', bob.key, { name: 'BobInOrg' });
      assert.equal(member.status, 200, member.text);
      assert.equal((await api.get('/v1/algorithms/adacorp/BobInOrg', { key: ada.key })).status, 200);

      const admin = await create('bob', srv.adminKey, { name: 'MadeByAdmin' });
      assert.equal(admin.status, 200, admin.text);
    });

    test('a key without manage_algorithms may not create algorithms (403)', async () => {
      const key = await api.post('/v1/users/ada/keys', { key: srv.adminKey, body: { capabilities: ['call_algorithms'] } });
      assert.equal(key.status, 200, key.text);
      const res = await create('ada', key.body.key, { name: 'NoCapability' });
      assert.equal(res.status, 403, res.text);
    });

    test('an environment id that is not of this cluster is 422 with a message', async () => {
      const res = await create('ada', ada.key, { name: 'Foreign', settings: { algorithm_environment: crypto.randomUUID() } });
      assert.equal(res.status, 422, res.text);
      assert.match(res.body.error.message, /not an environment of this cluster/);
      assert.equal((await api.get('/v1/algorithms/ada/Foreign', { key: ada.key })).status, 404, 'nothing was created');
    });

    test('closed source needs the apl license: closed + mit is 400, open + mit is accepted', async () => {
      const closed = await create('ada', ada.key, { name: 'ClosedMit', settings: { source_visibility: 'closed', license: 'mit' } });
      assert.equal(closed.status, 400, closed.text);
      assert.match(closed.body.error.message, /closed/);
      assert.equal((await api.get('/v1/algorithms/ada/ClosedMit', { key: ada.key })).status, 404);
      // An omitted source_visibility defaults to closed, so a non-apl license alone conflicts with it.
      const implicit = await create('ada', ada.key, { name: 'ImplicitMit', settings: { license: 'gpl3' } });
      assert.equal(implicit.status, 409, implicit.text);
      const open = await create('ada', ada.key, { name: 'OpenMit', settings: { source_visibility: 'open', license: 'mit' } });
      assert.equal(open.status, 200, open.text);
      assert.equal(open.body.settings.source_visibility, 'open');
      assert.equal(open.body.settings.license, 'mit');
    });

    test('legacy language values resolve to an environment of the right language and hardware', async () => {
      const cases: [string, string, string, 'CPU' | 'GPU'][] = [
        ['python3-1', 'cpu', 'python3', 'CPU'],
        ['python2-langpack', 'cpu', 'python2', 'CPU'],
        ['java', 'cpu', 'java17', 'CPU'],
        ['r', 'cpu', 'r4', 'CPU'],
        ['ruby', 'cpu', 'ruby3', 'CPU'],
        ['rust', 'cpu', 'rust', 'CPU'],
        ['scala', 'cpu', 'scala-2', 'CPU'],
        ['javascript', 'cpu', 'nodejs20', 'CPU'],
        ['python3-1', 'gpu', 'python3', 'GPU'],
      ];
      for (const [language, hardware, catalogLanguage, machine] of cases) {
        const name = `Legacy_${language.replace(/-/g, '_')}_${hardware}`;
        const res = await create('ada', ada.key, { name, settings: { language, environment: hardware } });
        assert.equal(res.status, 200, `${language}/${hardware}: ${res.text}`);
        const envs = await environmentsOf(api, ada.key, catalogLanguage);
        const env = envs.find((e) => e.id === res.body.settings.algorithm_environment);
        assert.ok(env, `${language}/${hardware} resolved to an environment of language ${catalogLanguage}`);
        assert.equal(env.machine_type, machine, `${language}/${hardware}`);
        assert.equal(res.body.settings.package_set, env.name);
        assert.equal(res.body.settings.environment, hardware);
        assert.equal(res.body.settings.language, language);
      }
      const unknown = await create('ada', ada.key, { name: 'Cobol', settings: { language: 'cobol', environment: 'cpu' } });
      assert.equal(unknown.status, 422, unknown.text);
      assert.match(unknown.body.error.message, /cobol/);
      const badHardware = await create('ada', ada.key, { name: 'Tpu', settings: { language: 'python3-1', environment: 'tpu' } });
      assert.equal(badHardware.status, 400, badHardware.text);
    });

    test('the new repository holds one commit with the python template, names filled in', async () => {
      const res = await create('ada', ada.key, { name: 'Greeter', settings: { language: 'python3-1', environment: 'cpu' } });
      assert.equal(res.status, 200, res.text);
      const { files, commits } = cloneFromDisk(srv, res.body.id, tmp);
      assert.equal(commits, 1);
      assert.deepEqual([...files.keys()].sort(), expectedPaths('python', 'Greeter'));
      assert.ok(files.has('src/Greeter.py'));
      assert.ok(files.has('src/__init__.py'));
      assert.ok(files.has('requirements.txt'));
      const conf = JSON.parse(files.get('algorithmia.conf')!.toString('utf8'));
      assert.equal(conf.username, 'ada');
      assert.equal(conf.algoname, 'Greeter');
      const source = files.get('src/Greeter.py')!.toString('utf8');
      assert.match(source, /ada\/Greeter/);
      assert.match(source, /def apply\(input\)/);
    });

    test('every environment of environments.json gives its template kind: dependency file, entry point, no placeholders', async () => {
      const kinds = new Set<string>();
      for (const spec of CATALOG_ENVIRONMENTS) {
        const template = TEMPLATE_FILES[spec.template];
        assert.ok(template, `template kind ${spec.template} of ${spec.name} is known to this test`);
        kinds.add(spec.template);
        const env = await environmentNamed(api, ada.key, spec.name);
        const name = `Tpl_${spec.name.replace(/[^A-Za-z0-9]/g, '_')}`;
        const res = await create('ada', ada.key, { name, settings: { algorithm_environment: env.id } });
        assert.equal(res.status, 200, `${spec.name}: ${res.text}`);
        assert.equal(res.body.settings.algorithm_environment, env.id);
        assert.equal(res.body.settings.package_set, spec.name);

        const { files, commits } = cloneFromDisk(srv, res.body.id, tmp);
        assert.equal(commits, 1, spec.name);
        assert.deepEqual([...files.keys()].sort(), expectedPaths(spec.template, name), spec.name);
        assert.ok(files.has(template.dependencies), `${spec.name}: ${template.dependencies} is in the repository`);
        assert.ok(files.has(template.entry(name)), `${spec.name}: entry point ${template.entry(name)} is in the repository`);
        const conf = JSON.parse(files.get('algorithmia.conf')!.toString('utf8'));
        assert.equal(conf.username, 'ada', spec.name);
        assert.equal(conf.algoname, name, spec.name);
        for (const [file, content] of files) {
          assert.ok(!file.includes('__ALGO_NAME'), `${spec.name}: path ${file} still has a placeholder`);
          const text = content.toString('utf8');
          assert.ok(!text.includes('__ALGO_NAME') && !text.includes('{{ALGO_'), `${spec.name}: ${file} still has a placeholder`);
        }
        if (spec.template === 'rust') assert.match(files.get('Cargo.toml')!.toString('utf8'), new RegExp(`name = "${name.toLowerCase()}"`));
        if (spec.template === 'javascript') {
          const pkg = JSON.parse(files.get('package.json')!.toString('utf8'));
          assert.equal(pkg.main, `src/${name}.js`);
        }
      }
      assert.deepEqual([...kinds].sort(), ['java', 'javascript', 'python', 'r', 'ruby', 'rust', 'scala2', 'scala3']);
    });

    test('GET: the owner sees a private algorithm, others get 404 "No such algorithm" until it is public', async () => {
      const created = await create('ada', ada.key, { name: 'Secretive', details: { label: 'Hidden' } });
      assert.equal(created.status, 200, created.text);
      assert.equal((await api.get('/v1/algorithms/ada/Secretive', { key: ada.key })).status, 200);
      assert.equal((await api.get('/v1/algorithms/ada/Secretive', { key: srv.adminKey })).status, 200);

      const hidden = await api.get('/v1/algorithms/ada/Secretive', { key: bob.key });
      assert.equal(hidden.status, 404);
      assert.match(hidden.body.error.message, /No such algorithm/);
      assert.equal(hidden.body.error.code, 1001);
      assert.ok(hidden.headers.get('x-error-message')?.includes('No such algorithm'));
      const hiddenPatch = await api.patch('/v1/algorithms/ada/Secretive', { key: bob.key, body: { details: { label: 'Mine' } } });
      assert.equal(hiddenPatch.status, 404, 'a private algorithm is invisible to others, also for writes');

      const missing = await api.get('/v1/algorithms/ada/NeverMade', { key: ada.key });
      assert.equal(missing.status, 404);
      assert.match(missing.body.error.message, /No such algorithm/);
      const noOwner = await api.get('/v1/algorithms/nobody_here/Anything', { key: ada.key });
      assert.equal(noOwner.status, 404);
      assert.match(noOwner.body.error.message, /No such algorithm/);

      const published = await api.patch('/v1/algorithms/ada/Secretive', {
        key: ada.key,
        body: { settings: { algorithm_callability: 'public' } },
      });
      assert.equal(published.status, 200, published.text);
      assert.equal(published.body.settings.algorithm_callability, 'public');
      const visible = await api.get('/v1/algorithms/ada/Secretive', { key: bob.key });
      assert.equal(visible.status, 200, visible.text);
      assert.equal(visible.body.details.label, 'Hidden');

      const foreignWrite = await api.patch('/v1/algorithms/ada/Secretive', { key: bob.key, body: { details: { label: 'Mine' } } });
      assert.equal(foreignWrite.status, 403, foreignWrite.text);
      const foreignDelete = await api.delete('/v1/algorithms/ada/Secretive', { key: bob.key });
      assert.equal(foreignDelete.status, 403, foreignDelete.text);
      assert.equal((await api.get('/v1/algorithms/ada/Secretive', { key: ada.key })).body.details.label, 'Hidden');
    });

    test("PUT with the Python client's full body of empty objects changes nothing", async () => {
      const created = await create('ada', ada.key, {
        name: 'Stable',
        details: { label: 'Stable one', summary: 'S', tagline: 'T' },
        settings: { network_access: 'full', pipeline_enabled: true, algorithm_environment: python37.id },
      });
      assert.equal(created.status, 200, created.text);
      const put = await api.put('/v1/algorithms/ada/Stable', {
        key: ada.key,
        body: { details: {}, settings: {}, version_info: {}, source: {}, scmsCredentials: {} },
      });
      assert.equal(put.status, 200, put.text);
      const got = await api.get('/v1/algorithms/ada/Stable', { key: ada.key });
      assert.deepEqual(withoutUpdatedAt(got.body), withoutUpdatedAt(created.body));
      assert.deepEqual(withoutUpdatedAt(put.body), withoutUpdatedAt(created.body));
    });

    test('PUT of the object GET returned (details and settings) changes nothing', async () => {
      const created = await create('ada', ada.key, {
        name: 'RoundTrip',
        details: { label: 'Round', summary: 'trip' },
        settings: { algorithm_environment: python37.id, network_access: 'full', source_visibility: 'open', license: 'gpl3' },
      });
      assert.equal(created.status, 200, created.text);
      const got = await api.get('/v1/algorithms/ada/RoundTrip', { key: ada.key });
      const put = await api.put('/v1/algorithms/ada/RoundTrip', {
        key: ada.key,
        body: { details: got.body.details, settings: got.body.settings, version_info: {}, source: {}, scmsCredentials: {} },
      });
      assert.equal(put.status, 200, put.text);
      assert.deepEqual(withoutUpdatedAt(put.body), withoutUpdatedAt(created.body));
    });

    test('PUT and PATCH with details.label change only the label', async () => {
      const created = await create('ada', ada.key, {
        name: 'Relabel',
        details: { label: 'Before', summary: 'Sum', tagline: 'Tag' },
        settings: { network_access: 'full', source_visibility: 'open', license: 'mit' },
      });
      assert.equal(created.status, 200, created.text);
      for (const [method, label] of [
        ['put', 'After PUT'],
        ['patch', 'After PATCH'],
      ] as const) {
        const res = await api[method]('/v1/algorithms/ada/Relabel', { key: ada.key, body: { details: { label } } });
        assert.equal(res.status, 200, res.text);
        const got = await api.get('/v1/algorithms/ada/Relabel', { key: ada.key });
        assert.equal(got.body.details.label, label);
        assert.deepEqual(
          { ...withoutUpdatedAt(got.body), details: { ...got.body.details, label: undefined } },
          { ...withoutUpdatedAt(created.body), details: { ...created.body.details, label: undefined } },
        );
        assert.deepEqual(res.body, got.body);
      }
    });

    test('renaming is 400, switching to another language 409; another environment of the same language is fine', async () => {
      const created = await create('ada', ada.key, { name: 'Fixed', settings: { algorithm_environment: python311.id } });
      assert.equal(created.status, 200, created.text);

      const rename = await api.put('/v1/algorithms/ada/Fixed', { key: ada.key, body: { name: 'Moved' } });
      assert.equal(rename.status, 400, rename.text);
      assert.match(rename.body.error.message, /renamed/);
      assert.equal((await api.get('/v1/algorithms/ada/Moved', { key: ada.key })).status, 404);

      const java = await environmentNamed(api, ada.key, 'java17');
      const switchLanguage = await api.patch('/v1/algorithms/ada/Fixed', {
        key: ada.key,
        body: { settings: { algorithm_environment: java.id } },
      });
      assert.equal(switchLanguage.status, 409, switchLanguage.text);
      const unknownEnv = await api.patch('/v1/algorithms/ada/Fixed', {
        key: ada.key,
        body: { settings: { algorithm_environment: crypto.randomUUID() } },
      });
      assert.equal(unknownEnv.status, 422, unknownEnv.text);
      const badLicense = await api.patch('/v1/algorithms/ada/Fixed', { key: ada.key, body: { settings: { license: 'mit' } } });
      assert.equal(badLicense.status, 409, 'closed source stays apl on update too');

      const unchanged = await api.get('/v1/algorithms/ada/Fixed', { key: ada.key });
      assert.deepEqual(unchanged.body, created.body, 'refused updates change nothing');

      const otherLegacyLanguage = await api.patch('/v1/algorithms/ada/Fixed', {
        key: ada.key,
        body: { settings: { language: 'java', environment: 'cpu' } },
      });
      assert.equal(otherLegacyLanguage.status, 409, 'a different legacy language is refused, not ignored');
      assert.match(otherLegacyLanguage.body.error.message, /language/);
      const unknownLanguage = await api.patch('/v1/algorithms/ada/Fixed', { key: ada.key, body: { settings: { language: 'cobol' } } });
      assert.equal(unknownLanguage.status, 422);
      assert.deepEqual((await api.get('/v1/algorithms/ada/Fixed', { key: ada.key })).body, created.body);

      const sameLanguage = await api.patch('/v1/algorithms/ada/Fixed', {
        key: ada.key,
        body: { settings: { algorithm_environment: python37.id } },
      });
      assert.equal(sameLanguage.status, 200, sameLanguage.text);
      assert.equal(sameLanguage.body.settings.algorithm_environment, python37.id);
      assert.equal(sameLanguage.body.settings.package_set, 'python37');
      // Sending the language it already has (as GET shows it) keeps the chosen environment.
      const sameLegacy = await api.patch('/v1/algorithms/ada/Fixed', {
        key: ada.key,
        body: { settings: { language: 'python3-1', environment: 'cpu' } },
      });
      assert.equal(sameLegacy.status, 200, sameLegacy.text);
      assert.equal(sameLegacy.body.settings.algorithm_environment, python37.id);
    });

    test('DELETE is 204, then the algorithm is 404 and its repository directory is gone', async () => {
      const created = await create('ada', ada.key, { name: 'Doomed' });
      assert.equal(created.status, 200, created.text);
      const repo = path.join(srv.dataDir, 'repositories', `${created.body.id}.git`);
      assert.ok(fs.existsSync(repo));

      const del = await api.delete('/v1/algorithms/ada/Doomed', { key: ada.key });
      assert.equal(del.status, 204, del.text);
      assert.equal(del.text, '');
      const got = await api.get('/v1/algorithms/ada/Doomed', { key: ada.key });
      assert.equal(got.status, 404);
      assert.match(got.body.error.message, /No such algorithm/);
      assert.ok(!fs.existsSync(repo), 'the repository directory is removed');
      assert.equal((await api.delete('/v1/algorithms/ada/Doomed', { key: ada.key })).status, 404);

      // The name is free again and gets a fresh repository.
      const again = await create('ada', ada.key, { name: 'Doomed' });
      assert.equal(again.status, 200, again.text);
      assert.notEqual(again.body.id, created.body.id);
      assert.equal(cloneFromDisk(srv, again.body.id, tmp).commits, 1);
    });

    test('deleting the owner account deletes its algorithms and their repositories', async () => {
      const leaver = await createUser(api, srv.adminKey, 'leaver');
      const ids: string[] = [];
      for (const name of ['One', 'Two']) {
        const res = await create('leaver', leaver.key, { name });
        assert.equal(res.status, 200, res.text);
        ids.push(res.body.id);
      }
      const del = await api.delete('/v1/users/leaver', { key: srv.adminKey });
      assert.equal(del.status, 204, del.text);
      for (const id of ids) assert.ok(!fs.existsSync(path.join(srv.dataDir, 'repositories', `${id}.git`)), `repository ${id} is gone`);
      assert.equal((await api.get('/v1/algorithms/leaver/One', { key: srv.adminKey })).status, 404);
      // A new account of the same name starts empty.
      const again = await createUser(api, srv.adminKey, 'leaver');
      const list = await api.get('/v1/algorithms/leaver', { key: again.key });
      assert.equal(list.status, 200);
      assert.deepEqual(list.body.results, []);
      assert.equal((await create('leaver', again.key, { name: 'One' })).status, 200);
    });

    test('GET /v1/algorithms/{owner} pages by name; others see only public algorithms', async () => {
      const pager = await createUser(api, srv.adminKey, 'pager');
      const names = ['bravo', 'Alpha', 'echo', 'Delta', 'charlie'];
      for (const name of names) assert.equal((await create('pager', pager.key, { name })).status, 200);
      for (const name of ['bravo', 'Delta']) {
        const res = await api.patch(`/v1/algorithms/pager/${name}`, {
          key: pager.key,
          body: { settings: { algorithm_callability: 'public' } },
        });
        assert.equal(res.status, 200, res.text);
      }

      const seen: string[] = [];
      let res = await api.get('/v1/algorithms/pager?limit=2', { key: pager.key });
      for (let pages = 1; ; pages++) {
        assert.equal(res.status, 200, res.text);
        assert.ok(res.body.results.length <= 2);
        for (const a of res.body.results) {
          assert.equal(a.resource_type, 'algorithm');
          seen.push(a.name);
        }
        if (res.body.next_link === null) {
          assert.equal(res.body.marker, null, 'marker and next_link are both null on the last page');
          assert.equal(pages, 3);
          break;
        }
        assert.equal(typeof res.body.marker, 'string');
        const next = new URL(res.body.next_link);
        assert.equal(next.origin, srv.url);
        assert.equal(next.searchParams.get('marker'), res.body.marker);
        res = await api.get(next.pathname + next.search, { key: pager.key });
      }
      assert.deepEqual(seen, ['Alpha', 'bravo', 'charlie', 'Delta', 'echo']);

      const all = await api.get('/v1/algorithms/pager', { key: pager.key });
      assert.deepEqual(
        all.body.results.map((a: { name: string }) => a.name),
        seen,
      );
      assert.equal(all.body.marker, null);
      assert.equal(all.body.next_link, null);

      const asOther = await api.get('/v1/algorithms/pager', { key: bob.key });
      assert.equal(asOther.status, 200);
      assert.deepEqual(
        asOther.body.results.map((a: { name: string }) => a.name),
        ['bravo', 'Delta'],
      );
      const otherPaged = await api.get('/v1/algorithms/pager?limit=1', { key: bob.key });
      assert.deepEqual(
        otherPaged.body.results.map((a: { name: string }) => a.name),
        ['bravo'],
      );
      const otherNext = await api.get(`/v1/algorithms/pager?limit=1&marker=${encodeURIComponent(otherPaged.body.marker)}`, {
        key: bob.key,
      });
      assert.deepEqual(
        otherNext.body.results.map((a: { name: string }) => a.name),
        ['Delta'],
      );

      const badLimit = await api.get('/v1/algorithms/pager?limit=0', { key: pager.key });
      assert.equal(badLimit.status, 400);
      assert.equal(badLimit.body.error.code, 5003);
      const badMarker = await api.get('/v1/algorithms/pager?marker=not%20a%20marker', { key: pager.key });
      assert.equal(badMarker.status, 400);
      assert.equal(badMarker.body.error.code, 5002);
      assert.equal((await api.get('/v1/algorithms/nobody_here', { key: pager.key })).status, 404);
    });

    test('malformed JSON is 400 code 2013; wrong types are 400', async () => {
      for (const raw of ['{"name": "Broken",', '{name: Broken}', 'not json']) {
        const res = await api.post('/v1/algorithms/ada', { key: ada.key, raw, headers: { 'content-type': 'application/json' } });
        assert.equal(res.status, 400, `${raw}: ${res.text}`);
        assert.equal(res.body.error.code, 2013);
      }
      const malformedPut = await api.put('/v1/algorithms/ada/Summarizer', {
        key: ada.key,
        raw: '{"details": ',
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(malformedPut.status, 400);
      assert.equal(malformedPut.body.error.code, 2013);

      const wrongTypes: unknown[] = [
        { name: 'Typed', settings: 'x' },
        { name: 3 },
        { name: 'Typed', details: 'x' },
        { name: 'Typed', details: { label: 5 } },
        { name: 'Typed', settings: [] },
        { name: 'Typed', settings: { pipeline_enabled: 'yes' } },
        { name: 'Typed', settings: { network_access: 'sometimes' } },
        { name: 'Typed', settings: { license: 'bsd' } },
        { name: 'Typed', settings: { algorithm_callability: 'everyone' } },
        { name: 'Typed', settings: { algorithm_environment: 42 } },
        { name: 'Typed', settings: { language: ['python3-1'] } },
        { name: 'Typed', settings: { royalty_microcredits: -1 } },
        { name: 'Typed', source: { scm: 'github' } },
        [],
        'Typed',
      ];
      for (const body of wrongTypes) {
        const res = await create('ada', ada.key, body);
        assert.equal(res.status, 400, `${JSON.stringify(body)}: ${res.text}`);
        assert.equal(typeof res.body.error.code, 'number');
        assert.ok(res.body.error.message);
      }
      assert.equal((await api.get('/v1/algorithms/ada/Typed', { key: ada.key })).status, 404);
      const wrongPut = await api.put('/v1/algorithms/ada/Summarizer', { key: ada.key, body: { settings: 'x' } });
      assert.equal(wrongPut.status, 400, wrongPut.text);
    });

    test('values the databases cannot hold are 400, not 500: NUL characters, huge royalties, NUL in names and markers', async () => {
      for (const details of [{ label: 'a\u0000b' }, { summary: 'a\u0000b' }, { tagline: '\u0000' }]) {
        const res = await create('ada', ada.key, { name: 'Nul', details });
        assert.equal(res.status, 400, `${JSON.stringify(details)}: ${res.text}`);
      }
      const patchNul = await api.patch('/v1/algorithms/ada/Summarizer', { key: ada.key, body: { details: { label: 'x\u0000' } } });
      assert.equal(patchNul.status, 400);
      for (const royalty of [2 ** 31, 1e20, -1, 1.5]) {
        const res = await create('ada', ada.key, { name: 'Royal', settings: { royalty_microcredits: royalty } });
        assert.equal(res.status, 400, `${royalty}: ${res.text}`);
      }
      const largest = await create('ada', ada.key, { name: 'Royal', settings: { royalty_microcredits: 2 ** 31 - 1 } });
      assert.equal(largest.status, 200, largest.text);
      assert.equal(largest.body.settings.royalty_microcredits, 2 ** 31 - 1);
      assert.equal((await api.get('/v1/algorithms/ada/Royal', { key: ada.key })).body.settings.royalty_microcredits, 2 ** 31 - 1);

      assert.equal((await api.get('/v1/algorithms/a%00b/x', { key: ada.key })).status, 404);
      assert.equal((await api.get('/v1/algorithms/ada/a%00b', { key: ada.key })).status, 404);
      assert.equal((await api.get('/v1/algorithms/a%00b', { key: ada.key })).status, 404);
      assert.equal((await api.post('/v1/algorithms/a%00b', { key: ada.key, body: { name: 'X' } })).status, 404);
      assert.equal((await api.put('/v1/algorithms/ada/a%00b', { key: ada.key, body: { details: {} } })).status, 404);
      assert.equal((await api.delete('/v1/algorithms/ada/a%00b', { key: ada.key })).status, 404);
      // A marker holding NUL was never issued; it is still a position (the key ends before the NUL).
      const forged = Buffer.from('a\u0000z').toString('base64url');
      const marker = await api.get(`/v1/algorithms/ada?marker=${forged}`, { key: ada.key });
      assert.equal(marker.status, 200, marker.text);
    });

    test('no credentials is 401, an unknown key is 401 code 2002', async () => {
      const none = await api.post('/v1/algorithms/ada', { body: { name: 'Anonymous' } });
      assert.equal(none.status, 401, none.text);
      assert.ok(none.body.error.message);
      assert.equal((await api.get('/v1/algorithms/ada/Summarizer')).status, 401);
      assert.equal((await api.get('/v1/algorithms/ada')).status, 401);

      const wrong = await api.post('/v1/algorithms/ada', { key: 'simAAAAAAAAAAAAAAAAAAAAAAAAA', body: { name: 'Wrong' } });
      assert.equal(wrong.status, 401, wrong.text);
      assert.equal(wrong.body.error.code, 2002);
      const wrongGet = await api.get('/v1/algorithms/ada/Summarizer', { auth: 'Simple simBBBBBBBBBBBBBBBBBBBBBBBBB' });
      assert.equal(wrongGet.status, 401);
      assert.equal(wrongGet.body.error.code, 2002);
      assert.equal((await api.get('/v1/algorithms/ada/Anonymous', { key: ada.key })).status, 404);
    });
  });

  describe(`environment ids are per cluster (${database})`, () => {
    let home: TestServer;
    let elsewhere: TestServer;
    before(async () => {
      // Two clusters are the point of this suite. When one fails to start, the other is stopped
      // by `after` too: left running, it would keep the file's process from ever ending.
      const started = await Promise.allSettled([startTestServer({ database }), startTestServer({ database })]);
      const [a, b] = started;
      if (a.status === 'fulfilled') home = a.value;
      if (b.status === 'fulfilled') elsewhere = b.value;
      for (const s of started) if (s.status === 'rejected') throw s.reason;
    });
    after(async () => {
      await Promise.all([home?.stop(), elsewhere?.stop()]);
    });

    test('an environment id of another server is refused with 422 and a message', async () => {
      const api = checkedClient(home.url);
      const other = checkedClient(elsewhere.url);
      const user = await createUser(api, home.adminKey, 'ada');
      const mine = await environmentNamed(api, user.key, 'python311');
      const theirs = await environmentNamed(other, elsewhere.adminKey, 'python311');
      assert.notEqual(theirs.id, mine.id, 'environment ids differ between clusters');
      assert.equal(theirs.environment_specification_id, mine.environment_specification_id, 'specification ids are the same');

      const res = await api.post('/v1/algorithms/ada', {
        key: user.key,
        body: { name: 'Migrated', settings: { algorithm_environment: theirs.id } },
      });
      assert.equal(res.status, 422, res.text);
      assert.match(res.body.error.message, /not an environment of this cluster/);
      const ok = await api.post('/v1/algorithms/ada', {
        key: user.key,
        body: { name: 'Migrated', settings: { algorithm_environment: mine.id } },
      });
      assert.equal(ok.status, 200, ok.text);
    });
  });
}
