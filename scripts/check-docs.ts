/**
 * Keeps the documents a reader follows true to the repository (run by scripts/test.sh):
 *
 * - every relative link in the Markdown files a reader starts from (README.md, ARCHITECTURE.md,
 *   BENCHMARKS.md, docs/, examples/) names a file that exists, and its #anchor a heading there;
 *   and every code block in them is closed;
 * - README.md stays a front door (at most 250 lines) and ARCHITECTURE.md fits on one screen (120);
 * - no file cites a numbered history entry of BENCHMARKS.md (a table of current figures): a reason
 *   goes into docs/performance.md as a rule, and code cites the rule;
 * - every "docs/performance.md, rule N" names a rule that exists;
 * - every file the `warm-call-path` block of eslint.config.js names still exists, so the lint rule
 *   of docs/performance.md rule 2 does not silently stop applying when a file moves, and rule 2
 *   names each of them (its path under packages/server/src/), so the rule says where it holds.
 *
 * Usage: node --import tsx scripts/check-docs.ts
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const MAX_LINES: Record<string, number> = { 'README.md': 250, 'ARCHITECTURE.md': 120 };

const tracked = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' })
  .split('\n')
  .filter((f) => f !== '' && fs.existsSync(path.join(ROOT, f)));
const problems: string[] = [];
const read = (file: string): string => fs.readFileSync(path.join(ROOT, file), 'utf8');

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[`*_]/g, '')
    .replace(/[^\p{L}\p{N} -]/gu, '')
    .replace(/ /g, '-');
}

function anchorsOf(file: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  let fenced = false;
  for (const line of read(file).split('\n')) {
    if (line.startsWith('```')) fenced = !fenced;
    const m = fenced ? null : /^#{1,6} (.+)$/.exec(line);
    if (!m) continue;
    const base = slug(m[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

const readerDocs = tracked.filter((f) => f.endsWith('.md') && (!f.includes('/') || f.startsWith('docs/') || f.startsWith('examples/')));
for (const file of readerDocs) {
  if ((read(file).match(/^\s*```/gm) ?? []).length % 2 !== 0) problems.push(`${file}: a code block is never closed`);
  const text = read(file).replace(/```[\s\S]*?```/g, '');
  for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    const target = m[1]!;
    if (/^[a-z]+:/i.test(target)) continue; // a URL or mailto:
    const [pathPart, anchor] = target.split('#') as [string, string | undefined];
    const resolved = pathPart === '' ? file : path.normalize(path.join(path.dirname(file), pathPart));
    if (!fs.existsSync(path.join(ROOT, resolved))) {
      problems.push(`${file}: link to ${target}: no such file`);
      continue;
    }
    if (anchor !== undefined && resolved.endsWith('.md') && !anchorsOf(resolved).has(anchor)) {
      problems.push(`${file}: link to ${target}: ${resolved} has no heading with that anchor`);
    }
  }
}

for (const [file, max] of Object.entries(MAX_LINES)) {
  const lines = read(file).split('\n').length - 1;
  if (lines > max) problems.push(`${file}: ${lines} lines, more than ${max}`);
}

const rules = new Set([...read('docs/performance.md').matchAll(/^## (\d+)\. /gm)].map((m) => Number(m[1])));
/** A citation may wrap: the words between may be joined by a comment's line break. */
const GAP = String.raw`[,;:]?\s*(?:(?:\*|//|#)\s*)?`;
const diaryCitation = new RegExp(String.raw`BENCHMARKS\.md${GAP}["“]?sessions?\s+\d+`, 'i');
const ruleCitation = new RegExp(String.raw`docs/performance\.md${GAP}rules?\s+(\d+)`, 'g');
for (const file of tracked) {
  if (file === 'scripts/check-docs.ts' || !/\.(ts|tsx|js|mjs|cjs|md|sh|yaml|yml|json)$/.test(file)) continue;
  const text = read(file);
  if (diaryCitation.test(text)) problems.push(`${file}: cites a benchmark diary entry; cite a rule of docs/performance.md instead`);
  if (file === 'BENCHMARKS.md' && /^#+ .*\bsession \d+/im.test(text))
    problems.push(`${file}: holds diary entries; it is a table of current figures`);
  for (const m of text.matchAll(ruleCitation)) {
    if (!rules.has(Number(m[1]))) problems.push(`${file}: cites docs/performance.md rule ${m[1]}, which does not exist`);
  }
}

const { default: eslintConfig } = (await import(path.join(ROOT, 'eslint.config.js'))) as { default: { name?: string; files?: string[] }[] };
const performance = read('docs/performance.md');
const ruleTwo = performance.slice(performance.indexOf('\n## 2. '), performance.indexOf('\n## 3. '));
const warmPath = eslintConfig.find((block) => block.name === 'warm-call-path');
if (!warmPath?.files) problems.push('eslint.config.js: no block named warm-call-path (docs/performance.md, rule 2)');
for (const pattern of warmPath?.files ?? []) {
  const re = new RegExp(
    `^${pattern
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*\*/g, '\0')
      .replace(/\*/g, '[^/]*')
      .replace(/\0/g, '.*')}$`,
  );
  if (!tracked.some((f) => re.test(f)))
    problems.push(`eslint.config.js, warm-call-path: ${pattern} matches no file (moved? name it again)`);
  const named = pattern.replace(/^packages\/server\/src\//, '');
  if (!ruleTwo.includes(`\`${named}\``))
    problems.push(`docs/performance.md rule 2 does not name \`${named}\` (eslint.config.js, warm-call-path)`);
}

if (problems.length > 0) {
  for (const p of problems) console.error(p);
  process.exit(1);
}
console.log(`docs: ${readerDocs.length} Markdown files' links resolve; lengths, rule citations and the warm-call lint scope hold`);
