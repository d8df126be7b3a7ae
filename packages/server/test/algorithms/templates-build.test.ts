/**
 * Issue 3: "the template of every language environment builds as created". For every
 * environment of the catalog, a new algorithm (whose repository holds the template at once) is
 * compiled without any push, and the build must succeed.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { readCatalog } from '../../src/storage/catalog-files.js';
import { createUser, type TestUser } from '../support/fixtures.js';
import { client, type Client } from '../support/http.js';
import { startTestServer, type TestServer } from '../support/server.js';

const environments = readCatalog().environments;

/** The Scala library jars in the target/lib of every build of the algorithm `algorithmId` under `dataDir`. */
function scalaLibraries(dataDir: string, algorithmId: string): string[] {
  return (fs.readdirSync(dataDir, { recursive: true }) as string[])
    .filter(
      (p) =>
        p.includes(algorithmId) && path.basename(path.dirname(p)) === 'lib' && path.basename(path.dirname(path.dirname(p))) === 'target',
    )
    .map((p) => path.basename(p))
    .filter((name) => name.startsWith('scala'));
}

describe('the template of every language environment builds as created', () => {
  let srv: TestServer;
  let api: Client;
  let owner: TestUser;
  before(async () => {
    srv = await startTestServer();
    api = client(srv.url);
    owner = await createUser(api, srv.adminKey, 'templates');
  });
  after(() => srv?.stop());

  for (const spec of environments) {
    test(`${spec.name} (${spec.language}, template ${spec.template}) builds as created`, async () => {
      const envs = await api.get(`/v1/algorithm-environments/edge/languages/${spec.language}/environments`, { key: owner.key });
      assert.equal(envs.status, 200, envs.text);
      const env = (envs.body as { id: string; name: string }[]).find((e) => e.name === spec.name);
      assert.ok(env, `environment ${spec.name} is not listed for ${spec.language}: ${envs.text}`);

      const name = `T_${spec.name.replace(/[^A-Za-z0-9]/g, '_')}`;
      const created = await api.post(`/v1/algorithms/${owner.name}`, {
        key: owner.key,
        body: { name, settings: { algorithm_environment: env.id } },
      });
      assert.equal(created.status, 200, created.text);

      const compiled = await api.post(`/v1/algorithms/${owner.name}/${name}/compile`, { key: owner.key, body: {} });
      assert.equal(compiled.status, 200, compiled.text);
      const compilation = compiled.body.compilation as { successful: boolean; output: string };
      assert.equal(
        compilation.successful,
        true,
        `the ${spec.template} template did not build in ${spec.name} (build ${compiled.body.build?.status}):\n${compilation.output}`,
      );
      if (spec.runtime.name === 'scala' && fs.existsSync(`/opt/algohost/tools/sbt-seed/${spec.name}/.made-for`)) {
        // A new layer starts from the environment's seed (scripts/install/scala.sh), not a download.
        assert.match(compilation.output, /copied the sbt seed \(sbt [\d.]+ scala [\d.]+\) into the layer/, compilation.output);
      }
      if (spec.runtime.name === 'scala') {
        // The Scala the algorithm runs on is the library its build put beside it (target/lib):
        // that of the version the environment declares.
        const jars = scalaLibraries(srv.dataDir, created.body.id as string);
        const [major] = spec.runtime.version.split('.');
        const library = major === '2' ? 'scala-library-' : 'scala3-library_3-';
        const pattern = new RegExp(`^${library}${spec.runtime.version.replace('.', '\\.')}\\.[0-9]+\\.jar$`);
        assert.ok(
          jars.some((j) => pattern.test(j)),
          `${spec.name} declares Scala ${spec.runtime.version}; the build's target/lib: ${jars.join(', ')}`,
        );
      }
    });
  }
});
