/**
 * The fixture algorithms under test/fixtures/algorithms/<language>/: `hello/` builds and
 * answers per expected-output.json; `broken/` fails to build with `broken_error` in its log.
 * Adding a language = adding a folder here and seeing its tests pass.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const FIXTURES_DIR = fileURLToPath(new URL('../../../../test/fixtures/algorithms/', import.meta.url));

export interface AlgorithmFixture {
  language: string;
  environment: string;
  name: string;
  brokenError: string;
  hello: string;
  broken: string;
}

export function algorithmFixtures(): AlgorithmFixture[] {
  return fs
    .readdirSync(FIXTURES_DIR)
    .filter((d) => fs.existsSync(path.join(FIXTURES_DIR, d, 'fixture.json')))
    .sort()
    .map((language) => {
      const dir = path.join(FIXTURES_DIR, language);
      const meta = JSON.parse(fs.readFileSync(path.join(dir, 'fixture.json'), 'utf8')) as {
        environment: string;
        name: string;
        broken_error: string;
      };
      return {
        language,
        environment: meta.environment,
        name: meta.name,
        brokenError: meta.broken_error,
        hello: path.join(dir, 'hello'),
        broken: path.join(dir, 'broken'),
      };
    });
}

/** `ALGOHOST_TEST_LANGUAGES=python,java` narrows the per-language suites while iterating. */
export function selectedFixtures(): AlgorithmFixture[] {
  const only = process.env.ALGOHOST_TEST_LANGUAGES?.split(',').map((s) => s.trim());
  return algorithmFixtures().filter((f) => !only || only.includes(f.language));
}

export interface ExpectedOutput {
  input: unknown;
  content_type: 'json' | 'text' | 'binary';
  result: unknown;
}

/** The fixture's expected-output.json: what each input answers when the algorithm is called. */
export function expectedOutputs(fx: Pick<AlgorithmFixture, 'hello'>): ExpectedOutput[] {
  return JSON.parse(fs.readFileSync(path.join(path.dirname(fx.hello), 'expected-output.json'), 'utf8')) as ExpectedOutput[];
}
