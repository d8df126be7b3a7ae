import { Type } from 'typebox';
import { parsePageRequest } from '../../domain/pagination.js';
import { principalOf } from '../auth.js';
import { type Api, type ApiServices, requestUrl } from '../context.js';
import { algorithmJson, pageJson } from '../presenters.js';
import { AlgorithmCreateInput, AlgorithmUpdateInput, AUTH_ERRORS, errorResponses, PageQuery, Paged } from '../schemas.js';

const AlgorithmRef = Type.Ref('Algorithm');
const OwnerParams = Type.Object({ owner: Type.String() });
const AlgoParams = Type.Object({ owner: Type.String(), name: Type.String() });

const SearchQuery = Type.Object({
  query: Type.Optional(
    Type.String({
      description:
        'Text to find in the owner, name, label or summary, ignoring case (at most 100 characters); empty: every public algorithm.',
    }),
  ),
  ...PageQuery.properties,
});

export function algorithmRoutes(app: Api, s: Pick<ApiServices, 'algorithms' | 'links'>): void {
  app.get('/v1/algorithms', {
    schema: {
      operationId: 'algorithm.search',
      tags: ['algorithms'],
      summary:
        'Explore: public algorithms of every owner, newest first, whose owner, name, label or summary contains the query (any credential).',
      querystring: SearchQuery,
      response: { 200: Paged(AlgorithmRef), ...errorResponses(...AUTH_ERRORS) },
    },
    handler: async (req) => {
      const page = parsePageRequest(req.query.limit, req.query.marker);
      const result = await s.algorithms.search(principalOf(req), req.query.query, page);
      return pageJson(result, (a) => algorithmJson(a, s.links), requestUrl(s.links, req.url), page.limit);
    },
  });

  app.post('/v1/algorithms/:owner', {
    schema: {
      operationId: 'algorithm.create',
      tags: ['algorithms'],
      summary: 'Create an algorithm (docs/compatibility.md §9.2 endpoint 2). Its Git repository holds the template at once.',
      params: OwnerParams,
      body: AlgorithmCreateInput,
      response: { 200: AlgorithmRef, ...errorResponses(...AUTH_ERRORS, 404, 409, 422) },
    },
    handler: async (req) => algorithmJson(await s.algorithms.create(principalOf(req), req.params.owner, req.body), s.links),
  });

  app.get('/v1/algorithms/:owner', {
    schema: {
      operationId: 'algorithm.list',
      tags: ['algorithms'],
      summary: "List an owner's algorithms, paged by name (private ones only for the owner and members).",
      params: OwnerParams,
      querystring: PageQuery,
      response: { 200: Paged(AlgorithmRef), ...errorResponses(...AUTH_ERRORS, 404) },
    },
    handler: async (req) => {
      const page = parsePageRequest(req.query.limit, req.query.marker);
      const result = await s.algorithms.list(principalOf(req), req.params.owner, page);
      return pageJson(result, (a) => algorithmJson(a, s.links), requestUrl(s.links, req.url), page.limit);
    },
  });

  app.get('/v1/algorithms/:owner/:name', {
    schema: {
      operationId: 'algorithm.get',
      tags: ['algorithms'],
      summary: 'Get an algorithm.',
      params: AlgoParams,
      response: { 200: AlgorithmRef, ...errorResponses(...AUTH_ERRORS, 404) },
    },
    handler: async (req) => algorithmJson(await s.algorithms.get(principalOf(req), req.params.owner, req.params.name), s.links),
  });

  for (const method of ['put', 'patch'] as const) {
    app[method]('/v1/algorithms/:owner/:name', {
      schema: {
        operationId: `algorithm.${method === 'put' ? 'update' : 'patch'}`,
        tags: ['algorithms'],
        summary: 'Update details and settings; omitted or empty fields are kept.',
        params: AlgoParams,
        body: AlgorithmUpdateInput,
        response: { 200: AlgorithmRef, ...errorResponses(...AUTH_ERRORS, 404, 409, 422) },
      },
      handler: async (req) =>
        algorithmJson(await s.algorithms.update(principalOf(req), req.params.owner, req.params.name, req.body), s.links),
    });
  }

  app.delete('/v1/algorithms/:owner/:name', {
    schema: {
      operationId: 'algorithm.delete',
      tags: ['algorithms'],
      summary: 'Delete an algorithm and its repository.',
      params: AlgoParams,
      response: { 204: Type.Null(), ...errorResponses(...AUTH_ERRORS, 404) },
    },
    handler: async (req, reply) => {
      await s.algorithms.delete(principalOf(req), req.params.owner, req.params.name);
      return reply.code(204).send(null);
    },
  });
}
