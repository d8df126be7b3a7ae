/**
 * The sbt seed (scripts/install/scala.sh): sbt and each environment's Scala compiler, which a new
 * Scala layer starts from instead of downloading them again. Every tenant's layer is copied from
 * it, so a build that could write it would plant code in every later Scala build of the node.
 * Here a build.sbt, evaluated by sbt in both build steps (the networked one filling the layer and
 * the offline compile), tries to overwrite the seed's files, plant one beside them and replace
 * the sbt wrapper: each write is refused inside, the host's copies stay as they were, and the
 * next tenant's build still starts from the seed.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { environmentId } from './support/algorithms.js';
import { createUser } from './support/fixtures.js';
import { announcedBuildId, clone, commitAndPush, gitUrl, removeClone } from './support/git.js';
import { client, type Client } from './support/http.js';
import { startTestServer, type TestServer } from './support/server.js';

const TOOLS = '/opt/algohost/tools';
const SEED = `${TOOLS}/sbt-seed/scala-2.13`;
const TARGETS = [`${SEED}/.made-for`, `${SEED}/planted`, `${TOOLS}/sbt/bin/sbt`];

/** A setting whose value sbt computes while loading the build: it tries each write and says how it went. */
const POISON = `
name := {
  Seq(${TARGETS.map((t) => JSON.stringify(t)).join(', ')}).foreach { t =>
    val r = scala.util.Try(java.nio.file.Files.write(java.nio.file.Paths.get(t), "planted".getBytes))
    println(s"ALGOHOST-POISON $t \${if (r.isSuccess) "written" else "refused"}")
  }
  "poison"
}
`;

const digest = (file: string) => (fs.existsSync(file) ? crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex') : 'absent');

describe(
  'the sbt seed is read-only to Scala builds',
  { skip: fs.existsSync(`${SEED}/.made-for`) ? false : `no sbt seed in ${SEED} (scripts/install/scala.sh makes it)` },
  () => {
    let srv: TestServer;
    let api: Client;
    before(async () => {
      srv = await startTestServer();
      api = client(srv.url);
    });
    after(() => srv?.stop());

    test("a build.sbt writing the seed or the sbt wrapper is refused in both steps; the host's files are unchanged", async () => {
      const before = TARGETS.map(digest);
      const mallory = await createUser(api, srv.adminKey, 'mallory_sbt');
      const env = await environmentId(api, mallory.key, 'scala-2.13');
      const created = await api.post(`/v1/algorithms/${mallory.name}`, {
        key: mallory.key,
        body: { name: 'Poison', settings: { algorithm_environment: env } },
      });
      assert.equal(created.status, 200, created.text);
      const { dir } = await clone(gitUrl(srv.url, mallory.name, mallory.key, mallory.name, 'Poison'));
      let logs: string;
      try {
        fs.appendFileSync(path.join(dir, 'build.sbt'), POISON);
        const push = await commitAndPush(dir, 'poison the seed', { wait: true });
        const id = announcedBuildId(push.stderr);
        assert.ok(id, push.stderr);
        const res = await api.get(`/v1/algorithms/${mallory.name}/Poison/builds/${id}/logs`, { key: mallory.key });
        logs = res.body.logs as string;
      } finally {
        await removeClone(dir);
      }
      assert.match(logs, /copied the sbt seed \(sbt [\d.]+ scala 2\.13\.\d+\) into the layer/, logs);
      for (const t of TARGETS) {
        const lines = logs.split('\n').filter((l) => l.includes(`ALGOHOST-POISON ${t} `));
        // Once while the layer is filled, once in the offline compile.
        assert.ok(lines.length >= 2, `the build.sbt ran in both steps for ${t}:\n${logs}`);
        for (const l of lines) assert.match(l, /refused$/, l);
      }
      assert.deepEqual(TARGETS.map(digest), before, 'the seed and the wrapper are as they were');
      assert.equal(fs.existsSync(`${SEED}/planted`), false);
    });
  },
);
