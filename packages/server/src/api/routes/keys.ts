import { Type } from 'typebox';
import { principalOf } from '../auth.js';
import type { Api, ApiServices } from '../context.js';
import { identityJson, keyJson } from '../presenters.js';
import { AUTH_ERRORS, Capability, CreatedApiKey, errorResponses } from '../schemas.js';
import { chargedClientOf } from '../sandbox-sockets.js';

const NameParams = Type.Object({ account_name: Type.String() });

export function keyRoutes(app: Api, s: Pick<ApiServices, 'keys' | 'users'>): void {
  app.post('/v1/users/:account_name/keys', {
    schema: {
      operationId: 'key.create',
      tags: ['keys'],
      summary: 'Create an API key. The response holds the key itself; it is shown only this once.',
      params: NameParams,
      body: Type.Object({
        kind: Type.Optional(Type.Union([Type.Literal('standard'), Type.Literal('admin')])),
        capabilities: Type.Optional(
          Type.Array(Capability, {
            description:
              'Default: all of manage_algorithms, call_algorithms, read_data, write_data; never more than the caller holds (403).',
          }),
        ),
        description: Type.Optional(Type.Union([Type.String({ maxLength: 200 }), Type.Null()])),
      }),
      response: {
        200: CreatedApiKey,
        ...errorResponses(...AUTH_ERRORS, 404),
      },
    },
    handler: async (req) => {
      const created = await s.keys.create(principalOf(req), req.params.account_name, req.body);
      return { ...keyJson(created.key), key: created.secret };
    },
  });

  app.get('/v1/users/:account_name/keys', {
    schema: {
      operationId: 'key.list',
      tags: ['keys'],
      summary: "List an account's keys (without secrets).",
      params: NameParams,
      response: { 200: Type.Object({ results: Type.Array(Type.Ref('ApiKey')) }), ...errorResponses(...AUTH_ERRORS, 404) },
    },
    handler: async (req) => ({ results: (await s.keys.list(principalOf(req), req.params.account_name)).map(keyJson) }),
  });

  app.delete('/v1/users/:account_name/keys/:key_id', {
    schema: {
      operationId: 'key.revoke',
      tags: ['keys'],
      summary: 'Revoke a key.',
      params: Type.Object({ account_name: Type.String(), key_id: Type.String() }),
      response: { 204: Type.Null(), ...errorResponses(...AUTH_ERRORS, 404) },
    },
    handler: async (req, reply) => {
      await s.keys.revoke(principalOf(req), req.params.account_name, req.params.key_id);
      return reply.code(204).send(null);
    },
  });

  app.post('/v1/auth/token', {
    config: { auth: 'none' },
    schema: {
      operationId: 'session.create',
      security: [],
      tags: ['keys'],
      summary: 'Sign in with username and password; returns a short-lived JWT for Authorization: Bearer.',
      body: Type.Object({ username: Type.String(), password: Type.String() }),
      response: {
        200: Type.Object({ token: Type.String(), token_type: Type.Literal('Bearer'), expires_at: Type.String() }),
        ...errorResponses(400, 401),
      },
    },
    handler: async (req) => {
      const session = await s.keys.signIn(req.body.username, req.body.password, chargedClientOf(req.socket));
      return { token: session.token, token_type: 'Bearer' as const, expires_at: session.expiresAt.toISOString() };
    },
  });

  app.get('/v1/auth/whoami', {
    schema: {
      operationId: 'auth.whoami',
      tags: ['keys'],
      summary:
        'Who the credential of this request belongs to, whether it acts as an admin, what it may do, and the organizations of the account (any credential; none for a call key).',
      response: { 200: Type.Ref('Identity'), ...errorResponses(401) },
    },
    handler: async (req) => identityJson(await s.users.whoami(principalOf(req))),
  });
}
