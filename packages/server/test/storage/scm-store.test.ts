/** The store contract for external SCM configurations, grants and sources (domain/scm/ports.ts), against SQLite and PostgreSQL. */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { ExternalSource, ScmConfig } from '../../src/domain/scm/model.js';
import { migrateToLatest } from '../../src/storage/database.js';
import { SqlScmStore } from '../../src/storage/scm-store.js';
import { emptyDatabase, type OpenedDb } from '../support/database.js';
import { type DatabaseKind, DATABASES } from '../support/server.js';
import { insertAccount, insertAlgorithm } from '../support/store-records.js';

const at = (minute: number) => new Date(Date.UTC(2024, 0, 1, 0, minute)).toISOString();

function config(name: string, minute: number, extra: Partial<ScmConfig> = {}): ScmConfig {
  return {
    id: crypto.randomUUID(),
    name,
    provider: 'gitlab',
    isDefault: false,
    enabled: true,
    oauthClientId: `client-${name}`,
    oauthClientSecret: 'sealed-secret',
    urls: { web: `https://${name}`, api: `https://${name}/api/v4`, ssh: `ssh://git@${name}` },
    createdAt: at(minute),
    updatedAt: at(minute),
    ...extra,
  };
}

function source(algorithmId: string, configId: string, accountId: string | null): ExternalSource {
  return {
    algorithmId,
    configId,
    repositoryOwner: 'alice',
    repositoryName: 'project',
    httpsUrl: 'https://gitlab.example/alice/project.git',
    sshUrl: 'ssh://git@gitlab.example/alice/project.git',
    webUrl: 'https://gitlab.example/alice/project',
    webhookId: '42',
    webhookSecret: 'sealed-webhook-secret',
    accountId,
    lastDelivery: null,
    createdAt: at(5),
  };
}

for (const database of DATABASES) describe(`store contract: SCM (${database})`, () => contract(database));

function contract(database: DatabaseKind): void {
  let opened: OpenedDb;
  let scm: SqlScmStore;

  before(async () => {
    opened = await emptyDatabase(database);
    await migrateToLatest(opened.db);
    scm = new SqlScmStore(opened.db);
  });
  after(() => opened?.close());

  test('configurations: listed in creation order; one default at a time, on insert and on update; delete', async () => {
    const first = config('gitlab.example', 1, { isDefault: true });
    const second = config('gitea.example', 2, { provider: 'gitea', enabled: false });
    await scm.insertConfig(first);
    await scm.insertConfig(second);
    assert.deepEqual(await scm.listConfigs(), [first, second]);
    assert.deepEqual(await scm.findConfig(second.id), second);
    assert.equal(await scm.findConfig('no\u0000such'), undefined);

    const third = config('github.example', 3, { provider: 'github', isDefault: true });
    await scm.insertConfig(third);
    assert.deepEqual(
      (await scm.listConfigs()).map((c) => [c.name, c.isDefault]),
      [
        ['gitlab.example', false],
        ['gitea.example', false],
        ['github.example', true],
      ],
    );
    const promoted = { ...second, isDefault: true, enabled: true, oauthClientId: 'changed', updatedAt: at(4) };
    await scm.updateConfig(promoted);
    assert.deepEqual(await scm.findConfig(second.id), promoted);
    assert.deepEqual(
      (await scm.listConfigs()).filter((c) => c.isDefault).map((c) => c.id),
      [second.id],
    );

    assert.equal(await scm.deleteConfig(third.id), true);
    assert.equal(await scm.deleteConfig(third.id), false);
    assert.equal(await scm.findConfig(third.id), undefined);
  });

  test('authorizations: saved, replaced by a second save (creation time kept), deleted', async () => {
    const accountId = await insertAccount(opened.db, 'scmgrant');
    const cfg = config('grants.example', 10);
    await scm.insertConfig(cfg);
    const grant = {
      accountId,
      configId: cfg.id,
      accessToken: 'sealed-access',
      refreshToken: 'sealed-refresh',
      expiresAt: at(70),
      scmUsername: 'alice-at-forge',
      createdAt: at(10),
      updatedAt: at(10),
    };
    await scm.saveAuthorization(grant);
    assert.deepEqual(await scm.findAuthorization(accountId, cfg.id), grant);
    const refreshed = {
      ...grant,
      accessToken: 'sealed-access-2',
      refreshToken: null,
      expiresAt: null,
      createdAt: at(11),
      updatedAt: at(11),
    };
    await scm.saveAuthorization(refreshed);
    assert.deepEqual(await scm.findAuthorization(accountId, cfg.id), { ...refreshed, createdAt: at(10) });
    assert.equal(await scm.deleteAuthorization(accountId, cfg.id), true);
    assert.equal(await scm.deleteAuthorization(accountId, cfg.id), false);
    assert.equal(await scm.findAuthorization(accountId, cfg.id), undefined);
  });

  test('OAuth states: taken once; expired ones are dropped', async () => {
    const accountId = await insertAccount(opened.db, 'scmstate');
    const cfg = config('states.example', 20);
    await scm.insertConfig(cfg);
    const state = (hash: string, expiresAt: string) => ({
      stateHash: hash,
      browserHash: `browser-${hash}`,
      accountId,
      configId: cfg.id,
      codeVerifier: hash === 'a' ? null : 'sealed-verifier',
      returnTo: '/settings/scm',
      expiresAt,
    });
    for (const s of [state('a', at(30)), state('b', at(30)), state('c', at(10))]) await scm.insertOAuthState(s);
    assert.deepEqual(await scm.takeOAuthState('a'), state('a', at(30)));
    assert.equal(await scm.takeOAuthState('a'), undefined, 'single use');
    const racing = await Promise.all([scm.takeOAuthState('b'), scm.takeOAuthState('b')]);
    assert.equal(racing.filter(Boolean).length, 1, 'two callbacks with one state: one gets it');
    await scm.deleteExpiredOAuthStates(at(20));
    assert.equal(await scm.takeOAuthState('c'), undefined);
  });

  test('sources: inserted, counted per configuration, deliveries recorded; the creator’s account may go', async () => {
    const accountId = await insertAccount(opened.db, 'scmsource');
    const algorithmId = await insertAlgorithm(opened.db, accountId, 'scmsource', 'Hosted');
    const cfg = config('sources.example', 30);
    await scm.insertConfig(cfg);
    assert.equal(await scm.countSources(cfg.id), 0);
    const hosted = source(algorithmId, cfg.id, accountId);
    await scm.insertSource(hosted);
    assert.deepEqual(await scm.findSource(algorithmId), hosted);
    assert.equal(await scm.findSource('x\u0000'), undefined);
    assert.equal(await scm.countSources(cfg.id), 1);
    const delivery = { at: at(31), via: 'webhook' as const, commitSha: 'a'.repeat(40), result: 'build 1 queued' };
    await scm.recordDelivery(algorithmId, delivery);
    assert.deepEqual((await scm.findSource(algorithmId))?.lastDelivery, delivery);
  });

  test('webhook deliveries: a replayed id is refused; old ids are forgotten and only the newest are kept', async () => {
    const accountId = await insertAccount(opened.db, 'scmhooks');
    const algorithmId = await insertAlgorithm(opened.db, accountId, 'scmhooks', 'Hooked');
    const remember = (id: string, minute: number) => scm.rememberDelivery(algorithmId, id, at(minute), at(minute - 10), 3);
    assert.equal(await remember('d1', 40), true);
    assert.equal(await remember('d1', 41), false, 'a replay');
    assert.equal(await remember('d2', 42), true);
    assert.equal(await remember('d3', 43), true);
    assert.equal(await remember('d4', 44), true);
    assert.equal(await remember('d1', 45), true, 'only the newest three are kept: d1 was dropped');
    assert.equal(await remember('d4', 46), false);
    assert.equal(await remember('d4', 60), true, 'forgotten ten minutes on');
  });
}
