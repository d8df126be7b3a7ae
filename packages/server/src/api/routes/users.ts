import { Type } from 'typebox';
import { parsePageRequest } from '../../domain/pagination.js';
import { principalOf } from '../auth.js';
import type { Api, ApiServices } from '../context.js';
import { pageJson, userJson } from '../presenters.js';
import { AUTH_ERRORS, errorResponses, PageQuery, Paged, UserCreateInput, UserUpdateInput } from '../schemas.js';
import { requestUrl } from '../context.js';

const UserRef = Type.Ref('User');
const NameParams = Type.Object({ account_name: Type.String() });

export function userRoutes(app: Api, s: Pick<ApiServices, 'users' | 'links'>): void {
  app.post('/v1/users', {
    schema: {
      operationId: 'user.create',
      tags: ['users'],
      summary: 'Create a user (admin key).',
      body: UserCreateInput,
      response: { 200: UserRef, ...errorResponses(...AUTH_ERRORS, 409) },
    },
    handler: async (req) => userJson(await s.users.create(principalOf(req), req.body), s.links),
  });

  app.get('/v1/users', {
    schema: {
      operationId: 'user.list',
      tags: ['users'],
      summary: 'List users, paged by name (admin key).',
      querystring: PageQuery,
      response: { 200: Paged(UserRef), ...errorResponses(...AUTH_ERRORS) },
    },
    handler: async (req) => {
      const page = parsePageRequest(req.query.limit, req.query.marker);
      const result = await s.users.list(principalOf(req), page);
      return pageJson(result, (u) => userJson(u, s.links), requestUrl(s.links, req.url), page.limit);
    },
  });

  app.get('/v1/users/:account_name', {
    schema: {
      operationId: 'user.get',
      tags: ['users'],
      summary: 'Look up a user (docs/compatibility.md §9.2 endpoint 6; admin key).',
      params: NameParams,
      response: { 200: UserRef, ...errorResponses(...AUTH_ERRORS, 404) },
    },
    handler: async (req) => userJson(await s.users.get(principalOf(req), req.params.account_name), s.links),
  });

  app.put('/v1/users/:account_name', {
    schema: {
      operationId: 'user.update',
      tags: ['users'],
      summary: 'Update a user (admin, or the user themself). Omitted fields are kept.',
      params: NameParams,
      body: UserUpdateInput,
      response: { 200: UserRef, ...errorResponses(...AUTH_ERRORS, 404, 409) },
    },
    handler: async (req) => userJson(await s.users.update(principalOf(req), req.params.account_name, req.body), s.links),
  });

  app.delete('/v1/users/:account_name', {
    schema: {
      operationId: 'user.delete',
      tags: ['users'],
      summary: 'Delete a user, its keys and its algorithms (admin key).',
      params: NameParams,
      response: { 204: Type.Null(), ...errorResponses(...AUTH_ERRORS, 404) },
    },
    handler: async (req, reply) => {
      await s.users.delete(principalOf(req), req.params.account_name);
      return reply.code(204).send(null);
    },
  });
}
