/**
 * Spec endpoints 3 (languages), 4 (environments of a language) and 5 (template download),
 * with Simple keys and Bearer JWTs; environment ids are stable across restarts of one
 * cluster and differ between clusters (docs/compatibility.md §9.6).
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
import { createUser, type TestUser } from '../support/fixtures.js';
import { DATABASES, makeTempDir, startTestServer, type TestServer } from '../support/server.js';

const CATALOG_DIR = fileURLToPath(new URL('../../catalog/', import.meta.url));
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const LANGUAGES = '/v1/algorithm-environments/edge/languages';
const environmentsPath = (language: string) => `${LANGUAGES}/${encodeURIComponent(language)}/environments`;
const templatePath = (specId: string) => `/v1/algorithm-environments/edge/environment-specifications/${specId}/template`;

interface CatalogEnvironment {
  name: string;
  language: string;
  template: string;
}
const CATALOG_ENVIRONMENTS = JSON.parse(fs.readFileSync(path.join(CATALOG_DIR, 'environments.json'), 'utf8')) as CatalogEnvironment[];

interface LanguageJson {
  name: string;
  display_name: string;
  configuration: string;
}
interface EnvironmentJson {
  id: string;
  name: string;
  environment_specification_id: string;
  display_name: string;
  description: string;
  created_at: string;
  language: LanguageJson;
  machine_type: string;
}

async function allEnvironments(api: Client, key: string): Promise<EnvironmentJson[]> {
  const languages = await api.get(LANGUAGES, { key });
  assert.equal(languages.status, 200, languages.text);
  const out: EnvironmentJson[] = [];
  for (const l of languages.body as LanguageJson[]) {
    const res = await api.get(environmentsPath(l.name), { key });
    assert.equal(res.status, 200, res.text);
    out.push(...(res.body as EnvironmentJson[]));
  }
  return out;
}

/** Files of a template as a new algorithm named `name` would get them (paths only). */
function templatePaths(template: string, name: string): string[] {
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

function listFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (rel: string) => {
    for (const entry of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const relPath = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) walk(relPath);
      else out.push(relPath);
    }
  };
  walk('');
  return out.sort();
}

for (const database of DATABASES) {
  describe(`environments (${database})`, () => {
    let srv: TestServer;
    let api: Client;
    let ada: TestUser;
    let tmp: string;

    before(async () => {
      srv = await startTestServer({ database });
      api = checkedClient(srv.url);
      ada = await createUser(api, srv.adminKey, 'ada');
      tmp = await makeTempDir('algohost-templates-');
    });
    after(async () => {
      await srv?.stop();
      if (tmp) await fs.promises.rm(tmp, { recursive: true, force: true });
    });

    test('endpoint 3 lists languages with a JSON configuration string; all seven languages are there', async () => {
      const res = await api.get(LANGUAGES, { key: ada.key });
      assert.equal(res.status, 200, res.text);
      assert.match(res.headers.get('content-type') ?? '', /application\/json/);
      const languages = res.body as LanguageJson[];
      assert.ok(Array.isArray(languages));
      assert.equal(new Set(languages.map((l) => l.name)).size, languages.length, 'language names are unique');
      for (const l of languages) {
        assert.deepEqual(Object.keys(l).sort(), ['configuration', 'display_name', 'name']);
        assert.equal(typeof l.name, 'string');
        assert.equal(typeof l.display_name, 'string');
        assert.equal(typeof l.configuration, 'string');
        const conf = JSON.parse(l.configuration);
        assert.equal(conf.display_name, l.display_name, l.name);
        assert.ok(Array.isArray(conf.req_files), `${l.name}: req_files is an array`);
        for (const f of conf.req_files) assert.equal(typeof f, 'string');
        assert.ok(Array.isArray(conf.artifacts), `${l.name}: artifacts is an array`);
        for (const a of conf.artifacts) {
          assert.deepEqual(Object.keys(a).sort(), ['destination', 'source'], l.name);
          assert.equal(typeof a.source, 'string');
          assert.equal(typeof a.destination, 'string');
        }
      }
      const families: [string, RegExp][] = [
        ['Python', /^Python\b/],
        ['R', /^R\b/],
        ['Java', /^Java\b/],
        ['Scala', /^Scala\b/],
        ['Ruby', /^Ruby\b/],
        ['Rust', /^Rust\b/],
        ['JavaScript', /^JavaScript\b/],
      ];
      for (const [family, pattern] of families) {
        assert.ok(
          languages.some((l) => pattern.test(l.display_name)),
          `a ${family} language is listed: ${languages.map((l) => l.display_name).join(', ')}`,
        );
      }
      const python = languages.find((l) => l.name === 'python3');
      assert.ok(python);
      assert.deepEqual(JSON.parse(python.configuration).req_files, ['requirements.txt']);
    });

    test('endpoints 3 and 4 accept a Bearer JWT from POST /v1/auth/token, and refuse no or bad credentials', async () => {
      const created = await api.post('/v1/users', {
        key: srv.adminKey,
        body: { username: 'webby', email: 'webby@example.test', password: 'correct horse battery staple' },
      });
      assert.equal(created.status, 200, created.text);
      const token = await api.post('/v1/auth/token', { body: { username: 'webby', password: 'correct horse battery staple' } });
      assert.equal(token.status, 200, token.text);
      assert.equal(token.body.token_type, 'Bearer');
      const bearer = `Bearer ${token.body.token}`;

      const withKey = await api.get(LANGUAGES, { key: ada.key });
      const withToken = await api.get(LANGUAGES, { auth: bearer });
      assert.equal(withToken.status, 200, withToken.text);
      assert.deepEqual(withToken.body, withKey.body);
      const envsWithToken = await api.get(environmentsPath('python3'), { auth: bearer });
      assert.equal(envsWithToken.status, 200, envsWithToken.text);
      assert.deepEqual(envsWithToken.body, (await api.get(environmentsPath('python3'), { key: ada.key })).body);
      // The bare key (no scheme) of the Python client and CLI works too.
      assert.equal((await api.get(LANGUAGES, { auth: ada.key })).status, 200);

      assert.equal((await api.get(LANGUAGES)).status, 401);
      assert.equal((await api.get(environmentsPath('python3'))).status, 401);
      const badToken = await api.get(LANGUAGES, { auth: `${bearer}x` });
      assert.equal(badToken.status, 401, badToken.text);
      assert.equal((await api.get(LANGUAGES, { auth: 'Bearer not.a.jwt' })).status, 401);
      const wrongPassword = await api.post('/v1/auth/token', { body: { username: 'webby', password: 'wrong password here' } });
      assert.equal(wrongPassword.status, 401);
    });

    test('endpoint 4 returns a plain array of environments with the fields of the spec', async () => {
      const languages = (await api.get(LANGUAGES, { key: ada.key })).body as LanguageJson[];
      const all: EnvironmentJson[] = [];
      for (const language of languages) {
        const res = await api.get(environmentsPath(language.name), { key: ada.key });
        assert.equal(res.status, 200, res.text);
        assert.ok(Array.isArray(res.body), `${language.name}: an array, not a page`);
        for (const e of res.body as EnvironmentJson[]) {
          assert.match(e.id, UUID);
          assert.match(e.environment_specification_id, UUID);
          assert.equal(typeof e.name, 'string');
          assert.ok(e.display_name.length > 0);
          assert.ok(e.description.length > 0);
          assert.match(e.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+$/, 'ISO 8601, fractional seconds, no zone');
          assert.ok(!Number.isNaN(Date.parse(`${e.created_at}Z`)));
          assert.deepEqual(e.language, language, 'the language object is the one of endpoint 3');
          assert.ok(e.machine_type === 'CPU' || e.machine_type === 'GPU', e.machine_type);
          all.push(e);
        }
      }
      assert.equal(all.length, CATALOG_ENVIRONMENTS.length, 'every catalog environment is listed once');
      assert.equal(new Set(all.map((e) => e.id)).size, all.length, 'environment ids are unique');
      assert.equal(new Set(all.map((e) => e.environment_specification_id)).size, all.length, 'specification ids are unique');
      assert.ok(
        all.every((e) => e.id !== e.environment_specification_id),
        'an environment id is not its specification id',
      );
      for (const spec of CATALOG_ENVIRONMENTS) {
        const e = all.find((x) => x.name === spec.name);
        assert.ok(e, `${spec.name} is listed`);
        assert.equal(e.language.name, spec.language);
      }
    });

    test('the predefined environments of the spec exist with the right machine type', async () => {
      const expected: [string, string, 'CPU' | 'GPU'][] = [
        ['python37', 'python3', 'CPU'],
        ['python37-gpu', 'python3', 'GPU'],
        ['python27', 'python2', 'CPU'],
        ['python27-cuda90-cudnn7', 'python2', 'GPU'],
      ];
      for (const [name, language, machine] of expected) {
        const res = await api.get(environmentsPath(language), { key: ada.key });
        assert.equal(res.status, 200, res.text);
        const env = (res.body as EnvironmentJson[]).find((e) => e.name === name);
        assert.ok(env, `${name} is an environment of ${language}`);
        assert.equal(env.machine_type, machine, name);
      }
    });

    test('endpoint 4 with an unknown language is 404 with a JSON error', async () => {
      for (const language of ['cobol', 'python', 'PYTHON3']) {
        const res = await api.get(environmentsPath(language), { key: ada.key });
        assert.equal(res.status, 404, `${language}: ${res.text}`);
        assert.equal(res.body.error.code, 4001);
        assert.match(res.body.error.message, new RegExp(language));
      }
    });

    test('endpoint 5 serves each template as a gzipped tar without authentication', async () => {
      const envs = await allEnvironments(api, ada.key);
      for (const env of envs) {
        const spec = CATALOG_ENVIRONMENTS.find((e) => e.name === env.name)!;
        const res = await fetch(srv.url + templatePath(env.environment_specification_id));
        assert.equal(res.status, 200, `${env.name}: ${res.status}`);
        assert.equal(res.headers.get('content-type'), 'application/gzip');
        const body = Buffer.from(await res.arrayBuffer());
        assert.deepEqual([...body.subarray(0, 2)], [0x1f, 0x8b], `${env.name}: gzip magic`);

        const archive = path.join(tmp, `${env.name}.tar.gz`);
        const dir = path.join(tmp, env.name);
        fs.writeFileSync(archive, body);
        fs.mkdirSync(dir);
        execFileSync('tar', ['-xzf', archive, '-C', dir], { stdio: 'pipe' });
        assert.deepEqual(listFiles(dir), templatePaths(spec.template, 'Algorithm'), env.name);
        const conf = JSON.parse(fs.readFileSync(path.join(dir, 'algorithmia.conf'), 'utf8'));
        assert.equal(conf.algoname, 'Algorithm', env.name);
        for (const file of listFiles(dir)) {
          assert.ok(!file.includes('__ALGO_NAME'), `${env.name}: ${file}`);
          const text = fs.readFileSync(path.join(dir, file), 'utf8');
          assert.ok(!text.includes('{{ALGO_') && !text.includes('__ALGO_NAME'), `${env.name}: ${file} has a placeholder`);
        }
      }
      const python = envs.find((e) => e.name === 'python311')!;
      assert.ok(fs.existsSync(path.join(tmp, 'python311', 'src', 'Algorithm.py')));
      assert.ok(fs.existsSync(path.join(tmp, 'python311', 'requirements.txt')));

      // A client that always sends its key (the CLI with a profile) gets the same archive.
      const withKey = await fetch(srv.url + templatePath(python.environment_specification_id), {
        headers: { authorization: `Simple ${ada.key}` },
      });
      assert.equal(withKey.status, 200);
      const again = await fetch(srv.url + templatePath(python.environment_specification_id));
      assert.deepEqual(Buffer.from(await withKey.arrayBuffer()), Buffer.from(await again.arrayBuffer()));
    });

    test('endpoint 5 with an unknown specification id is 404 with a JSON error', async () => {
      const envs = await allEnvironments(api, ada.key);
      for (const id of [crypto.randomUUID(), 'not-a-uuid', envs[0]!.id]) {
        const res = await api.get(templatePath(id));
        assert.equal(res.status, 404, `${id}: ${res.text}`);
        assert.match(res.headers.get('content-type') ?? '', /application\/json/);
        assert.equal(typeof res.body.error.code, 'number');
        assert.ok(res.body.error.message.includes(id));
      }
    });

    test('environment ids, specification ids and creation times stay the same across a restart', async () => {
      const before = await allEnvironments(api, ada.key);
      srv = await srv.restart();
      api = checkedClient(srv.url);
      const afterRestart = await allEnvironments(api, ada.key);
      assert.deepEqual(afterRestart, before);
      // An algorithm created with an id from before the restart is accepted.
      const env = before.find((e) => e.name === 'python37')!;
      const res = await api.post('/v1/algorithms/ada', {
        key: ada.key,
        body: { name: 'AfterRestart', settings: { algorithm_environment: env.id } },
      });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.settings.algorithm_environment, env.id);
    });
  });

  describe(`environments of two clusters (${database})`, () => {
    let one: TestServer;
    let two: TestServer;
    before(async () => {
      // Two clusters are the point of this suite.
      [one, two] = await Promise.all([startTestServer({ database }), startTestServer({ database })]);
    });
    after(async () => {
      await Promise.all([one?.stop(), two?.stop()]);
    });

    test('environment ids differ between servers; specification ids and templates do not', async () => {
      const a = await allEnvironments(checkedClient(one.url), one.adminKey);
      const b = await allEnvironments(checkedClient(two.url), two.adminKey);
      assert.equal(a.length, b.length);
      for (const envA of a) {
        const envB = b.find((e) => e.name === envA.name);
        assert.ok(envB, envA.name);
        assert.notEqual(envA.id, envB.id, `${envA.name}: ids are per cluster`);
        assert.equal(envA.environment_specification_id, envB.environment_specification_id, envA.name);
      }
      const ids = new Set(a.map((e) => e.id));
      assert.ok(
        b.every((e) => !ids.has(e.id)),
        'no id of one cluster is an id on the other',
      );
    });
  });
}
