/** Cutting a runner's output stream at its harness's output marks, however the stream is chunked. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { OutputMarks } from '../../src/runtime/runner/output-marks.js';

const MARK = 'algohost-output-mark-0123456789abcdef';

/** Feeds the chunks; returns each request's output and the order in which requests were marked. */
function cut(chunks: string[]): { outputs: Map<number, string>; marked: number[] } {
  const marks = new OutputMarks(MARK);
  const outputs = new Map<number, string>();
  const marked: number[] = [];
  for (const c of chunks) {
    marks.feed(
      c,
      (piece, request) => outputs.set(request, (outputs.get(request) ?? '') + piece),
      (request) => marked.push(request),
    );
  }
  return { outputs, marked };
}

describe('output marks', () => {
  test('text before the n-th mark is request n’s; an empty request has no output', () => {
    const { outputs, marked } = cut([`one\n${MARK}${MARK}three${MARK}four…`]);
    assert.deepEqual(
      [...outputs],
      [
        [1, 'one\n'],
        [3, 'three'],
        [4, 'four…'],
      ],
    );
    assert.deepEqual(marked, [1, 2, 3]);
  });

  test('a mark split across chunks at every position is still one mark, and nothing of it leaks into the output', () => {
    const stream = `a${MARK}b${MARK}`;
    for (let i = 0; i <= stream.length; i++) {
      for (let j = i; j <= stream.length; j++) {
        const { outputs, marked } = cut([stream.slice(0, i), stream.slice(i, j), stream.slice(j)]);
        assert.deepEqual(
          [...outputs],
          [
            [1, 'a'],
            [2, 'b'],
          ],
          `cut at ${i}, ${j}`,
        );
        assert.deepEqual(marked, [1, 2]);
      }
    }
  });

  test('text that only begins like a mark is output, once it is clear it is not one', () => {
    const { outputs, marked } = cut(['x algohost-out', 'put is fine', ` ${MARK.slice(0, -1)}`, '!']);
    assert.deepEqual([...outputs], [[1, `x algohost-output is fine ${MARK.slice(0, -1)}!`]]);
    assert.deepEqual(marked, []);
  });
});
