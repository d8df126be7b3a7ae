/**
 * The build seeds: sbt with each environment's Scala compiler (scripts/install/scala.sh) and the
 * Java template's Maven plugins (scripts/install/java.sh), which a new layer starts from instead
 * of downloading them again. Every tenant's layer is copied from them, so a build that could write
 * one would plant code in every later build of the node.
 * Here a build.sbt, evaluated by sbt in both build steps (the networked one filling the layer and
 * the offline compile), tries to overwrite the sbt seed's files, plant one beside them and replace
 * the sbt wrapper; a pom.xml runs an Ant task planting a file in the Maven seed. Each write is
 * refused inside and the host's copies stay as they were.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { environmentId } from '../support/algorithms.js';
import { createUser, type TestUser } from '../support/fixtures.js';
import { announcedBuildId, clone, commitAndPush, gitUrl, removeClone } from '../support/git.js';
import { client, type Client } from '../support/http.js';
import { startTestServer, type TestServer } from '../support/server.js';

const TOOLS = '/opt/algohost/tools';
const SBT_SEED = `${TOOLS}/sbt-seed/scala-2.13`;
const MAVEN_SEED = `${TOOLS}/maven-seed`;
const SBT_TARGETS = [`${SBT_SEED}/.made-for`, `${SBT_SEED}/planted`, `${TOOLS}/sbt/bin/sbt`];

/** A setting whose value sbt computes while loading the build: it tries each write and says how it went. */
const SBT_POISON = `
name := {
  Seq(${SBT_TARGETS.map((t) => JSON.stringify(t)).join(', ')}).foreach { t =>
    val r = scala.util.Try(java.nio.file.Files.write(java.nio.file.Paths.get(t), "planted".getBytes))
    println(s"ALGOHOST-POISON $t \${if (r.isSuccess) "written" else "refused"}")
  }
  "poison"
}
`;

/** An Ant task, run by `package` in both build steps, writing a file into the Maven seed. */
const MAVEN_PLANT = `<plugins><plugin><groupId>org.apache.maven.plugins</groupId><artifactId>maven-antrun-plugin</artifactId><version>3.1.0</version>
  <executions><execution><id>plant</id><phase>compile</phase><goals><goal>run</goal></goals>
  <configuration><target><echo file="${MAVEN_SEED}/planted" message="planted"/></target></configuration>
  </execution></executions></plugin></plugins>`;

const digest = (file: string) => (fs.existsSync(file) ? crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex') : 'absent');
const missing = (seed: string, script: string) => (fs.existsSync(`${seed}/.made-for`) ? false : `no seed in ${seed} (${script} makes it)`);

describe('the build seeds are read-only to builds', () => {
  let srv: TestServer;
  let api: Client;
  before(async () => {
    srv = await startTestServer();
    api = client(srv.url);
  });
  after(() => srv?.stop());

  /** Creates owner/name in the environment, edits its template with `edit`, pushes; the build's status and log. */
  async function pushEdited(owner: TestUser, name: string, environment: string, edit: (dir: string) => void) {
    const env = await environmentId(api, owner.key, environment);
    const created = await api.post(`/v1/algorithms/${owner.name}`, {
      key: owner.key,
      body: { name, settings: { algorithm_environment: env } },
    });
    assert.equal(created.status, 200, created.text);
    const { dir } = await clone(gitUrl(srv.url, owner.name, owner.key, owner.name, name));
    try {
      edit(dir);
      const push = await commitAndPush(dir, 'plant in the seed', { wait: true });
      const id = announcedBuildId(push.stderr);
      assert.ok(id, push.stderr);
      const build = await api.get(`/v1/algorithms/${owner.name}/${name}/builds/${id}`, { key: owner.key });
      const logs = await api.get(`/v1/algorithms/${owner.name}/${name}/builds/${id}/logs`, { key: owner.key });
      return { status: build.body.status as string, logs: logs.body.logs as string };
    } finally {
      await removeClone(dir);
    }
  }

  test(
    "a build.sbt writing the sbt seed or the sbt wrapper is refused in both steps; the host's files are unchanged",
    { skip: missing(SBT_SEED, 'scripts/install/scala.sh') },
    async () => {
      const before = SBT_TARGETS.map(digest);
      const mallory = await createUser(api, srv.adminKey, 'mallory_sbt');
      const { logs } = await pushEdited(mallory, 'Poison', 'scala-2.13', (dir) =>
        fs.appendFileSync(path.join(dir, 'build.sbt'), SBT_POISON),
      );
      assert.match(logs, /copied the sbt seed \(sbt [\d.]+ scala 2\.13\.\d+\) into the layer/, logs);
      for (const t of SBT_TARGETS) {
        const lines = logs.split('\n').filter((l) => l.includes(`ALGOHOST-POISON ${t} `));
        // Once while the layer is filled, once in the offline compile.
        assert.ok(lines.length >= 2, `the build.sbt ran in both steps for ${t}:\n${logs}`);
        for (const l of lines) assert.match(l, /refused$/, l);
      }
      assert.deepEqual(SBT_TARGETS.map(digest), before, 'the seed and the wrapper are as they were');
    },
  );

  test(
    'a pom.xml whose build writes into the Maven seed fails; the seed is unchanged',
    { skip: missing(MAVEN_SEED, 'scripts/install/java.sh') },
    async () => {
      const before = digest(`${MAVEN_SEED}/.made-for`);
      const mallory = await createUser(api, srv.adminKey, 'mallory_mvn');
      const { status, logs } = await pushEdited(mallory, 'Plant', 'java17', (dir) => {
        const pom = path.join(dir, 'pom.xml');
        fs.writeFileSync(pom, fs.readFileSync(pom, 'utf8').replace('</pluginManagement>', `</pluginManagement>${MAVEN_PLANT}`));
      });
      assert.match(logs, /copied the Maven seed \(pom [0-9a-f]+\) into the layer/, logs);
      assert.equal(status, 'failed', logs);
      assert.match(logs, /maven-seed\/planted: Read-only file system/, logs);
      assert.equal(fs.existsSync(`${MAVEN_SEED}/planted`), false);
      assert.equal(digest(`${MAVEN_SEED}/.made-for`), before);
    },
  );
});
