import { Type } from 'typebox';
import { parsePageRequest } from '../../domain/pagination.js';
import { principalOf } from '../auth.js';
import { queryBoolean } from '../query.js';
import { type Api, type ApiServices, requestUrl } from '../context.js';
import { pageJson, versionJson } from '../presenters.js';
import { AUTH_ERRORS, errorResponses, LimitQuery, MarkerQuery, Paged, PublishInput, Query, QueryBoolean } from '../schemas.js';

const AlgoParams = Type.Object({ owner: Type.String(), name: Type.String() });
const VersionParams = Type.Object({ owner: Type.String(), name: Type.String(), git_hash: Type.String() });
const VersionListQuery = Query({
  limit: LimitQuery(),
  marker: MarkerQuery,
  published: QueryBoolean('true (default): published versions; false: successful builds not yet published.'),
  callable: QueryBoolean('true: public versions; false: private ones.'),
});
// A version is shown as the algorithm object as of that version (docs/compatibility.md §3).
const VersionRef = Type.Ref('Algorithm');

export function versionRoutes(app: Api, s: Pick<ApiServices, 'versions' | 'links'>): void {
  // docs/compatibility.md §3: one client publishes at /version (singular); both paths do the same.
  for (const url of ['/v1/algorithms/:owner/:name/versions', '/v1/algorithms/:owner/:name/version']) {
    app.post(url, {
      schema: {
        operationId: url.endsWith('versions') ? 'version.publish' : 'version.publishSingular',
        'x-body-optional': true,
        tags: ['versions'],
        summary:
          'Publish the latest successful build as the next version (1007 when it is already published or there is none). A retried identical request returns the same version.',
        params: AlgoParams,
        body: Type.Optional(Type.Union([PublishInput, Type.Null()])),
        response: { 200: VersionRef, ...errorResponses(...AUTH_ERRORS, 404, 409) },
      },
      handler: async (req) =>
        versionJson(await s.versions.publish(principalOf(req), req.params.owner, req.params.name, req.body ?? {}), s.links),
    });
  }

  app.get('/v1/algorithms/:owner/:name/versions', {
    schema: {
      operationId: 'version.list',
      tags: ['versions'],
      summary: 'List versions, highest first (non-members see public versions only).',
      params: AlgoParams,
      querystring: VersionListQuery,
      response: { 200: Paged(VersionRef), ...errorResponses(...AUTH_ERRORS, 404) },
    },
    handler: async (req) => {
      const page = parsePageRequest(req.query.limit, req.query.marker);
      const result = await s.versions.list(principalOf(req), req.params.owner, req.params.name, {
        published: queryBoolean('published', req.query.published),
        callable: queryBoolean('callable', req.query.callable),
        page,
      });
      return pageJson(result, (v) => versionJson(v, s.links), requestUrl(s.links, req.url), page.limit);
    },
  });

  app.get('/v1/algorithms/:owner/:name/versions/:git_hash', {
    schema: {
      operationId: 'version.get',
      tags: ['versions'],
      summary: 'A version by the commit it was built from (members also see builds not yet published).',
      params: VersionParams,
      response: { 200: VersionRef, ...errorResponses(...AUTH_ERRORS, 404) },
    },
    handler: async (req) =>
      versionJson(await s.versions.get(principalOf(req), req.params.owner, req.params.name, req.params.git_hash), s.links),
  });
}
