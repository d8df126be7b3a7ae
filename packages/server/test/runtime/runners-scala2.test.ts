import { describe } from 'node:test';
import { jvmFixtureSuite } from '../support/jvm-runner-suite.js';

/** The JVM harness running a Scala 2.13 class (scala-library in target/lib) in real sandboxed runners. */
describe('scala 2 runner harness', () => {
  jvmFixtureSuite('scala2');
});
