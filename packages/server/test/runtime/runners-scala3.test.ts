import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { jvmFixtureSuite } from '../support/jvm-runner-suite.js';
import { CALL_MS } from '../support/runner-suite.js';

/** Scala values as results: case classes, collections, options, tuples, bytes, BigInt; an Int parameter. */
const SHAPES = `package algorithmia.Shapes

case class Point(x: Int, y: Double, label: String)

class Unsupported(message: String) extends Exception(message):
  val errorType: String = "UnsupportedError"

class Shapes:
  def apply(input: Int): Any = input match
    case 0 => Point(1, 2.5, "p")
    case 1 => Map("a" -> List(1, 2), "b" -> Vector.empty[Int])
    case 2 => Some(Seq("x", "y"))
    case 3 => None
    case 4 => (1, "two", 3.5)
    case 5 => Array[Byte](1, 2, 3)
    case 6 => BigInt("123456789012345678901234567890")
    case 7 => "plain text"
    case 8 => throw Unsupported("shape 8 is not supported")
    case _ => throw new IllegalStateException(s"no shape $input")
`;

/** The JVM harness running a Scala 3.3 class (scala3-library and scala-library in target/lib) in real sandboxed runners. */
describe('scala 3 runner harness', () => {
  jvmFixtureSuite('scala3', (ctx) => {
    test('Scala results (case class, Map, Seq, Option, tuple, Array[Byte], BigInt) and an Int parameter', async () => {
      const shapes = await ctx.startAdHoc('s3_shapes', 'Shapes', {
        'algorithmia.conf': JSON.stringify({ username: 'user', algoname: 'Shapes', language: 'scala' }),
        'build.sbt': 'scalaVersion := "3.3.4"\n\nCompile / packageBin / artifactPath := target.value / "algorithm.jar"\n',
        'project/build.properties': 'sbt.version=1.10.2\n',
        'src/main/scala/algorithmia/Shapes/Shapes.scala': SHAPES,
      });
      const cases: [number, unknown, string][] = [
        [0, { x: 1, y: 2.5, label: 'p' }, 'json'],
        [1, { a: [1, 2], b: [] }, 'json'],
        [2, ['x', 'y'], 'json'],
        [3, null, 'json'],
        [4, [1, 'two', 3.5], 'json'],
        [5, Buffer.from([1, 2, 3]).toString('base64'), 'binary'],
        [6, Number('123456789012345678901234567890'), 'json'],
        [7, 'plain text', 'text'],
      ];
      for (const [input, result, contentType] of cases) {
        const { response } = await shapes.call({ content_type: 'json', data: input }, CALL_MS);
        assert.deepEqual(response, { result, metadata: { content_type: contentType } }, `shape ${input}`);
      }
      const own = await shapes.call({ content_type: 'json', data: 8 }, CALL_MS);
      assert.equal(own.response.error?.error_type, 'UnsupportedError');
      assert.equal(own.response.error?.message, 'shape 8 is not supported');
      const thrown = await shapes.call({ content_type: 'json', data: 9 }, CALL_MS);
      assert.equal(thrown.response.error?.error_type, 'AlgorithmError');
      assert.equal(thrown.response.error?.message, 'no shape 9');
      const wrong = await shapes.call({ content_type: 'json', data: 1.5 }, CALL_MS);
      assert.equal(wrong.response.error?.error_type, 'InputError');
      const text = await shapes.call({ content_type: 'text', data: '1' }, CALL_MS);
      assert.equal(text.response.error?.error_type, 'InputError');
    });
  });
});
