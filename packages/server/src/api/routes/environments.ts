import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import type { Api, ApiServices } from '../context.js';
import { environmentJson, languageJson } from '../presenters.js';
import { errorResponses } from '../schemas.js';

export function environmentRoutes(app: Api, s: Pick<ApiServices, 'catalog'>): void {
  app.get('/v1/algorithm-environments/edge/languages', {
    schema: {
      operationId: 'language.list',
      tags: ['environments'],
      summary: 'List languages (docs/compatibility.md §9.2 endpoint 3).',
      response: { 200: Type.Array(Type.Ref('Language')), ...errorResponses(401) },
    },
    handler: async () => s.catalog.listLanguages().map(languageJson),
  });

  app.get('/v1/algorithm-environments/edge/languages/:language_name/environments', {
    schema: {
      operationId: 'environment.list',
      tags: ['environments'],
      summary: 'List the environments of a language (docs/compatibility.md §9.2 endpoint 4).',
      params: Type.Object({ language_name: Type.String() }),
      response: { 200: Type.Array(Type.Ref('Environment')), ...errorResponses(401, 404) },
    },
    handler: async (req) => s.catalog.listEnvironments(req.params.language_name).map(environmentJson),
  });

  app.get('/v1/algorithm-environments/edge/environment-specifications/:environment_specification_id/template', {
    config: { auth: 'none' },
    schema: {
      operationId: 'environment.template',
      security: [],
      tags: ['environments'],
      summary: 'Download the template files as a gzipped tar (docs/compatibility.md §9.2 endpoint 5; no authentication).',
      params: Type.Object({ environment_specification_id: Type.String() }),
      response: {
        200: {
          description: 'A gzipped tar archive of the template files.',
          content: { 'application/gzip': { schema: { type: 'string', contentEncoding: 'binary' } } },
        },
        ...errorResponses(404),
      },
    },
    handler: async (req, reply) => {
      const tar = s.catalog.templateArchive(req.params.environment_specification_id);
      // The 200 schema documents the archive for OpenAPI; the body is raw bytes, not serialized.
      return (reply as unknown as FastifyReply)
        .type('application/gzip')
        .header('content-disposition', `attachment; filename="template-${req.params.environment_specification_id}.tar.gz"`)
        .send(tar);
    },
  });
}
