/**
 * The SQL stores against both databases: migrations apply to an empty database (twice), and
 * one contract suite runs against SQLite and PostgreSQL for each store of src/storage/: here
 * accounts, keys, cluster settings, algorithms and environments; the other files of this folder
 * hold the rest, one per area.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { migrateToLatest } from '../../src/storage/database.js';
import { SqlAccountStore, SqlClusterSettingsStore, SqlKeyStore } from '../../src/storage/account-store.js';
import { SqlAlgorithmStore, SqlEnvironmentStore } from '../../src/storage/algorithm-store.js';
import { DomainError } from '../../src/domain/errors.js';
import { parsePageRequest, type PageRequest } from '../../src/domain/pagination.js';
import type { Account } from '../../src/domain/accounts/model.js';
import type { StoredKey } from '../../src/domain/accounts/ports.js';
import type { Algorithm } from '../../src/domain/algorithms/model.js';
import { emptyDatabase, type OpenedDb } from '../support/database.js';
import { DATABASES } from '../support/server.js';

const TABLES = ['accounts', 'algorithms', 'api_keys', 'cluster_settings', 'environments', 'memberships'];

let clock = Date.parse('2024-01-01T00:00:00.000Z');
/** Strictly increasing timestamps, so orderings by creation time are well defined. */
const nextTime = () => new Date((clock += 1000)).toISOString();

function account(name: string, kind: Account['kind'] = 'user', extra: Partial<Account> = {}): Account {
  const at = nextTime();
  return {
    id: crypto.randomUUID(),
    name,
    kind,
    email: kind === 'user' ? `${name.toLowerCase()}@example.test` : null,
    fullname: kind === 'user' ? `${name} Person` : null,
    companyName: null,
    companyRole: null,
    passwordHash: null,
    isAdmin: false,
    organization: kind === 'organization' ? { label: `${name} Inc`, contactName: 'Ada', url: null, typeId: 'basic' } : null,
    createdAt: at,
    updatedAt: at,
    ...extra,
  };
}

function key(owner: Account, description = 'test key'): StoredKey {
  return {
    id: crypto.randomUUID(),
    accountId: owner.id,
    kind: 'standard',
    capabilities: ['manage_algorithms', 'call_algorithms'],
    prefix: 'simABCD',
    description,
    createdAt: nextTime(),
    keyHash: crypto.randomBytes(32).toString('hex'),
  };
}

function algorithm(owner: Account, name: string, extra: Partial<Algorithm['settings']> = {}): Algorithm {
  const at = nextTime();
  return {
    id: crypto.randomUUID(),
    ownerId: owner.id,
    ownerName: owner.name,
    name,
    details: { label: `${name} label`, summary: null, tagline: 'tag' },
    settings: {
      algorithmCallability: 'private',
      sourceVisibility: 'closed',
      license: 'apl',
      royaltyMicrocredits: 0,
      networkAccess: 'isolated',
      pipelineEnabled: false,
      insightsEnabled: false,
      environmentName: 'python311',
      ...extra,
    },
    createdAt: at,
    updatedAt: at,
  };
}

async function rejectsWithConflict(p: Promise<unknown>, code: number): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof DomainError, `a DomainError, not ${String(err)}`);
    assert.equal(err.kind, 'conflict');
    assert.equal(err.code, code);
    return true;
  });
}

/** Follows markers page by page and returns the names on each page. */
async function pages<T>(
  fetch: (page: PageRequest) => Promise<{ items: T[]; nextMarker: string | null }>,
  limit: number,
  nameOf: (x: T) => string,
) {
  const out: string[][] = [];
  let marker: string | undefined;
  for (;;) {
    const page = await fetch(parsePageRequest(String(limit), marker));
    out.push(page.items.map(nameOf));
    if (page.nextMarker === null) return out;
    assert.equal(typeof page.nextMarker, 'string');
    marker = page.nextMarker;
    assert.ok(out.length < 100, 'paging ends');
  }
}

for (const database of DATABASES) {
  describe(`migrations (${database})`, () => {
    let opened: OpenedDb;
    before(async () => {
      opened = await emptyDatabase(database);
    });
    after(() => opened?.close());

    test('apply to an empty database, again without effect, and create every table', async () => {
      await migrateToLatest(opened.db);
      const tables = (await opened.db.introspection.getTables()).map((t) => t.name).sort();
      assert.deepEqual(
        tables.filter((t) => TABLES.includes(t)),
        TABLES,
      );
      await migrateToLatest(opened.db);
      const again = (await opened.db.introspection.getTables()).map((t) => t.name).sort();
      assert.deepEqual(again, tables);
      // The schema is usable after the second run.
      const accounts = new SqlAccountStore(opened.db);
      await accounts.insert(account('Migrated'));
      assert.equal((await accounts.findByName('migrated'))?.name, 'Migrated');
    });
  });

  describe(`store contract (${database})`, () => {
    let opened: OpenedDb;
    let accounts: SqlAccountStore;
    let keys: SqlKeyStore;
    let algorithms: SqlAlgorithmStore;
    let environments: SqlEnvironmentStore;
    let settings: SqlClusterSettingsStore;

    before(async () => {
      opened = await emptyDatabase(database);
      await migrateToLatest(opened.db);
      accounts = new SqlAccountStore(opened.db);
      keys = new SqlKeyStore(opened.db);
      algorithms = new SqlAlgorithmStore(opened.db);
      environments = new SqlEnvironmentStore(opened.db);
      settings = new SqlClusterSettingsStore(opened.db);
    });
    after(() => opened?.close());

    test('accounts: insert, then find by name in any case, by id and by email, with every field kept', async () => {
      const ada = account('AdaL', 'user', { companyName: 'Engines', companyRole: 'Engineer', passwordHash: 'scrypt$x$y', isAdmin: true });
      await accounts.insert(ada);
      for (const name of ['AdaL', 'adal', 'ADAL']) assert.deepEqual(await accounts.findByName(name), ada, name);
      assert.deepEqual(await accounts.findById(ada.id), ada);
      assert.deepEqual(await accounts.findByEmail('adal@example.test'), ada);
      assert.equal(await accounts.findByName('nobody'), undefined);
      assert.equal(await accounts.findById(crypto.randomUUID()), undefined);

      const org = account('AdaOrg', 'organization');
      await accounts.insert(org);
      assert.deepEqual(await accounts.findByName('adaorg'), org);

      const changed = { ...ada, fullname: 'Ada Lovelace', email: 'ada.l@example.test', isAdmin: false, updatedAt: nextTime() };
      await accounts.update(changed);
      assert.deepEqual(await accounts.findByName('adal'), changed);
      assert.equal(await accounts.findByEmail('adal@example.test'), undefined);
    });

    test('accounts: a name taken in any letter case is a DomainError conflict (3003)', async () => {
      await accounts.insert(account('Taken'));
      await rejectsWithConflict(accounts.insert(account('Taken')), 3003);
      await rejectsWithConflict(accounts.insert(account('TAKEN')), 3003);
      await rejectsWithConflict(accounts.insert(account('taken', 'organization')), 3003);
      assert.equal((await accounts.findByName('taken'))?.name, 'Taken');
    });

    test('accounts: listing pages by name regardless of case, one kind at a time', async () => {
      for (const name of ['pg_charlie', 'Pg_Alpha', 'pg_echo', 'PG_delta', 'pg_bravo']) await accounts.insert(account(name));
      await accounts.insert(account('pg_org', 'organization'));
      const all = await pages(
        (p) => accounts.list('user', p),
        2,
        (a) => a.name,
      );
      const names = all.flat().filter((n) => n.toLowerCase().startsWith('pg_'));
      assert.deepEqual(names, ['Pg_Alpha', 'pg_bravo', 'pg_charlie', 'PG_delta', 'pg_echo']);
      assert.ok(all.every((page) => page.length <= 2));
      assert.ok(
        all.slice(0, -1).every((page) => page.length === 2),
        'only the last page may be short',
      );
      const flat = all.flat();
      assert.equal(new Set(flat).size, flat.length, 'no account appears twice');
      assert.deepEqual(
        flat,
        [...flat].sort((a, b) => (a.toLowerCase() < b.toLowerCase() ? -1 : 1)),
      );
      const orgs = (
        await pages(
          (p) => accounts.list('organization', p),
          50,
          (a) => a.name,
        )
      ).flat();
      assert.ok(orgs.includes('pg_org'));
      assert.ok(!flat.includes('pg_org'));
      // A page exactly as large as what is left has no next marker.
      const exact = await accounts.list('user', { limit: flat.length, after: undefined });
      assert.equal(exact.items.length, flat.length);
      assert.equal(exact.nextMarker, null);
    });

    test('memberships: add, read the role, list members by name, remove', async () => {
      const org = account('MemberOrg', 'organization');
      const zed = account('zed');
      const amy = account('Amy');
      for (const a of [org, zed, amy]) await accounts.insert(a);
      await accounts.addMember(org.id, zed.id, 'owner', nextTime());
      await accounts.addMember(org.id, amy.id, 'member', nextTime());
      assert.equal(await accounts.membershipRole(org.id, zed.id), 'owner');
      assert.equal(await accounts.membershipRole(org.id, amy.id), 'member');
      const members = await accounts.listMembers(org.id);
      assert.deepEqual(
        members.map((m) => [m.user.name, m.role]),
        [
          ['Amy', 'member'],
          ['zed', 'owner'],
        ],
      );
      assert.deepEqual(members[0]!.user, amy);
      await accounts.removeMember(org.id, amy.id);
      assert.equal(await accounts.membershipRole(org.id, amy.id), undefined);
    });

    test('keys: insert, find by hash, list in creation order, delete only from the owning account', async () => {
      const owner = account('KeyOwner');
      const other = account('KeyOther');
      await accounts.insert(owner);
      await accounts.insert(other);
      const first = key(owner, 'first');
      const second = key(owner, 'second');
      await keys.insert(first);
      await keys.insert(second);
      const { keyHash: _hash, ...publicFirst } = first;
      assert.deepEqual(await keys.findByHash(first.keyHash), publicFirst);
      assert.equal(await keys.findByHash('0'.repeat(64)), undefined);
      assert.deepEqual(
        (await keys.listForAccount(owner.id)).map((k) => k.description),
        ['first', 'second'],
      );
      assert.equal(await keys.delete(other.id, first.id), false, "another account's key is not deleted");
      assert.ok(await keys.findByHash(first.keyHash));
      assert.equal(await keys.delete(owner.id, first.id), true);
      assert.equal(await keys.delete(owner.id, first.id), false);
      assert.equal(await keys.findByHash(first.keyHash), undefined);
      assert.deepEqual(
        (await keys.listForAccount(owner.id)).map((k) => k.id),
        [second.id],
      );
    });

    test('algorithms: insert, find by name in any case, update, with every field kept', async () => {
      const owner = account('AlgoOwner');
      await accounts.insert(owner);
      const a = algorithm(owner, 'MixedCase', { networkAccess: 'full', pipelineEnabled: true, royaltyMicrocredits: 25 });
      await algorithms.insert(a);
      for (const name of ['MixedCase', 'mixedcase', 'MIXEDCASE']) assert.deepEqual(await algorithms.find(owner.id, name), a, name);
      assert.equal(await algorithms.find(owner.id, 'Other'), undefined);

      const changed: Algorithm = {
        ...a,
        details: { label: 'New label', summary: 'Now with summary', tagline: null },
        settings: {
          ...a.settings,
          algorithmCallability: 'public',
          insightsEnabled: true,
          pipelineEnabled: false,
          environmentName: 'python37',
        },
        updatedAt: nextTime(),
      };
      await algorithms.update(changed);
      assert.deepEqual(await algorithms.find(owner.id, 'mixedcase'), changed);
    });

    test('algorithms: one name per owner regardless of case is a DomainError conflict (1002); other owners may reuse it', async () => {
      const owner = account('DupOwner');
      const other = account('DupOther');
      await accounts.insert(owner);
      await accounts.insert(other);
      const original = algorithm(owner, 'Twin');
      await algorithms.insert(original);
      await rejectsWithConflict(algorithms.insert(algorithm(owner, 'Twin')), 1002);
      await rejectsWithConflict(algorithms.insert(algorithm(owner, 'tWIN')), 1002);
      assert.deepEqual(await algorithms.find(owner.id, 'twin'), original, 'the first one is unchanged');
      await algorithms.insert(algorithm(other, 'Twin'));
      assert.equal((await algorithms.find(other.id, 'Twin'))?.ownerName, 'DupOther');
    });

    test('algorithms: listing by owner pages by name; without includePrivate only public ones', async () => {
      const owner = account('ListOwner');
      const neighbour = account('ListNeighbour');
      await accounts.insert(owner);
      await accounts.insert(neighbour);
      const names = ['delta', 'Alpha', 'echo', 'Charlie', 'bravo', 'foxtrot', 'Golf'];
      const publicNames = new Set(['Alpha', 'echo', 'Golf']);
      for (const name of names) {
        await algorithms.insert(algorithm(owner, name, { algorithmCallability: publicNames.has(name) ? 'public' : 'private' }));
      }
      await algorithms.insert(algorithm(neighbour, 'aardvark', { algorithmCallability: 'public' }));

      const sorted = ['Alpha', 'bravo', 'Charlie', 'delta', 'echo', 'foxtrot', 'Golf'];
      const all = await pages(
        (page) => algorithms.listByOwner(owner.id, { includePrivate: true, page }),
        3,
        (a) => a.name,
      );
      assert.deepEqual(all, [['Alpha', 'bravo', 'Charlie'], ['delta', 'echo', 'foxtrot'], ['Golf']]);
      assert.deepEqual(all.flat(), sorted);
      const onlyPublic = await pages(
        (page) => algorithms.listByOwner(owner.id, { includePrivate: false, page }),
        2,
        (a) => a.name,
      );
      assert.deepEqual(onlyPublic, [['Alpha', 'echo'], ['Golf']]);
      const exact = await algorithms.listByOwner(owner.id, { includePrivate: true, page: { limit: 7, after: undefined } });
      assert.equal(exact.items.length, 7);
      assert.equal(exact.nextMarker, null);
      assert.deepEqual((await algorithms.listAllByOwner(owner.id)).map((a) => a.name).sort(), [...names].sort());
      await algorithms.delete((await algorithms.find(owner.id, 'delta'))!.id);
      assert.equal(await algorithms.find(owner.id, 'delta'), undefined);
      assert.equal((await algorithms.listAllByOwner(owner.id)).length, names.length - 1);
    });

    test('deleting an account deletes its memberships, keys and algorithms', async () => {
      const org = account('CascadeOrg', 'organization');
      const user = account('CascadeUser');
      const stays = account('CascadeStays');
      for (const a of [org, user, stays]) await accounts.insert(a);
      await accounts.addMember(org.id, user.id, 'owner', nextTime());
      await accounts.addMember(org.id, stays.id, 'member', nextTime());
      const userKey = key(user);
      const staysKey = key(stays);
      await keys.insert(userKey);
      await keys.insert(staysKey);
      await algorithms.insert(algorithm(user, 'UserAlgo'));
      await algorithms.insert(algorithm(org, 'OrgAlgo'));
      await algorithms.insert(algorithm(stays, 'StaysAlgo'));

      await accounts.delete(user.id);
      assert.equal(await accounts.findById(user.id), undefined);
      assert.equal(await accounts.membershipRole(org.id, user.id), undefined);
      assert.deepEqual(
        (await accounts.listMembers(org.id)).map((m) => m.user.name),
        ['CascadeStays'],
      );
      assert.deepEqual(await keys.listForAccount(user.id), []);
      assert.equal(await keys.findByHash(userKey.keyHash), undefined);
      assert.deepEqual(await algorithms.listAllByOwner(user.id), []);
      assert.equal(await algorithms.find(user.id, 'UserAlgo'), undefined);

      await accounts.delete(org.id);
      assert.equal(await accounts.membershipRole(org.id, stays.id), undefined);
      assert.deepEqual(await algorithms.listAllByOwner(org.id), []);

      // Nothing of the remaining account was touched.
      assert.ok(await keys.findByHash(staysKey.keyHash));
      assert.equal((await algorithms.find(stays.id, 'StaysAlgo'))?.name, 'StaysAlgo');
      assert.equal((await accounts.findByName('cascadestays'))?.id, stays.id);
    });

    test('lookups and markers holding NUL (which PostgreSQL text cannot hold) find nothing or are refused', async () => {
      const owner = account('NulOwner');
      await accounts.insert(owner);
      assert.equal(await accounts.findByName('NulOwner\u0000'), undefined);
      assert.equal(await accounts.findByEmail('nulowner@example.test\u0000'), undefined);
      assert.equal(await algorithms.find(owner.id, 'a\u0000b'), undefined);
      const isInvalidMarker = (err: unknown) => err instanceof DomainError && err.kind === 'invalid' && err.code === 5002;
      await assert.rejects(accounts.list('user', { limit: 5, after: 'a\u0000' }), isInvalidMarker);
      await assert.rejects(
        algorithms.listByOwner(owner.id, { includePrivate: true, page: { limit: 5, after: 'a\u0000' } }),
        isInvalidMarker,
      );
    });

    test('cluster settings: setIfAbsent keeps the first value', async () => {
      assert.equal(await settings.get('jwt_secret_test'), undefined);
      assert.equal(await settings.setIfAbsent('jwt_secret_test', 'first'), 'first');
      assert.equal(await settings.setIfAbsent('jwt_secret_test', 'second'), 'first');
      assert.equal(await settings.get('jwt_secret_test'), 'first');
      const racing = await Promise.all(['a', 'b', 'c', 'd'].map((v) => settings.setIfAbsent('raced', v)));
      assert.equal(new Set(racing).size, 1, `every caller sees the same winner: ${racing.join(', ')}`);
      assert.equal(await settings.get('raced'), racing[0]);
    });

    test('environments: ensure registers new names once and keeps ids and creation times stable', async () => {
      const first = await environments.ensure(['env_a', 'env_b'], () => crypto.randomUUID(), '2024-02-01T00:00:00.000Z');
      const a = first.get('env_a');
      const b = first.get('env_b');
      assert.ok(a && b);
      assert.notEqual(a.id, b.id);
      assert.equal(a.createdAt, '2024-02-01T00:00:00.000Z');

      const second = await environments.ensure(['env_a', 'env_b', 'env_c'], () => crypto.randomUUID(), '2024-03-01T00:00:00.000Z');
      assert.deepEqual(second.get('env_a'), a);
      assert.deepEqual(second.get('env_b'), b);
      assert.equal(second.get('env_c')?.createdAt, '2024-03-01T00:00:00.000Z');

      // Two nodes registering the same new name at once agree on one id.
      const [x, y] = await Promise.all([
        environments.ensure(['env_d'], () => crypto.randomUUID(), '2024-04-01T00:00:00.000Z'),
        environments.ensure(['env_d'], () => crypto.randomUUID(), '2024-04-01T00:00:00.000Z'),
      ]);
      assert.deepEqual(x.get('env_d'), y.get('env_d'));
      const third = await environments.ensure(['env_d'], () => crypto.randomUUID(), '2024-05-01T00:00:00.000Z');
      assert.deepEqual(third.get('env_d'), x.get('env_d'));
      assert.deepEqual(third.get('env_a'), a, 'names not asked for are still returned unchanged');
    });
  });
}
