import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { jvmFixtureSuite } from '../support/jvm-runner-suite.js';
import { CALL_MS, checkBackToBack } from '../support/runner-suite.js';
import type { CallOutcome } from '../../src/runtime/runner/runner-outcome.js';

/** A Java algorithm without pom.xml (javac path) taking and returning anything. */
const TYPES = `package algorithmia.Types;

import java.util.*;

/** A generic base class in the user's code: apply(I) resolves through the bridge javac makes. */
abstract class Base<I, O> {
  public abstract O apply(I input) throws Exception;

  public void load() {
    System.out.println("Types: base load() ran");
  }
}

public class Types extends Base<Object, Object> {
  record Point(int x, double y, String label) {}

  static class Unsupported extends RuntimeException {
    public final String errorType = "UnsupportedError";

    Unsupported(String message) {
      super(message);
    }
  }

  @Override
  public Object apply(Object input) {
    if (input instanceof byte[] bytes) {
      byte[] out = new byte[bytes.length];
      for (int i = 0; i < bytes.length; i++) out[i] = bytes[bytes.length - 1 - i];
      return out;
    }
    if (input instanceof String s) return "text:" + s;
    if (input instanceof Map<?, ?> m && "record".equals(m.get("op"))) return new Point(1, 2.5, "p\\u00e9 \\"q\\"\\n");
    if (input instanceof Map<?, ?> m && "unsupported".equals(m.get("op"))) throw new Unsupported("not this one");
    if (input instanceof Map<?, ?> m && "nan".equals(m.get("op"))) return Double.NaN;
    if (input instanceof Map<?, ?> m && "stdin".equals(m.get("op"))) {
      try (java.io.FileInputStream fd0 = new java.io.FileInputStream(java.io.FileDescriptor.in)) {
        return Map.of("stdin", new String(System.in.readAllBytes()), "fd0", new String(fd0.readAllBytes()));
      } catch (java.io.IOException e) {
        throw new RuntimeException(e);
      }
    }
    if (input instanceof Map<?, ?> m && "say".equals(m.get("op"))) {
      // No newline: the word stays in System.out's buffer until the harness flushes it.
      System.out.print(m.get("word"));
      System.err.print("!");
      return m.get("word");
    }
    if (input instanceof Map<?, ?> m && "buffer".equals(m.get("op"))) {
      // A System.out of the algorithm's own, buffered and never flushed by it.
      System.setOut(new java.io.PrintStream(
          new java.io.BufferedOutputStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), 1 << 16), false));
      return "buffered";
    }
    if (input instanceof Map<?, ?> m && "close".equals(m.get("op"))) {
      // The JDK then points fds 1 and 2 at /dev/null.
      System.out.close();
      System.err.close();
      return "closed";
    }
    if (input instanceof Map<?, ?> m && "print".equals(m.get("op"))) {
      System.out.print("no newline");
      System.err.println(" and stderr");
      return null;
    }
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("class", input == null ? null : input.getClass().getSimpleName());
    out.put("value", input);
    out.put("array", new int[] {1, 2});
    out.put("optional", Optional.empty());
    out.put("uuid", UUID.fromString("00000000-0000-0000-0000-00000000002a"));
    return out;
  }
}
`;

/** A typed apply: generic parameter conversion. */
const TYPED = `package algorithmia.Typed;

import java.util.*;

public class Typed {
  public long apply(Map<String, List<Integer>> input) {
    long sum = 0;
    for (List<Integer> values : input.values()) for (int v : values) sum += v;
    return sum;
  }
}
`;

const FAILING_LOAD = `package algorithmia.NoModel;

public class NoModel {
  public void load() {
    System.out.println("NoModel: loading");
    throw new IllegalStateException("model file missing");
  }

  public String apply(String input) {
    return input;
  }
}
`;

const conf = (name: string) => JSON.stringify({ username: 'user', algoname: name, language: 'java' });

/** The Java runner harness against real sandboxed runners (docs/compatibility.md §4, templates/README.md "Java"). */
describe('java runner harness', () => {
  jvmFixtureSuite('java', (ctx) => {
    test('no pom.xml: JSON, text and binary in; JSON, text and binary out; generic base class; own error_type; prints back to back, also after System.setOut and System.out.close()', async () => {
      const types = await ctx.startAdHoc('j_types', 'Types', {
        'algorithmia.conf': conf('Types'),
        'src/main/java/algorithmia/Types/Types.java': TYPES,
      });
      assert.match(types.loadOutput, /Types: base load\(\) ran/);

      const bytes = Buffer.from([0, 1, 2, 128, 250, 255]);
      const bin = await types.call({ content_type: 'binary', data: bytes.toString('base64') }, CALL_MS);
      assert.deepEqual(bin.response, { result: Buffer.from(bytes).reverse().toString('base64'), metadata: { content_type: 'binary' } });

      const text = await types.call({ content_type: 'text', data: 'Zoë 😀' }, CALL_MS);
      assert.deepEqual(text.response, { result: 'text:Zoë 😀', metadata: { content_type: 'text' } });

      const json = await types.call(
        { content_type: 'json', data: { n: 1, big: 12345678901234, f: 1.5, l: [true, null, 'x'], o: {} } },
        CALL_MS,
      );
      assert.deepEqual(json.response, {
        result: {
          class: 'LinkedHashMap',
          value: { n: 1, big: 12345678901234, f: 1.5, l: [true, null, 'x'], o: {} },
          array: [1, 2],
          optional: null,
          uuid: '00000000-0000-0000-0000-00000000002a',
        },
        metadata: { content_type: 'json' },
      });
      for (const [data, cls] of [
        [7, 'Long'],
        [2.5, 'Double'],
        [[1], 'ArrayList'],
        [false, 'Boolean'],
        ['s', 'String'],
        [null, null],
      ] as const) {
        const r = await types.call({ content_type: 'json', data }, CALL_MS);
        if (cls === 'String') assert.deepEqual(r.response, { result: 'text:s', metadata: { content_type: 'text' } });
        else assert.equal((r.response.result as { class: string | null }).class, cls, JSON.stringify(r.response));
      }

      const record = await types.call({ content_type: 'json', data: { op: 'record' } }, CALL_MS);
      assert.deepEqual(record.response, { result: { x: 1, y: 2.5, label: 'pé "q"\n' }, metadata: { content_type: 'json' } });

      const own = await types.call({ content_type: 'json', data: { op: 'unsupported' } }, CALL_MS);
      assert.equal(own.response.error?.error_type, 'UnsupportedError');
      assert.equal(own.response.error?.message, 'not this one');

      const nan = await types.call({ content_type: 'json', data: { op: 'nan' } }, CALL_MS);
      assert.equal(nan.response.error?.error_type, 'AlgorithmError');
      assert.match(nan.response.error?.message ?? '', /NaN/);

      // Reading stdin gets nothing (requests are the harness's), and the next request still arrives.
      const stdin = await types.call({ content_type: 'json', data: { op: 'stdin' } }, CALL_MS);
      assert.deepEqual(stdin.response, { result: { stdin: '', fd0: '' }, metadata: { content_type: 'json' } });

      const printed = await types.call({ content_type: 'json', data: { op: 'print' } }, CALL_MS);
      assert.deepEqual(printed.response, { result: null, metadata: { content_type: 'json' } });
      assert.match(printed.stdout, /no newline/);
      assert.match(printed.stdout, /and stderr/);

      // Calls written back to back each keep their own prints: the harness flushes System.out (a
      // print without a newline waits in its buffer) and System.err before its marks, also when
      // the algorithm replaced System.out by a buffered stream it never flushes.
      const say = (word: string) => ({
        request: { content_type: 'json' as const, data: { op: 'say', word } },
        check: ({ response, stdout }: CallOutcome) => {
          assert.equal(response.result, word);
          assert.ok(stdout === `${word}!` || stdout === `!${word}`, stdout);
        },
      });
      await checkBackToBack(types, ['a', 'bb', 'ccc', 'dddd'].map(say));
      const buffered = await types.call({ content_type: 'json', data: { op: 'buffer' } }, CALL_MS);
      assert.equal(buffered.response.result, 'buffered');
      await checkBackToBack(types, ['e', 'ff', 'ggg', 'hhhh'].map(say));
      // After the algorithm closed System.out and System.err the marks still come (the harness's
      // own copies of fds 1 and 2): calls written back to back are still answered, with no output.
      const silent = (data: Record<string, string>, result: string) => ({
        request: { content_type: 'json' as const, data },
        check: ({ response, stdout }: CallOutcome) => {
          assert.equal(response.result, result);
          assert.equal(stdout, '');
        },
      });
      await checkBackToBack(types, [
        silent({ op: 'close' }, 'closed'),
        silent({ op: 'say', word: 'i' }, 'i'),
        silent({ op: 'say', word: 'j' }, 'j'),
        silent({ op: 'say', word: 'k' }, 'k'),
      ]);
    });

    test('typed parameters: Map<String, List<Integer>> converted, out-of-range and wrong kinds are InputErrors', async () => {
      const typed = await ctx.startAdHoc('j_typed', 'Typed', {
        'algorithmia.conf': conf('Typed'),
        'src/main/java/algorithmia/Typed/Typed.java': TYPED,
      });
      const sum = await typed.call({ content_type: 'json', data: { a: [1, 2], b: [3] } }, CALL_MS);
      assert.deepEqual(sum.response, { result: 6, metadata: { content_type: 'json' } });
      for (const [data, message] of [
        [{ a: [1.5] }, /must be an integer/],
        [{ a: [99999999999] }, /out of range for Integer/],
        [{ a: 'x' }, /JSON string/],
        [[1], /JSON array/],
      ] as const) {
        const r = await typed.call({ content_type: 'json', data }, CALL_MS);
        assert.equal(r.response.error?.error_type, 'InputError', JSON.stringify(r.response));
        assert.match(r.response.error?.message ?? '', message);
      }
      const text = await typed.call({ content_type: 'text', data: '{"a":[1]}' }, CALL_MS);
      assert.equal(text.response.error?.error_type, 'InputError');
    });

    test('an artifact built before the harness existed gets it compiled into /tmp when its runner starts', async () => {
      const { tree } = await ctx.srv().server.services.builder.readArtifact(ctx.hello().spec.artifact);
      const classes = path.join(tree, 'target', 'algohost-runner');
      fs.renameSync(classes, `${classes}.away`);
      try {
        const runner = await ctx.start(ctx.fx, ctx.helloBuild());
        assert.match(runner.loadOutput, /no compiled runner harness \(it predates it\): compiling it into \/tmp\/algohost-runner/);
        const { response } = await runner.call({ content_type: 'text', data: 'old' }, CALL_MS);
        assert.deepEqual(JSON.parse(response.result as string), { greeting: 'hello old', chars: 3 });
        await runner.stop();
      } finally {
        fs.renameSync(`${classes}.away`, classes);
      }
    });

    test('an artifact whose harness predates output marks runs the current one, compiled into /tmp: calls back to back keep their prints', async () => {
      const { tree } = await ctx.srv().server.services.builder.readArtifact(ctx.hello().spec.artifact);
      // What the compile step writes next to the classes since the harness writes output marks.
      const protocol = path.join(tree, 'target', 'algohost-runner', 'algohost', 'runner', 'protocol');
      assert.equal(fs.readFileSync(protocol, 'utf8'), 'output-marks\n');
      fs.renameSync(protocol, `${protocol}.away`);
      try {
        const runner = await ctx.start(ctx.fx, ctx.helloBuild());
        assert.match(runner.loadOutput, /predates output-marks: compiling the current one into \/tmp\/algohost-runner/);
        await checkBackToBack(
          runner,
          ['Ada', 'Grace', 'Zoë', 'Linus'].map((name) => ({
            request: { content_type: 'text' as const, data: name },
            check: ({ response, stdout }: CallOutcome) => {
              assert.deepEqual(JSON.parse(response.result as string), { greeting: `hello ${name}`, chars: [...name].length });
              assert.equal(stdout, `Hello: greeting ${name}\n`);
            },
          })),
        );
        await runner.stop();
      } finally {
        fs.renameSync(`${protocol}.away`, protocol);
      }
    });

    test('load() throwing: the runner starts and every call answers LoadingError with its message', async () => {
      const noModel = await ctx.startAdHoc('j_nomodel', 'NoModel', {
        'algorithmia.conf': conf('NoModel'),
        'src/main/java/algorithmia/NoModel/NoModel.java': FAILING_LOAD,
      });
      assert.match(noModel.loadOutput, /NoModel: loading/);
      for (let i = 0; i < 2; i++) {
        const { response } = await noModel.call({ content_type: 'text', data: 'x' }, CALL_MS);
        assert.equal(response.error?.error_type, 'LoadingError');
        assert.equal(response.error?.message, 'model file missing');
        assert.match(response.error?.stacktrace ?? '', /IllegalStateException/);
      }
    });
  });
});
