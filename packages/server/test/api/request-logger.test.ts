/** The lazy per-request logger (api/request-logger.ts): made on first use, bound to the request id. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Writable } from 'node:stream';
import pino from 'pino';
import { lazyChildLogger } from '../../src/api/request-logger.js';

function capture() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { lines, logger: pino({ level: 'info' }, stream) };
}

test('nothing is made until the request logs; then the line carries the request id and the arguments', async () => {
  const { lines, logger } = capture();
  let made = 0;
  // The server's logger as Fastify holds it, counting the children made of it.
  const parent = {
    level: logger.level,
    child: (bindings: pino.Bindings, options?: pino.ChildLoggerOptions) => {
      made++;
      return logger.child(bindings, options);
    },
  } as unknown as pino.Logger;
  const log = lazyChildLogger(parent, { reqId: 'req-7' }, {});
  assert.equal(made, 0, 'a request that logs nothing costs no child logger');
  assert.equal(log.level, 'info');
  log.error({ err: new Error('boom') }, 'unexpected error');
  log.info('second line');
  log.debug('below the level: not written');
  assert.equal(made, 1, 'one child, made once');
  await new Promise((r) => setImmediate(r));
  assert.equal(lines.length, 2);
  assert.equal(lines[0]!.reqId, 'req-7');
  assert.equal(lines[0]!.msg, 'unexpected error');
  assert.equal((lines[0]!.err as { message: string }).message, 'boom');
  assert.equal(lines[1]!.reqId, 'req-7');
  assert.equal(lines[1]!.msg, 'second line');
  const grandchild = log.child({ part: 'x' });
  grandchild.warn('nested');
  await new Promise((r) => setImmediate(r));
  assert.equal(lines[2]!.reqId, 'req-7');
  assert.equal(lines[2]!.part, 'x');
});
