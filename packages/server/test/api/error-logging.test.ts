/** How refused requests are logged (api/errors.ts): expected 4xx at debug with their kind, never dropped. */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import Fastify, { type FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import { failureOf, installErrorHandling } from '../../src/api/errors.js';
import { Errors } from '../../src/domain/errors.js';

function capture(level: string) {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { lines, logger: pino({ level }, stream) };
}

test('a 404 a route raises is logged at debug with its error kind and code, without a stack', async () => {
  const { lines, logger } = capture('debug');
  const app = Fastify({ loggerInstance: logger as FastifyBaseLogger });
  installErrorHandling(app, 1024);
  app.get('/v1/algorithms/:owner/:name', async (req) => {
    const { owner, name } = req.params as { owner: string; name: string };
    throw Errors.algorithmNotFound({ owner, name });
  });
  const reply = await app.inject({ method: 'GET', url: '/v1/algorithms/alice/nope' });
  assert.equal(reply.statusCode, 404);
  const unrouted = await app.inject({ method: 'GET', url: '/v1/nowhere' });
  assert.equal(unrouted.statusCode, 404);
  await app.close();
  await new Promise((r) => setImmediate(r));
  const refusals = lines.filter((l) => l.msg === 'request refused');
  assert.equal(refusals.length, 2, JSON.stringify(lines));
  for (const line of refusals) {
    assert.equal(line.level, pino.levels.values.debug);
    assert.equal(line.kind, 'not_found');
    assert.equal(line.err, undefined, 'an expected refusal carries no stack');
  }
  assert.equal(refusals[0]!.code, Errors.algorithmNotFound.code);
});

test('refusals are debug lines and server faults keep their level', () => {
  const notFound = failureOf(Errors.algorithmNotFound({ owner: 'alice', name: 'nope' }), 'req-1');
  assert.deepEqual(notFound.log, { level: 'debug', what: 'request refused', kind: 'not_found' });
  assert.equal(failureOf(Object.assign(new Error('bad'), { statusCode: 400 }), 'req-1').log.kind, 'invalid');
  assert.equal(failureOf(new Error('boom'), 'req-1').log.level, 'error');
});
