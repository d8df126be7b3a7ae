/**
 * Hosted data (docs/compatibility.md §5) at `/v1/data/…` and, the same, `/v1/connector/data/…`. The path
 * after the prefix is taken from the raw URL (still percent-encoded) so the domain sees every
 * name as sent, treats %2F as the separator it is for clients that encode the whole path, and
 * can refuse encoded traversal. Uploads are streamed: PUT bodies of any
 * Content-Type reach the data service as the request stream itself, never buffered.
 */
import { Readable } from 'node:stream';
import type { FastifyRequest, FastifySchema } from 'fastify';
import { Type, type TSchema } from 'typebox';
import type { Listing } from '../../domain/data/listing.js';
import { principalOf } from '../auth.js';
import { queryBoolean } from '../query.js';
import type { Api, ApiServices } from '../context.js';
import { errorResponses, LimitQuery, MarkerQuery, Query, QueryBoolean } from '../schemas.js';

const PREFIXES = [
  { prefix: '/v1/data', op: 'data', hide: false },
  // The connector path of the original platform: the same resource, kept out of the OpenAPI document.
  { prefix: '/v1/connector/data', op: 'connector.data', hide: true },
];

const DataFolder = Type.Object({ name: Type.String() }, { $id: 'DataFolder' });
const DataFile = Type.Object(
  {
    filename: Type.String(),
    size: Type.Integer(),
    last_modified: Type.String({ description: 'YYYY-MM-DDTHH:MM:SS.mmmZ' }),
  },
  { $id: 'DataFile' },
);
const DataAcl = Type.Object(
  { read: Type.Array(Type.String()) },
  { $id: 'DataAcl', description: 'Who may read a collection: [] private, ["algo://.my/*"] its owner\'s algorithms, ["user://*"] anyone.' },
);
const DataDirectory = Type.Object(
  {
    folders: Type.Optional(Type.Array(Type.Ref('DataFolder'))),
    files: Type.Optional(Type.Array(Type.Ref('DataFile'))),
    marker: Type.Optional(Type.String({ description: 'Pass as ?marker= for the next page; absent on the last page.' })),
    acl: Type.Optional(Type.Ref('DataAcl')),
  },
  {
    $id: 'DataDirectory',
    description: 'A directory (X-Data-Type: directory). Folders come before files, never on the same page; empty arrays are omitted.',
  },
);
const DataDeleteResult = Type.Object(
  { result: Type.Object({ deleted: Type.Integer({ description: 'How many files were deleted.' }) }) },
  { $id: 'DataDeleteResult' },
);

/** Named in the OpenAPI document, so the typed client's data types come from it. */
export const DATA_SCHEMAS = [DataFolder, DataFile, DataAcl, DataDirectory, DataDeleteResult];

const GetQuery = Query({
  marker: MarkerQuery,
  limit: LimitQuery('Entries per page'),
  acl: QueryBoolean("true: add the collection's read ACL to the listing."),
});

const Result = Type.Object({ result: Type.String({ description: 'The data:// address.' }) });

/*
 * What the domain accepts as the path after /v1/data/ (domain/data/paths.ts), per operation, as
 * OpenAPI patterns: the document shows them on the `*` parameter (app.ts moves `x-wildcard`
 * there); the domain checks them, with its own messages. `.algo/temp|perm` and `.session` work
 * only inside an algorithm call, so they are left out.
 */
const NAME_CHAR = '[^/\\u0000-\\u001f\\u007f]';
const NAME_CHAR_NOT_DOT = '[^./\\u0000-\\u001f\\u007f]';
/** One name: 1–255 characters, no "/", no control characters, not "." or "..". */
const SEGMENT = `(?:${NAME_CHAR_NOT_DOT}${NAME_CHAR}{0,254}|\\.${NAME_CHAR_NOT_DOT}${NAME_CHAR}{0,253}|\\.\\.${NAME_CHAR}{1,253})`;
const ACCOUNT = '[A-Za-z][A-Za-z0-9_]{0,29}';
const ALGO_ROOT = `\\.algo/${ACCOUNT}/[A-Za-z][A-Za-z0-9_]{0,99}/(?:temp|perm)`;
const SPACE = `(?:\\.my|${ACCOUNT})`;
const wildcard = (pattern: string, description: string) => ({ type: 'string', pattern, maxLength: 1024, description });
const WILDCARDS = {
  get: wildcard(`^(?:${SPACE}|\\.algo/${ACCOUNT}/[A-Za-z][A-Za-z0-9_]{0,99})?(?:/${SEGMENT})*/?$`, 'Any directory or file.'),
  create: wildcard(`^${SPACE}(?:/${SEGMENT})*/?$|^${ALGO_ROOT}(?:/${SEGMENT})*/?$`, 'The directory to create the folder in.'),
  update: wildcard(`^${SPACE}/${SEGMENT}/?$`, 'A collection.'),
  put: wildcard(
    `^${SPACE}(?:/${SEGMENT}){2,}$|^${ALGO_ROOT}(?:/${SEGMENT})+$`,
    "A file in a collection (or in an algorithm's temp or perm).",
  ),
  delete: wildcard(`^${SPACE}(?:/${SEGMENT})+/?$|^${ALGO_ROOT}(?:/${SEGMENT})+/?$`, "A file or folder (not a space's root)."),
};

/** A data name (POST {"name"}): one SEGMENT. */
const DataName = Type.String({ pattern: `^${SEGMENT}$`, description: '1–255 characters; no "/", control characters, "." or "..".' });
/** ACL read lists (docs/compatibility.md §5). */
const Acl = Type.Object({
  read: Type.Array(Type.Union([Type.Literal('user://*'), Type.Literal('algo://.my/*')]), {
    description: '[] private, ["algo://.my/*"] my algorithms (the default), ["user://*"] public.',
  }),
});
const DATA_ERRORS = [400, 401, 403, 404] as const;
const PATH_DOC =
  'The path after /v1/data/: {owner}/{collection}/…, .my/…, .algo/{owner}/{algorithm}/temp|perm/…, .algo/temp|perm/… or .session/… (inside an algorithm). ' +
  'Names are percent-encoded UTF-8; "/" between names may also be sent as %2F (either case), so a name never holds "/". ' +
  'After one decoding, ".", "..", empty names, NUL and control characters, names over 255 bytes and paths over 1024 bytes are refused (400, code 6001).';

export async function dataRoutes(app: Api, s: Pick<ApiServices, 'data'>): Promise<void> {
  for (const { prefix, op, hide } of PREFIXES) {
    const pathOf = (req: FastifyRequest) => {
      const url = req.url.split('?')[0]!;
      return url.slice(prefix.length);
    };
    // Generic, so that each route keeps its schema's types (the TypeBox type provider reads them).
    const doc = <S extends FastifySchema>(schema: S): S => ({ tags: ['data'], ...schema, ...(hide ? { hide } : {}) });
    // `/v1/data` and `/v1/data/` are both the caller's root (data://.my).
    for (const url of [prefix, `${prefix}/*`]) {
      const opSuffix = url === prefix ? '.root' : '';
      const hidden = hide || url === prefix;
      const schema = <S extends FastifySchema>(s_: S): S => ({ ...doc(s_), ...(hidden ? { hide: true } : {}) });

      // Declared before GET so that Fastify does not derive a HEAD from GET (which would open the file).
      app.head(url, {
        schema: schema({
          operationId: `${op}.head${opSuffix}`,
          'x-wildcard': WILDCARDS.get,
          summary: 'Whether a file or directory exists: 200 with X-Data-Type, else the status with X-Error-Message.',
          description: PATH_DOC,
        }),
        handler: async (req, reply) => {
          const st = await s.data.stat(principalOf(req), pathOf(req));
          reply.header('x-data-type', st.type);
          if (st.type === 'file') {
            reply.header('content-length', String(st.size));
            reply.header('last-modified', new Date(st.lastModified!).toUTCString());
            reply.type('application/octet-stream');
          }
          return reply.code(200).send();
        },
      });

      app.get(url, {
        schema: schema({
          operationId: `${op}.get${opSuffix}`,
          'x-wildcard': WILDCARDS.get,
          summary:
            "A directory listing (JSON, X-Data-Type: directory) or a file's bytes (X-Data-Type: file, Content-Type following Accept). HEAD: 200 with X-Data-Type, or the status with X-Error-Message.",
          description: PATH_DOC,
          querystring: GetQuery,
          response: {
            200: {
              description: 'A listing, or the file',
              content: {
                'application/json': { schema: Type.Ref('DataDirectory') },
                'application/octet-stream': { schema: { type: 'string', format: 'binary' } },
                'text/plain': { schema: { type: 'string' } },
              },
            },
            ...errorResponses(...DATA_ERRORS),
          },
        }),
        handler: async (req, reply) => {
          const q = req.query;
          const entry = await s.data.get(principalOf(req), pathOf(req), {
            marker: q.marker,
            limit: q.limit,
            acl: queryBoolean('acl', q.acl) === true,
          });
          if (entry.type === 'directory') {
            return reply
              .header('x-data-type', 'directory')
              .type('application/json; charset=utf-8')
              .send(JSON.stringify(listingJson(entry.listing)));
          }
          return reply
            .header('x-data-type', 'file')
            .header('content-length', String(entry.size))
            .header('last-modified', new Date(entry.lastModified).toUTCString())
            .type(fileContentType(req.headers.accept))
            .send(entry.body);
        },
      });

      app.post(url, {
        schema: schema({
          operationId: `${op}.create${opSuffix}`,
          'x-wildcard': WILDCARDS.create,
          summary:
            'Create a folder in this directory; at an account\'s root a collection, with an optional read ACL (default ["algo://.my/*"]).',
          description: PATH_DOC,
          body: Type.Object(
            { name: DataName, acl: Type.Optional(Type.Union([Acl, Type.Null()])) },
            { description: "acl only for a collection (a folder at an account's root); 400 on other folders." },
          ),
          response: { 200: Result, ...errorResponses(...DATA_ERRORS, 409) },
        }),
        handler: async (req) => ({
          result: await s.data.createFolder(principalOf(req), pathOf(req), req.body),
        }),
      });
    }

    app.patch(`${prefix}/*`, {
      schema: doc({
        operationId: `${op}.update`,
        'x-wildcard': WILDCARDS.update,
        summary: 'Replace a collection\'s read ACL: [] private, ["algo://.my/*"] my algorithms, ["user://*"] public.',
        description: PATH_DOC,
        body: Type.Object({ acl: Acl }),
        response: { 200: Result, ...errorResponses(...DATA_ERRORS) },
      }),
      handler: async (req) => ({ result: await s.data.updateAcl(principalOf(req), pathOf(req), req.body) }),
    });

    app.delete(`${prefix}/*`, {
      schema: doc({
        operationId: `${op}.delete`,
        'x-wildcard': WILDCARDS.delete,
        summary: 'Delete a file, or a folder (?force=true when it is not empty); answers the number of files deleted.',
        description: PATH_DOC,
        querystring: Query({ force: QueryBoolean('true: delete a folder with its contents.') }),
        response: { 200: Type.Ref('DataDeleteResult'), ...errorResponses(...DATA_ERRORS, 409) },
      }),
      handler: async (req) => {
        const force = queryBoolean('force', req.query.force) === true;
        return { result: { deleted: await s.data.delete(principalOf(req), pathOf(req), force) } };
      },
    });

    // PUT in its own scope: there the body is the raw request stream, whatever its Content-Type.
    await app.register(async (raw) => {
      raw.removeAllContentTypeParsers();
      raw.addContentTypeParser('*', (_req, payload, done) => done(null, payload));
      // Any Content-Type, even a malformed one, is stored as is: Fastify never sees it.
      raw.addHook('onRequest', async (req) => {
        delete req.headers['content-type'];
      });
      raw.put(`${prefix}/*`, {
        schema: doc({
          operationId: `${op}.put`,
          'x-wildcard': WILDCARDS.put,
          // An empty body stores an empty file.
          'x-body-optional': true,
          summary: 'Store the body as the file (any Content-Type, streamed), replacing it atomically when it exists.',
          description: PATH_DOC,
          body: {
            description: "The file's bytes",
            content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
          } as unknown as TSchema,
          response: { 200: Result, ...errorResponses(...DATA_ERRORS, 409, 413) },
        }),
        handler: async (req, reply) => {
          const body = (req.body as Readable | undefined) ?? Readable.from([]);
          const length = req.headers['content-length'] === undefined ? undefined : Number(req.headers['content-length']);
          try {
            return reply.send({ result: await s.data.put(principalOf(req), pathOf(req), body, length) });
          } catch (err) {
            drain(req);
            throw err;
          }
        },
      });
    });
  }
}

/**
 * After a refused or failed upload, the rest of the body is read and dropped so that the
 * client can finish sending and read the answer; past a bound the connection is closed instead.
 */
const DRAIN_LIMIT = 64 * 1024 * 1024;
function drain(req: FastifyRequest): void {
  const raw = req.raw;
  if (raw.complete || raw.destroyed) return;
  raw.unpipe();
  let drained = 0;
  raw.on('data', (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > DRAIN_LIMIT) raw.destroy();
  });
  raw.resume();
}

function listingJson(l: Listing) {
  return {
    ...(l.folders.length ? { folders: l.folders } : {}),
    ...(l.files.length ? { files: l.files.map((f) => ({ filename: f.name, size: f.size, last_modified: f.lastModified })) } : {}),
    ...(l.nextMarker ? { marker: l.nextMarker } : {}),
    ...(l.acl ? { acl: l.acl } : {}),
  };
}

const FILE_TYPES = ['application/json', 'text/plain', 'application/octet-stream'];

/** The first of JSON, text or bytes the Accept header prefers (by q, then order); bytes otherwise. */
export function fileContentType(accept: string | undefined): string {
  if (!accept) return 'application/octet-stream';
  const ranked = accept
    .split(',')
    .map((part, i) => {
      const [type = '', ...params] = part.split(';').map((x) => x.trim().toLowerCase());
      const q = params.find((p) => p.startsWith('q='));
      return { type, q: q ? Number(q.slice(2)) : 1, i };
    })
    .filter((r) => r.q > 0 && FILE_TYPES.includes(r.type))
    .sort((a, b) => b.q - a.q || a.i - b.i);
  return ranked[0]?.type ?? 'application/octet-stream';
}
