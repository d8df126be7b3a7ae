/** `algo scm …` against a real server: admins add, disable and delete configurations; users list them and check their token status. */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { createUser } from '../../server/test/support/fixtures.js';
import { client } from '../../server/test/support/http.js';
import { startTestServer, type TestServer } from '../../server/test/support/server.js';
import { algo, assertOk, assertOneLineFailure, makeHome } from './support/run-cli.js';

describe('algo scm', () => {
  let srv: TestServer;
  let home: string;
  const run = (args: string[]) => algo(args, { home });

  before(async () => {
    srv = await startTestServer();
    const alice = await createUser(client(srv.url), srv.adminKey, 'alice');
    home = await makeHome();
    assertOk(await run(['auth', '--server', srv.url, '--key', alice.key, '--username', 'alice']), 'auth');
    assertOk(await run(['auth', '--profile', 'admin', '--server', srv.url, '--key', srv.adminKey, '--username', 'admin']), 'auth admin');
  });
  after(async () => {
    await srv.stop();
    await fs.promises.rm(home, { recursive: true, force: true });
  });

  test('add, list, status, disable, delete; a user may not add', async () => {
    const added = await run([
      'scm',
      'add',
      '--profile',
      'admin',
      '--provider',
      'gitea',
      '--web',
      'https://git.example.org',
      '--client-id',
      'cid',
      '--client-secret',
      'shh',
      '--json',
    ]);
    assertOk(added, 'scm add');
    const config = JSON.parse(added.stdout) as { id: string; urls: { api: string } };
    assert.equal(config.urls.api, 'https://git.example.org/api/v1');
    assert.ok(!added.stdout.includes('shh'));

    const list = await run(['scm', 'list']);
    assertOk(list, 'scm list');
    const lines = list.stdout.trimEnd().split('\n');
    assert.match(lines[0]!, /^ID +PROVIDER +NAME +DEFAULT +ENABLED +WEB$/);
    assert.match(lines[1]!, /^internal +internal +\S+ +yes +yes /);
    assert.match(lines[2]!, new RegExp(`^${config.id} +gitea +git\\.example\\.org +yes +https://git\\.example\\.org$`));

    const status = await run(['scm', 'status', config.id]);
    assertOk(status, 'scm status');
    assert.match(status.stdout, /^authorization: unauthorized$/m);
    assert.match(status.stderr, /Settings, Source Code Management/);

    assertOk(await run(['scm', 'disable', '--profile', 'admin', config.id]), 'scm disable');
    assert.match((await run(['scm', 'list'])).stdout, new RegExp(`${config.id} .* no `));
    assertOneLineFailure(
      await run(['scm', 'add', '--provider', 'gitea', '--web', 'https://x.example', '--client-id', 'c', '--client-secret', 's']),
      /admin/,
    );
    assertOneLineFailure(await run(['scm', 'status', '00000000-0000-4000-8000-000000000000']), /no SCM configuration/);
    assertOk(await run(['scm', 'delete', '--profile', 'admin', config.id]), 'scm delete');
    assert.doesNotMatch((await run(['scm', 'list'])).stdout, new RegExp(config.id));
  });
});
