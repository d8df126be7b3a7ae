/**
 * R against a local CRAN-style repository (ALGOHOST_CRAN_REPOSITORY=file://…), with no network:
 * the test builds the repository from the package sources in test/fixtures/cran/ (R CMD build +
 * tools::write_PACKAGES), then a push installs a package from it, a push that changes only code
 * reuses the dependency layer, and a package the repository lacks fails the build naming it.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { environmentId } from '../support/algorithms.js';
import { createUser } from '../support/fixtures.js';
import { selectedFixtures } from '../support/fixtures-algorithms.js';
import { announcedBuildId, clone, commitAndPush, gitUrl, removeClone, replaceWorkingFiles } from '../support/git.js';
import { client, type Client } from '../support/http.js';
import { artifactOf } from '../support/runners.js';
import { makeTempDir, startTestServer, type TestServer } from '../support/server.js';

const exec = promisify(execFile);
const CRAN_SOURCES = fileURLToPath(new URL('../../../../test/fixtures/cran/', import.meta.url));
const fixture = selectedFixtures().find((f) => f.language === 'r');

/** Builds every package source under test/fixtures/cran/ into `<repo>/src/contrib`, readable by the sandbox user. */
async function buildRepository(): Promise<string> {
  const repo = await makeTempDir('algohost-cran-');
  const contrib = path.join(repo, 'src', 'contrib');
  fs.mkdirSync(contrib, { recursive: true });
  for (const pkg of fs.readdirSync(CRAN_SOURCES)) {
    if (!fs.existsSync(path.join(CRAN_SOURCES, pkg, 'DESCRIPTION'))) continue;
    await exec('R', ['CMD', 'build', '--no-manual', '--no-build-vignettes', path.join(CRAN_SOURCES, pkg)], { cwd: contrib });
  }
  await exec('Rscript', ['--vanilla', '-e', 'tools::write_PACKAGES(".", type = "source")'], { cwd: contrib });
  // Builds run as an unprivileged user: the repository must be readable by it.
  await exec('chmod', ['-R', 'a+rX', repo]);
  return repo;
}

describe(
  'R builds against a local CRAN-style repository (offline)',
  { skip: !fixture && 'the r fixture is not selected (ALGOHOST_TEST_LANGUAGES)' },
  () => {
    let srv: TestServer;
    let api: Client;
    let repo: string;
    before(async () => {
      repo = await buildRepository();
      srv = await startTestServer({ env: { ALGOHOST_CRAN_REPOSITORY: pathToFileURL(repo).href } });
      api = client(srv.url);
    });
    after(async () => {
      await srv?.stop();
      if (repo) await fs.promises.rm(repo, { recursive: true, force: true });
    });

    test('installs from the local repository, reuses the layer for a code-only push, names a package it lacks', async () => {
      const fx = fixture!;
      const owner = await createUser(api, srv.adminKey, 'u_r_offline');
      const name = fx.name;
      const created = await api.post(`/v1/algorithms/${owner.name}`, {
        key: owner.key,
        body: { name, settings: { algorithm_environment: await environmentId(api, owner.key, fx.environment) } },
      });
      assert.equal(created.status, 200, created.text);
      const { dir, result } = await clone(gitUrl(srv.url, owner.name, owner.key, owner.name, name));
      assert.equal(result.code, 0, result.stderr);
      const entry = path.join(dir, 'src', `${name}.r`);
      const push = async (message: string) => {
        const out = await commitAndPush(dir, message, { wait: true });
        const id = announcedBuildId(out.stderr);
        assert.ok(id, out.stderr);
        const build = await api.get(`/v1/algorithms/${owner.name}/${name}/builds/${id}`, { key: owner.key });
        const logs = await api.get(`/v1/algorithms/${owner.name}/${name}/builds/${id}/logs`, { key: owner.key });
        assert.equal(logs.status, 200);
        return { id, status: build.body.status as string, commit: build.body.commit_sha as string, logs: logs.body.logs as string };
      };
      try {
        // The fixture, using a package that only the local repository has.
        replaceWorkingFiles(dir, fx.hello);
        fs.writeFileSync(
          path.join(dir, 'packages.txt'),
          '# from the local repository\nalgohostgreet\njsonlite  # on the build machine already\n',
        );
        fs.writeFileSync(entry, 'apply <- function(input) {\n  algohostgreet::greet(input)\n}\n');
        const first = await push('uses algohostgreet');
        assert.equal(first.status, 'succeeded', first.logs);
        assert.match(first.logs, /Installing algohostgreet from file:\/\//, first.logs);
        assert.match(first.logs, /DONE \(algohostgreet\)/, first.logs);

        // The artifact runs against its layer.
        const { tree: artifact, layerDir } = await srv.server.services.builder.readArtifact(
          await artifactOf(srv, { build_id: first.id, environment: fx.environment, commit_sha: first.commit }),
        );
        const library = path.join(layerDir!, 'library');
        assert.ok(fs.existsSync(path.join(library, 'algohostgreet', 'DESCRIPTION')), `algohostgreet should be in ${library}`);
        const run = await exec('Rscript', ['--vanilla', '-e', `source("src/${name}.r"); cat(apply("world"))`], {
          cwd: artifact,
          env: { ...process.env, R_LIBS: library },
        });
        assert.equal(run.stdout, 'hello world');

        // Only code changes: the layer is reused, nothing is installed.
        fs.writeFileSync(entry, 'apply <- function(input) {\n  algohostgreet::greet(input, prefix = "hi")\n}\n');
        const second = await push('code only');
        assert.equal(second.status, 'succeeded', second.logs);
        assert.match(second.logs, /Dependencies unchanged: reusing layer/, second.logs);
        assert.doesNotMatch(second.logs, /Installing/, second.logs);

        // A package the repository lacks: the build fails and its log names it.
        fs.appendFileSync(path.join(dir, 'packages.txt'), 'algohostmissing\n');
        const third = await push('missing package');
        assert.equal(third.status, 'failed', third.logs);
        assert.match(third.logs, /could not install algohostmissing from file:\/\//, third.logs);

        const list = await api.get(`/v1/algorithms/${owner.name}/${name}/builds`, { key: owner.key });
        assert.deepEqual(
          list.body.results.map((b: { build_id: string; status: string }) => [b.build_id, b.status]),
          [
            [third.id, 'failed'],
            [second.id, 'succeeded'],
            [first.id, 'succeeded'],
          ],
        );
      } finally {
        await removeClone(dir);
      }
    });
  },
);
