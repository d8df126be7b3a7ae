import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Client } from '../support/http.js';
import { assertError, checkedClient } from '../support/assertions.js';
import { createOrganization, createUser, type TestUser } from '../support/fixtures.js';
import { addMember } from '../support/organizations.js';
import { DATABASES, startTestServer, type TestServer } from '../support/server.js';

interface OrgType {
  id: string;
  name: string;
}

for (const database of DATABASES) {
  describe(`organizations (${database})`, () => {
    let srv: TestServer;
    let api: Client;
    let types: OrgType[];
    const typeId = (name: string) => types.find((t) => t.name === name)!.id;

    /** An organization with an owner, a member and an outsider, all with keys. */
    async function team(prefix: string): Promise<{ org: string; owner: TestUser; member: TestUser; outsider: TestUser }> {
      const owner = await createUser(api, srv.adminKey, `${prefix}_owner`);
      const member = await createUser(api, srv.adminKey, `${prefix}_member`);
      const outsider = await createUser(api, srv.adminKey, `${prefix}_outsider`);
      const org = `${prefix}_org`;
      await createOrganization(api, owner.key, org);
      await addMember(api, org, owner.key, member);
      return { org, owner, member, outsider };
    }

    const members = async (org: string, key: string) => (await api.get(`/v1/organizations/${org}/members`, { key })).body;

    before(async () => {
      srv = await startTestServer({ database });
      api = checkedClient(srv.url);
      types = (await api.get('/v1/organization/types', { key: srv.adminKey })).body;
    });
    after(() => srv.stop());

    test('GET /v1/organization/types lists basic, legacy and pro with ids', async () => {
      const user = await createUser(api, srv.adminKey, 'typer');
      const res = await api.get('/v1/organization/types', { key: user.key });
      assert.equal(res.status, 200, res.text);
      assert.ok(Array.isArray(res.body));
      assert.deepEqual(res.body.map((t: OrgType) => t.name).sort(), ['basic', 'legacy', 'pro']);
      for (const t of res.body) {
        assert.deepEqual(Object.keys(t).sort(), ['id', 'name']);
        assert.equal(typeof t.id, 'string');
        assert.ok(t.id.length > 0);
      }
      assert.equal(new Set(res.body.map((t: OrgType) => t.id)).size, 3, 'ids are distinct');
      assert.deepEqual((await api.get('/v1/organization/types', { key: user.key })).body, res.body, 'ids are stable');
      assertError(await api.get('/v1/organization/types'), 401);
    });

    test('creating an organization makes the caller its owner', async () => {
      const olga = await createUser(api, srv.adminKey, 'olga');
      const res = await api.post('/v1/organizations', {
        key: olga.key,
        body: {
          org_name: 'Acme',
          org_label: 'Acme Corp',
          org_contact_name: 'Olga',
          org_email: 'acme@example.test',
          org_url: 'https://acme.example.test',
          type_id: 'pro',
        },
      });
      assert.equal(res.status, 200, res.text);
      assert.match(res.body.id, /^[0-9a-f-]{36}$/);
      assert.deepEqual(
        { ...res.body, id: undefined },
        {
          id: undefined,
          org_name: 'Acme',
          org_label: 'Acme Corp',
          org_contact_name: 'Olga',
          org_email: 'acme@example.test',
          org_url: 'https://acme.example.test',
          type_id: typeId('pro'),
          self_link: `${srv.url}/v1/organizations/Acme`,
          resource_type: 'organization',
        },
      );
      assert.deepEqual(await members('Acme', olga.key), [{ username: 'olga', role: 'owner' }]);
      const got = await api.get('/v1/organizations/acme', { key: olga.key });
      assert.equal(got.status, 200, got.text);
      assert.deepEqual(got.body, res.body);

      // type_id may also be given as an id; the default is basic.
      const byId = await api.post('/v1/organizations', { key: olga.key, body: { org_name: 'ById', type_id: typeId('legacy') } });
      assert.equal(byId.status, 200, byId.text);
      assert.equal(byId.body.type_id, typeId('legacy'));
      const byDefault = await api.post('/v1/organizations', { key: olga.key, body: { org_name: 'ByDefault' } });
      assert.equal(byDefault.status, 200, byDefault.text);
      assert.equal(byDefault.body.type_id, typeId('basic'));

      assertError(await api.post('/v1/organizations', { key: olga.key, body: { org_name: 'BadType', type_id: 'gold' } }), 400);
      assertError(await api.post('/v1/organizations', { key: olga.key, body: { org_name: 'BadMail', org_email: 'nope' } }), 400);
      assertError(await api.post('/v1/organizations', { body: { org_name: 'Anon' } }), 401);
      assertError(await api.get('/v1/organizations/BadType', { key: srv.adminKey }), 404, 3100);
    });

    test('organization names follow the naming rules', async () => {
      const nina = await createUser(api, srv.adminKey, 'nina');
      for (const org_name of ['1org', '_org', 'o-rg', 'o rg', 'ö', 'o'.repeat(31)]) {
        const res = await api.post('/v1/organizations', { key: nina.key, body: { org_name } });
        assertError(res, 400);
        assert.match(res.body.error.message, /org_name/);
      }
      assertError(await api.post('/v1/organizations', { key: nina.key, body: {} }), 400);
      assertError(await api.post('/v1/organizations', { key: nina.key, body: { org_name: 5 } }), 400);
      const longest = await api.post('/v1/organizations', { key: nina.key, body: { org_name: `O${'r'.repeat(29)}` } });
      assert.equal(longest.status, 200, longest.text);
    });

    test('a name taken by a user or an organization is 409 code 3101', async () => {
      const taken = await createUser(api, srv.adminKey, 'taken_user');
      await createOrganization(api, taken.key, 'TakenOrg');
      for (const org_name of ['taken_user', 'TAKEN_USER', 'TakenOrg', 'takenorg']) {
        assertError(await api.post('/v1/organizations', { key: taken.key, body: { org_name } }), 409, 3101);
      }
      // …and the other way round: a user cannot take an organization's name.
      assertError(await api.post('/v1/users', { key: srv.adminKey, body: { username: 'takenORG', email: 'to@example.test' } }), 409, 3003);
      assert.deepEqual(await members('TakenOrg', taken.key), [{ username: 'taken_user', role: 'owner' }]);
    });

    test('members and admins see an organization; others get 403; unknown is 404 code 3100', async () => {
      const { org, owner, member, outsider } = await team('see');
      for (const key of [owner.key, member.key, srv.adminKey]) {
        const res = await api.get(`/v1/organizations/${org}`, { key });
        assert.equal(res.status, 200, res.text);
        assert.equal(res.body.org_name, org);
      }
      assertError(await api.get(`/v1/organizations/${org}`, { key: outsider.key }), 403, 2001);
      assertError(await api.get(`/v1/organizations/${org}/members`, { key: outsider.key }), 403, 2001);
      assertError(await api.get(`/v1/organizations/${org}`), 401);
      assertError(await api.get('/v1/organizations/no_such_org', { key: outsider.key }), 404, 3100);
      assertError(await api.get('/v1/organizations/no_such_org', { key: srv.adminKey }), 404, 3100);
      // A user is not an organization.
      assertError(await api.get(`/v1/organizations/${owner.name}`, { key: owner.key }), 404, 3100);
    });

    test('owners and admins update an organization (204); members and others get 403', async () => {
      const { org, owner, member, outsider } = await team('upd');
      const put = await api.put(`/v1/organizations/${org}`, { key: owner.key, body: { org_label: 'New Label', type_id: 'pro' } });
      assert.equal(put.status, 204, put.text);
      assert.equal(put.text, '');
      let got = (await api.get(`/v1/organizations/${org}`, { key: member.key })).body;
      assert.equal(got.org_label, 'New Label');
      assert.equal(got.type_id, typeId('pro'));
      assert.equal(got.org_email, `${org}@example.test`, 'omitted fields are kept');
      assert.equal(got.org_contact_name, 'Ada');

      assert.equal(
        (await api.put(`/v1/organizations/${org}`, { key: srv.adminKey, body: { org_url: 'https://upd.example.test' } })).status,
        204,
      );
      got = (await api.get(`/v1/organizations/${org}`, { key: owner.key })).body;
      assert.equal(got.org_url, 'https://upd.example.test');
      assert.equal(got.org_label, 'New Label');

      assertError(await api.put(`/v1/organizations/${org}`, { key: member.key, body: { org_label: 'Member' } }), 403, 2001);
      assertError(await api.put(`/v1/organizations/${org}`, { key: outsider.key, body: { org_label: 'Outsider' } }), 403, 2001);
      assertError(await api.put(`/v1/organizations/${org}`, { key: owner.key, body: { org_name: 'Renamed' } }), 400);
      assertError(await api.put(`/v1/organizations/${org}`, { key: owner.key, body: { type_id: 'gold' } }), 400);
      assertError(await api.put(`/v1/organizations/${org}`, { key: owner.key, body: { org_label: 5 } }), 400);
      assertError(await api.put('/v1/organizations/no_such_org', { key: owner.key, body: { org_label: 'X' } }), 404, 3100);
      assert.equal((await api.get(`/v1/organizations/${org}`, { key: owner.key })).body.org_label, 'New Label');
    });

    test("members are listed as [{username, role}]; PUT invites a user (202) or sets a member's role (204)", async () => {
      const { org, owner, member, outsider } = await team('mem');
      const extra = await createUser(api, srv.adminKey, 'mem_extra');
      assert.deepEqual(await members(org, member.key), [
        { username: member.name, role: 'member' },
        { username: owner.name, role: 'owner' },
      ]);

      // An empty JSON object means "member" as well; the user is invited, not yet a member.
      const invited = await api.put(`/v1/organizations/${org}/members/${extra.name}`, { key: owner.key, body: {} });
      assert.equal(invited.status, 202, invited.text);
      assert.deepEqual(
        { ...invited.body, created_at: undefined },
        { org_name: org, username: extra.name, role: 'member', invited_by: owner.name, created_at: undefined },
      );
      assert.match(invited.body.created_at, /^\d{4}-\d\d-\d\dT/);
      assert.equal((await members(org, owner.key)).length, 2);
      assert.deepEqual((await api.get(`/v1/organizations/${org}/invitations`, { key: owner.key })).body, [invited.body]);
      const accepted = await api.post(`/v1/users/${extra.name}/invitations/${org}`, { key: extra.key });
      assert.equal(accepted.status, 200, accepted.text);
      assert.deepEqual(accepted.body, { org_name: org, username: extra.name, role: 'member' });
      assert.deepEqual(
        (await members(org, owner.key)).find((m: { username: string }) => m.username === extra.name),
        { username: extra.name, role: 'member' },
      );
      assert.deepEqual((await api.get(`/v1/organizations/${org}/invitations`, { key: owner.key })).body, []);
      // A member's role changes at once.
      // Promote, then demote.
      const promote = await api.put(`/v1/organizations/${org}/members/${extra.name}`, { key: owner.key, body: { role: 'owner' } });
      assert.equal(promote.status, 204, promote.text);
      assert.equal((await members(org, owner.key)).find((m: { username: string }) => m.username === extra.name).role, 'owner');
      assert.equal((await api.put(`/v1/organizations/${org}`, { key: extra.key, body: { org_label: 'By new owner' } })).status, 204);
      const demote = await api.put(`/v1/organizations/${org}/members/${extra.name}`, { key: owner.key, body: { role: 'member' } });
      assert.equal(demote.status, 204, demote.text);
      assert.deepEqual(await members(org, owner.key), [
        { username: extra.name, role: 'member' },
        { username: member.name, role: 'member' },
        { username: owner.name, role: 'owner' },
      ]);

      assertError(await api.put(`/v1/organizations/${org}/members/${outsider.name}`, { key: member.key }), 403, 2001);
      assertError(await api.put(`/v1/organizations/${org}/members/${outsider.name}`, { key: outsider.key }), 403, 2001);
      assertError(await api.put(`/v1/organizations/${org}/members/no_such_user`, { key: owner.key }), 404, 3000);
      assertError(await api.put(`/v1/organizations/${org}/members/${outsider.name}`, { key: owner.key, body: { role: 'boss' } }), 400);
      assertError(await api.put(`/v1/organizations/no_such_org/members/${outsider.name}`, { key: owner.key }), 404, 3100);
      // The only owner cannot demote themself.
      assertError(await api.put(`/v1/organizations/${org}/members/${owner.name}`, { key: owner.key, body: { role: 'member' } }), 409);
      assert.equal((await members(org, owner.key)).length, 3);

      // An admin manages members of any organization, and adds directly.
      assert.equal((await api.put(`/v1/organizations/${org}/members/${outsider.name}`, { key: srv.adminKey })).status, 204);
      assert.equal((await api.get(`/v1/organizations/${org}`, { key: outsider.key })).status, 200);
    });

    test('owners remove members, a member may leave, the last owner cannot be removed', async () => {
      const { org, owner, member, outsider } = await team('rm');
      const other = await createUser(api, srv.adminKey, 'rm_other');
      await addMember(api, org, owner.key, other);

      assertError(await api.delete(`/v1/organizations/${org}/members/${other.name}`, { key: member.key }), 403, 2001);
      assertError(await api.delete(`/v1/organizations/${org}/members/${other.name}`, { key: outsider.key }), 403, 2001);
      const removed = await api.delete(`/v1/organizations/${org}/members/${other.name}`, { key: owner.key });
      assert.equal(removed.status, 204, removed.text);
      assert.equal(removed.text, '');
      assertError(await api.get(`/v1/organizations/${org}`, { key: other.key }), 403, 2001);

      const left = await api.delete(`/v1/organizations/${org}/members/${member.name}`, { key: member.key });
      assert.equal(left.status, 204, left.text);
      assert.deepEqual(await members(org, owner.key), [{ username: owner.name, role: 'owner' }]);
      assertError(await api.delete(`/v1/organizations/${org}/members/${member.name}`, { key: owner.key }), 404);

      for (const key of [owner.key, srv.adminKey]) {
        const last = await api.delete(`/v1/organizations/${org}/members/${owner.name}`, { key });
        assertError(last, 409);
        assert.match(last.body.error.message, /owner/);
      }
      assert.deepEqual(await members(org, owner.key), [{ username: owner.name, role: 'owner' }]);

      // With a second owner the first may go.
      await addMember(api, org, owner.key, outsider, 'owner');
      assert.equal((await api.delete(`/v1/organizations/${org}/members/${owner.name}`, { key: owner.key })).status, 204);
      assert.deepEqual(await members(org, outsider.key), [{ username: outsider.name, role: 'owner' }]);
      assertError(await api.get(`/v1/organizations/${org}`, { key: owner.key }), 403, 2001);
    });

    test('an organization owns algorithms: members create them, others get 403, ex-members lose access', async () => {
      const { org, owner, member, outsider } = await team('algo');
      const created = await api.post(`/v1/algorithms/${org}`, { key: member.key, body: { name: 'OrgAlgo' } });
      assert.equal(created.status, 200, created.text);
      assert.equal(created.body.owner, org);
      assert.equal(created.body.name, 'OrgAlgo');
      assert.equal((await api.get(`/v1/algorithms/${org}/OrgAlgo`, { key: owner.key })).status, 200);
      assert.equal((await api.get(`/v1/algorithms/${org}/OrgAlgo`, { key: member.key })).status, 200);

      assertError(await api.post(`/v1/algorithms/${org}`, { key: outsider.key, body: { name: 'Intruder' } }), 403, 2001);
      assertError(await api.get(`/v1/algorithms/${org}/OrgAlgo`, { key: outsider.key }), 404, 1001);
      assertError(await api.get(`/v1/algorithms/${org}/Intruder`, { key: owner.key }), 404, 1001);

      assert.equal((await api.delete(`/v1/organizations/${org}/members/${member.name}`, { key: owner.key })).status, 204);
      const again = await api.post(`/v1/algorithms/${org}`, { key: member.key, body: { name: 'AfterLeaving' } });
      assert.ok([403, 404].includes(again.status), again.text);
      const read = await api.get(`/v1/algorithms/${org}/OrgAlgo`, { key: member.key });
      assert.ok([403, 404].includes(read.status), read.text);
      const change = await api.put(`/v1/algorithms/${org}/OrgAlgo`, { key: member.key, body: { details: { label: 'Mine now' } } });
      assert.ok([403, 404].includes(change.status), change.text);
      const remove = await api.delete(`/v1/algorithms/${org}/OrgAlgo`, { key: member.key });
      assert.ok([403, 404].includes(remove.status), remove.text);
      assert.equal((await api.get(`/v1/algorithms/${org}/OrgAlgo`, { key: owner.key })).status, 200);
    });

    test('owners create keys for their organization; members cannot', async () => {
      const { org, owner, member } = await team('okey');
      const created = await api.post(`/v1/users/${org}/keys`, { key: owner.key, body: {} });
      assert.equal(created.status, 200, created.text);
      assertError(await api.post(`/v1/users/${org}/keys`, { key: member.key, body: {} }), 403, 2001);
      assertError(await api.post(`/v1/users/${org}/keys`, { key: owner.key, body: { kind: 'admin' } }), 403, 2001);
      assertError(await api.post(`/v1/users/${org}/keys`, { key: srv.adminKey, body: { kind: 'admin' } }), 400);
      const list = await api.get(`/v1/users/${org}/keys`, { key: owner.key });
      assert.deepEqual(
        list.body.results.map((k: { id: string }) => k.id),
        [created.body.id],
      );
      // The organization's key acts for the organization.
      const algo = await api.post(`/v1/algorithms/${org}`, { key: created.body.key, body: { name: 'ByOrgKey' } });
      assert.equal(algo.status, 200, algo.text);
      assertError(await api.post('/v1/organizations', { key: created.body.key, body: { org_name: 'Nested' } }), 403, 2001);
    });

    test('deleting an organization (204) deletes its algorithms and keys; only owners and admins may', async () => {
      const { org, owner, member, outsider } = await team('del');
      assert.equal((await api.post(`/v1/algorithms/${org}`, { key: member.key, body: { name: 'OrgAlgo' } })).status, 200);
      const orgKey = await api.post(`/v1/users/${org}/keys`, { key: owner.key, body: {} });
      assert.equal((await api.get(`/v1/organizations/${org}`, { key: orgKey.body.key })).status, 200);

      assertError(await api.delete(`/v1/organizations/${org}`, { key: member.key }), 403, 2001);
      assertError(await api.delete(`/v1/organizations/${org}`, { key: outsider.key }), 403, 2001);
      assertError(await api.delete(`/v1/organizations/${org}`), 401);
      assert.equal((await api.get(`/v1/algorithms/${org}/OrgAlgo`, { key: owner.key })).status, 200);

      const del = await api.delete(`/v1/organizations/${org}`, { key: owner.key });
      assert.equal(del.status, 204, del.text);
      assert.equal(del.text, '');
      assertError(await api.get(`/v1/organizations/${org}`, { key: owner.key }), 404, 3100);
      assertError(await api.delete(`/v1/organizations/${org}`, { key: owner.key }), 404, 3100);
      assertError(await api.get(`/v1/organizations/${org}`, { key: orgKey.body.key }), 401, 2002);

      // A new organization of the same name starts empty.
      await createOrganization(api, owner.key, org);
      assertError(await api.get(`/v1/algorithms/${org}/OrgAlgo`, { key: owner.key }), 404, 1001);
      const list = await api.get(`/v1/algorithms/${org}`, { key: owner.key });
      assert.equal(list.status, 200, list.text);
      assert.deepEqual(list.body.results, []);
      assert.deepEqual(await members(org, owner.key), [{ username: owner.name, role: 'owner' }]);

      // An admin may delete any organization.
      assert.equal((await api.delete(`/v1/organizations/${org}`, { key: srv.adminKey })).status, 204);
      // The users themselves are untouched.
      assert.equal((await api.get(`/v1/users/${member.name}`, { key: srv.adminKey })).status, 200);
    });

    test('only admins list organizations, paged', async () => {
      const lister = await createUser(api, srv.adminKey, 'org_lister');
      await createOrganization(api, lister.key, 'ListMe');
      assertError(await api.get('/v1/organizations', { key: lister.key }), 403, 2001);
      const page = await api.get('/v1/organizations?limit=1000', { key: srv.adminKey });
      assert.equal(page.status, 200, page.text);
      assert.equal(page.body.marker, null);
      assert.equal(page.body.next_link, null);
      assert.ok(page.body.results.some((o: { org_name: string }) => o.org_name === 'ListMe'));
      for (const o of page.body.results) assert.equal(o.resource_type, 'organization');
      assertError(await api.get('/v1/organizations?limit=0', { key: srv.adminKey }), 400, 5003);
      assertError(await api.get('/v1/organizations?marker=non%20sense', { key: srv.adminKey }), 400, 5002);
    });
  });
}
