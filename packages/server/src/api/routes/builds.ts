import type { FastifyReply } from 'fastify';
import { Type } from 'typebox';
import { parsePageRequest } from '../../domain/pagination.js';
import { principalOf } from '../auth.js';
import { type Api, type ApiServices, requestUrl } from '../context.js';
import { algorithmJson, buildJson, pageJson } from '../presenters.js';
import { AUTH_ERRORS, CompileResult, errorResponses, PageQuery, Paged } from '../schemas.js';

const AlgoParams = Type.Object({ owner: Type.String(), name: Type.String() });
const BuildParams = Type.Object({ owner: Type.String(), name: Type.String(), build_id: Type.String() });
const BuildRef = Type.Ref('Build');

export function buildRoutes(app: Api, s: Pick<ApiServices, 'builds' | 'links'>): void {
  app.get('/v1/algorithms/:owner/:name/builds', {
    schema: {
      operationId: 'build.list',
      tags: ['builds'],
      summary: 'List builds, newest first (owner and members).',
      params: AlgoParams,
      querystring: PageQuery,
      response: { 200: Paged(BuildRef), ...errorResponses(...AUTH_ERRORS, 404) },
    },
    handler: async (req) => {
      const page = parsePageRequest(req.query.limit, req.query.marker);
      const result = await s.builds.list(principalOf(req), req.params.owner, req.params.name, page);
      return pageJson(result, buildJson, requestUrl(s.links, req.url), page.limit);
    },
  });

  app.get('/v1/algorithms/:owner/:name/builds/:build_id', {
    schema: {
      operationId: 'build.get',
      tags: ['builds'],
      summary: 'Get a build.',
      params: BuildParams,
      response: { 200: BuildRef, ...errorResponses(...AUTH_ERRORS, 404) },
    },
    handler: async (req) => buildJson(await s.builds.get(principalOf(req), req.params.owner, req.params.name, req.params.build_id)),
  });

  app.get('/v1/algorithms/:owner/:name/builds/:build_id/logs', {
    schema: {
      operationId: 'build.logs',
      tags: ['builds'],
      summary: 'The log of a finished build (404 while it runs; follow it with .../logs/stream).',
      params: BuildParams,
      response: { 200: Type.Object({ logs: Type.String() }), ...errorResponses(...AUTH_ERRORS, 404) },
    },
    handler: async (req) => ({ logs: await s.builds.logsOf(principalOf(req), req.params.owner, req.params.name, req.params.build_id) }),
  });

  app.get('/v1/algorithms/:owner/:name/builds/:build_id/logs/stream', {
    schema: {
      operationId: 'build.logs.stream',
      tags: ['builds'],
      summary: 'Server-sent events: `log` events with output as it comes, then one `finished` event with the build.',
      params: BuildParams,
      response: {
        200: {
          description: 'text/event-stream: `log` events ({"text"}), then one `finished` event (the build).',
          content: {
            'text/event-stream': {
              schema: {
                type: 'object',
                required: ['event', 'data'],
                properties: { event: { enum: ['log', 'finished'] }, data: { type: 'string', contentMediaType: 'application/json' } },
              },
            },
          },
        },
        ...errorResponses(...AUTH_ERRORS, 404),
      },
    },
    handler: async (req, reply) => {
      const build = await s.builds.get(principalOf(req), req.params.owner, req.params.name, req.params.build_id);
      // Hijacked: the headers set so far (CORS) are written here, Fastify no longer sends them.
      const headers = (reply as unknown as FastifyReply).getHeaders();
      const raw = (reply as unknown as FastifyReply).hijack().raw;
      for (const [name, value] of Object.entries(headers)) if (value !== undefined) raw.setHeader(name, value);
      raw.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
      const send = (event: string, data: unknown) => raw.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
      let closed = false;
      raw.on('close', () => (closed = true));
      const finished = await s.builds.follow(build.id, (text) => {
        if (!closed && text) send('log', { text });
      });
      if (!closed) send('finished', buildJson(finished));
      raw.end();
    },
  });

  app.post('/v1/algorithms/:owner/:name/compile', {
    schema: {
      operationId: 'algorithm.compile',
      'x-body-optional': true,
      tags: ['builds'],
      summary: 'Build the head of the default branch again and wait for the outcome.',
      params: AlgoParams,
      body: Type.Optional(Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()])),
      response: {
        200: CompileResult,
        ...errorResponses(...AUTH_ERRORS, 404),
      },
    },
    handler: async (req) => {
      const { view, build, log } = await s.builds.compile(principalOf(req), req.params.owner, req.params.name);
      return {
        ...algorithmJson(view, s.links),
        version_info: { git_hash: build.commitSha },
        build: buildJson(build),
        compilation: { successful: build.status === 'succeeded', output: log },
      };
    },
  });
}
