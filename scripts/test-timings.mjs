/**
 * A test reporter (node --test-reporter) that prints the test files that took longest: the sum of
 * each file's top-level tests and suites, slowest first. scripts/run-tests.sh shows it before its
 * summary line, so a slow run says where its time went. A test defined in a file another imports
 * (test/cluster/topology/) counts for the file that defines it. Plain JavaScript: Node loads
 * reporters before the TypeScript loader applies.
 *
 * With ALGOHOST_TEST_TIMINGS_FILE it also keeps each file's latest time in that JSON file
 * (relative path → ms), from which scripts/run-tests.sh starts the longest files first.
 */
import fs from 'node:fs';
import path from 'node:path';
import process from 'node:process';

const SHOWN = 15;

/** @param {AsyncIterable<{ type: string, data: { nesting: number, file?: string, details?: { duration_ms?: number } } }>} source */
export default async function* testTimings(source) {
  const byFile = new Map();
  for await (const event of source) {
    if ((event.type === 'test:pass' || event.type === 'test:fail') && event.data.nesting === 0) {
      const file = event.data.file ?? '(unknown file)';
      byFile.set(file, (byFile.get(file) ?? 0) + (event.data.details?.duration_ms ?? 0));
    }
  }
  const rows = [...byFile].sort((a, b) => b[1] - a[1]);
  const total = rows.reduce((sum, [, ms]) => sum + ms, 0);
  if (process.env.ALGOHOST_TEST_TIMINGS_FILE) remember(process.env.ALGOHOST_TEST_TIMINGS_FILE, rows);
  yield `slowest test files (their tests' time, ${(total / 1000).toFixed(0)} s in all over ${rows.length} files, two at a time):\n`;
  for (const [file, ms] of rows.slice(0, SHOWN))
    yield `${(ms / 1000).toFixed(1).padStart(8)} s  ${file.replace(`${process.cwd()}/`, '')}\n`;
}

/** Merges this run's times into the file (files not run keep their earlier time). */
function remember(file, rows) {
  let known = {};
  try {
    known = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    // No times yet (or a file from an interrupted write): this run's are the first.
  }
  for (const [test, ms] of rows) known[path.relative(process.cwd(), test)] = Math.round(ms);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(`${file}.tmp`, `${JSON.stringify(known, null, 1)}\n`);
  fs.renameSync(`${file}.tmp`, file);
}
