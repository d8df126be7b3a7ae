/**
 * What the interface specification and the OpenAPI document promise, checked exactly: the User
 * of endpoint 6 with all seven fields, 405 with Allow for every method a documented path does
 * not take, and the documented forms of the paging parameters.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertError } from '../support/assertions.js';
import { createUser } from '../support/fixtures.js';
import { rawRequest } from '../support/data.js';
import { client, request, type Client } from '../support/http.js';
import { startTestServer, type TestServer } from '../support/server.js';

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'TRACE', 'QUERY'];

describe('spec exactness', () => {
  let srv: TestServer;
  let api: Client;

  before(async () => {
    srv = await startTestServer();
    api = client(srv.url);
  });
  after(async () => srv.stop());

  test('GET /v1/users/{name} answers all seven fields of the User, unset ones as ""', async () => {
    await createUser(api, srv.adminKey, 'plain');
    const res = await api.get('/v1/users/plain', { key: srv.adminKey });
    assert.equal(res.status, 200, res.text);
    for (const field of ['id', 'username', 'email', 'fullname', 'company_role', 'self_link', 'resource_type']) {
      assert.ok(field in res.body, `${field} is missing: ${res.text}`);
      assert.equal(typeof res.body[field], 'string', `${field} is a string`);
    }
    assert.equal(res.body.fullname, '');
    assert.equal(res.body.company_role, '');
    assert.equal(res.body.resource_type, 'user');
    // The list and the update answer the same shape.
    const listed = await api.get('/v1/users', { key: srv.adminKey });
    assert.ok(listed.body.results.every((u: Record<string, unknown>) => u.fullname !== undefined && u.company_role !== undefined));
  });

  test('every documented path answers 405 with Allow to the methods it does not take; OPTIONS lists them', async () => {
    const doc = (await api.get('/v1/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
    for (const [template, ops] of Object.entries(doc.paths)) {
      const path = template
        .replace('{*}', 'alice/x')
        .replace('{request_id}', 'req-1')
        .replace(/\{[^}]+\}/g, 'x1');
      const declared = Object.keys(ops).map((m) => m.toUpperCase());
      if (declared.includes('GET')) declared.push('HEAD');
      for (const method of METHODS.filter((m) => !declared.includes(m))) {
        // Node's http (fetch refuses TRACE); QUERY carries no Content-Type, as Fastify would refuse.
        const res = await rawRequest(srv.url, method, path, { key: srv.adminKey });
        assert.equal(res.status, 405, `${method} ${path}: ${res.status} ${res.text}`);
        const allow = String(res.headers.allow ?? '')
          .split(', ')
          .sort();
        assert.deepEqual(allow, [...new Set(declared)].sort(), `Allow of ${method} ${path}`);
        if (method !== 'HEAD') assert.equal(JSON.parse(res.text).error.code, 2015, res.text);
      }
      const options = await rawRequest(srv.url, 'OPTIONS', path);
      assert.equal(options.status, 204, `OPTIONS ${path}`);
      assert.deepEqual(
        String(options.headers.allow ?? '')
          .split(', ')
          .sort(),
        [...new Set(declared)].sort(),
      );
    }
    // No path at all stays 404; POST on an async result's address is no call.
    assert.equal((await rawRequest(srv.url, 'TRACE', '/v1/no/such/path')).status, 404);
    const post = await request(srv.url, 'POST', '/v1/algo/requests/req-1234', { key: srv.adminKey });
    assertError(post, 405);
    assert.equal(post.headers.get('allow'), 'GET, HEAD');
  });

  test('paging: limit 1-1000 and base64url markers are accepted; anything else keeps its code', async () => {
    for (const limit of ['1', '1000', '050']) {
      assert.equal((await api.get(`/v1/users?limit=${limit}`, { key: srv.adminKey })).status, 200, limit);
    }
    for (const limit of ['0', '1001', 'x', '1.5', '-1'])
      assertError(await api.get(`/v1/users?limit=${limit}`, { key: srv.adminKey }), 400, 5003);
    // Any marker of the document's form is a position, even one never issued.
    for (const marker of ['AAAA', 'garbage', 'zz_-']) {
      const res = await api.get(`/v1/users?marker=${marker}`, { key: srv.adminKey });
      assert.equal(res.status, 200, `${marker}: ${res.text}`);
    }
    assertError(await api.get('/v1/users?marker=not%20base64!', { key: srv.adminKey }), 400, 5002);
    assertError(await api.get('/v1/users?limt=5', { key: srv.adminKey }), 400);
  });
});
