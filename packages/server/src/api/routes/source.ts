import { Type } from 'typebox';
import { principalOf } from '../auth.js';
import type { Api, ApiServices } from '../context.js';
import { commitJson, readmeJson } from '../presenters.js';
import { AUTH_ERRORS, errorResponses, Query } from '../schemas.js';
import { COMMIT_LIMIT_PATTERN, REF_CHARACTERS } from '../../domain/algorithms/source-service.js';

const AlgoParams = Type.Object({ owner: Type.String(), name: Type.String() });

/** An algorithm's source read through the API: its recent commits and its README. */
export function sourceRoutes(app: Api, s: Pick<ApiServices, 'source'>): void {
  app.get('/v1/algorithms/:owner/:name/source/commits', {
    schema: {
      operationId: 'algorithm.source.commits',
      tags: ['algorithms'],
      summary:
        'The newest commits of the default branch, newest first (whoever may fetch the source over Git, and admins; an empty repository has none).',
      params: AlgoParams,
      querystring: Query({
        limit: Type.Optional(
          Type.String({ pattern: COMMIT_LIMIT_PATTERN, description: 'How many commits, 1–100 (default 20); 5003 otherwise.' }),
        ),
      }),
      response: { 200: Type.Object({ results: Type.Array(Type.Ref('Commit')) }), ...errorResponses(...AUTH_ERRORS, 404) },
    },
    handler: async (req) => ({
      results: (await s.source.commits(principalOf(req), req.params.owner, req.params.name, req.query.limit)).map(commitJson),
    }),
  });

  app.get('/v1/algorithms/:owner/:name/source/readme', {
    schema: {
      operationId: 'algorithm.source.readme',
      tags: ['algorithms'],
      summary:
        'The README at the root of a commit (README.md, README.markdown, README.txt or README, any letter case) as raw text, cut at 256 KiB; anyone who may read the algorithm.',
      params: AlgoParams,
      querystring: Query({
        ref: Type.Optional(
          Type.String({
            pattern: REF_CHARACTERS,
            description: 'A commit SHA, or a branch or tag name (v1.2.3); default: the default branch. A name no ref can have is 404.',
          }),
        ),
      }),
      response: { 200: Type.Ref('Readme'), ...errorResponses(...AUTH_ERRORS, 404) },
    },
    handler: async (req) => readmeJson(await s.source.readme(principalOf(req), req.params.owner, req.params.name, req.query.ref)),
  });
}
