/**
 * Assertions shared by the API tests: the error envelope every failure must use
 * (`{"error": {"code", "message"}}` plus `X-Error-Message`), and a client that checks every
 * response it sees for a 5xx or a malformed error body.
 */
import assert from 'node:assert/strict';
import { client, type Client, type RequestOptions, type Response } from './http.js';

/** Asserts the error envelope of docs/compatibility.md §1; `code` is checked when given. */
export function assertError(res: Response, status: number, code?: number): void {
  assert.equal(res.status, status, `expected ${status}, got ${res.status}: ${res.text}`);
  assertErrorShape(res);
  if (code !== undefined) assert.equal(res.body.error.code, code, `error code of ${res.text}`);
}

function assertErrorShape(res: Response): void {
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/, `error body must be JSON: ${res.text}`);
  assert.equal(typeof res.body, 'object', `error body must be a JSON object: ${res.text}`);
  assert.deepEqual(Object.keys(res.body), ['error'], `error body must hold only "error": ${res.text}`);
  const { code, message } = res.body.error ?? {};
  assert.ok(Number.isInteger(code), `error.code must be an integer: ${res.text}`);
  assert.equal(typeof message, 'string', `error.message must be a string: ${res.text}`);
  assert.ok(message.length > 0, 'error.message must not be empty');
  const header = res.headers.get('x-error-message');
  assert.ok(header, `X-Error-Message header missing on ${res.status}`);
  // The header carries the message as one line of visible ASCII.
  const expected = message.replace(/[^\x20-\x7e]/g, ' ').slice(0, 1000);
  assert.equal(header, expected);
}

/** Checks what must hold for any response: never a 5xx, errors in the envelope, successes without "error". */
export function checkResponse(res: Response, what: string): Response {
  assert.ok(res.status < 500, `${what} answered ${res.status}: ${res.text}`);
  if (res.status >= 400) assertErrorShape(res);
  else if (res.body && typeof res.body === 'object' && !Array.isArray(res.body)) {
    assert.ok(!('error' in res.body), `a success body must not have a top-level "error" key: ${what}`);
  }
  return res;
}

/** Like `client`, but every response goes through `checkResponse`. */
export function checkedClient(base: string): Client {
  const raw = client(base);
  const wrap =
    (method: keyof Client) =>
    async (path: string, opts?: RequestOptions): Promise<Response> =>
      checkResponse(await raw[method](path, opts), `${method.toUpperCase()} ${path}`);
  return {
    get: wrap('get'),
    post: wrap('post'),
    put: wrap('put'),
    patch: wrap('patch'),
    delete: wrap('delete'),
    head: wrap('head'),
  };
}
