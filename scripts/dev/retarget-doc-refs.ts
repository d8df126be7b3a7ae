/**
 * Points references to documents outside this repository at the repository's own docs:
 *
 *   compat §N, reference/compat.md §N, compat section N  →  docs/compatibility.md §N (same numbers)
 *   spec endpoint N        →  docs/compatibility.md §9.2 endpoint N
 *   spec "Git access"      →  docs/compatibility.md §9.3
 *   spec rule N            →  docs/compatibility.md §9.1 rule N
 *   spec Resources         →  docs/compatibility.md §9.5
 *   spec Versioning/Limits →  docs/compatibility.md §9.6
 *   the spec's migration workflow, "as the spec says"  →  docs/compatibility.md §9.4
 *   DESIGN §2, DESIGN.md §2  →  docs/design/cluster.md, "Ports with two implementations"
 *   DESIGN §4, DESIGN.md §4  →  docs/design/performance.md, "Budgets"
 *   ../shared/… paths      →  the matching file under docs/
 *
 * Usage: node --import tsx scripts/dev/retarget-doc-refs.ts [--check]
 *   (no option)  rewrite every tracked text file in place, print what changed, then list any
 *                outside reference left that no rule covers;
 *   --check      change nothing; exit 1 if any outside reference is left.
 * Generated files (openapi.json, packages/client/src/generated/) are rewritten like their
 * sources, so `npm run openapi:check` still passes; run `npm run openapi` if it does not.
 * Idempotent: a second run changes nothing.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SELF = path.relative(ROOT, fileURLToPath(import.meta.url));
const CHECK = process.argv.includes('--check');

const COMPAT = 'docs/compatibility.md';
const DESIGN = 'docs/design/';
/** Whatever a comment may put between two words of one reference when it wraps a line. */
const WRAP = String.raw`(\s*(?:\n\s*(?:\*|//|#)?\s*)?)`;

type Rule = [RegExp, string | ((...m: string[]) => string)];
const RULES: Rule[] = [
  // One reference naming both documents (presenters.ts): before the rules for each.
  [/\bspec Resources, compat §/g, `${COMPAT} §9.5, §`],
  // Paths into the sibling shared/ folder.
  [/(?:\.\.\/)?shared\/reference\/compat\.md/g, COMPAT],
  [/(?:\.\.\/)?shared\/spec\/interface-spec\.md/g, `${COMPAT} §9`],
  [/(?:\.\.\/)?shared\/DESIGN\.md/g, DESIGN],
  // The compatibility reference, under its three names.
  [/\breference\/compat\.md\b/g, COMPAT],
  [/\bcompat §/g, `${COMPAT} §`],
  [/\bcompat section (\d)/g, `${COMPAT} section $1`],
  [/\(compat: /g, `(${COMPAT} §2: `],
  // The interface specification, by the parts the code cites. Longer phrases first.
  [new RegExp(String.raw`\bspec rule (\d) and Limits 3\b`, 'g'), `${COMPAT} §9.1 rule $1 and §9.6`],
  [new RegExp(String.raw`\bspec Versioning (\d), Limits (\d)\b`, 'g'), `${COMPAT} §9.6`],
  [new RegExp(String.raw`\bspec${WRAP}Versioning (\d)\b`, 'g'), (_m, gap) => `${COMPAT}${gap}§9.6`],
  [/\bspec rule (\d)\b/g, `${COMPAT} §9.1 rule $1`],
  [/\bspec endpoint (\d)\b/g, `${COMPAT} §9.2 endpoint $1`],
  [/\bspec "Git access"/g, `${COMPAT} §9.3`],
  [/\bspec Resources\b/g, `${COMPAT} §9.5`],
  [/\bthe spec's migration workflow\b/g, `the migration workflow of ${COMPAT} §9.4`],
  [new RegExp(String.raw`\bas the spec${WRAP}says\b`, 'g'), (_m, gap) => `as ${COMPAT}${gap}§9.4 says`],
  // The design notes.
  [/\bDESIGN(?:\.md)? §2\b/g, `${DESIGN}cluster.md, "Ports with two implementations"`],
  [/\bDESIGN(?:\.md)? §4\b/g, `${DESIGN}performance.md, "Budgets"`],
];

/** Outside references no rule maps: reported, for a person to decide. */
const LEFT = [
  /\bcompat(?:\.md)?\b(?!ible|ibility)/,
  /\bshared\/(?:spec|reference|DESIGN|ENGINEERING)/,
  /\b(?:DESIGN|ENGINEERING)(?:\.md)? ?§/,
  /\binfra-notes\b/,
  /\bspec (?:endpoint|rule|Versioning|Limits|Resources|Authentication|Errors|Events)\b/,
  /\bspec "/,
  /\bthe spec\b/,
];

function trackedTextFiles(): string[] {
  const out = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' });
  return out
    .split('\0')
    .filter(Boolean)
    .filter((f) => !f.startsWith('docs/') && f !== SELF && !f.endsWith('package-lock.json') && !f.includes('node_modules/'))
    .filter((f) => {
      const abs = path.join(ROOT, f);
      if (!fs.existsSync(abs) || !fs.statSync(abs).isFile()) return false;
      return !fs.readFileSync(abs).subarray(0, 8000).includes(0);
    });
}

let changedFiles = 0;
let changes = 0;
const left: string[] = [];
for (const file of trackedTextFiles()) {
  const abs = path.join(ROOT, file);
  const before = fs.readFileSync(abs, 'utf8');
  let text = before;
  for (const [pattern, replacement] of RULES) {
    text = text.replace(pattern, (...m: unknown[]) => {
      changes++;
      if (typeof replacement === 'function') return replacement(...(m as string[]));
      return replacement.replace(/\$(\d)/g, (_x, i: string) => String(m[Number(i)] ?? ''));
    });
  }
  if (text !== before) {
    changedFiles++;
    if (CHECK) left.push(`${file}: references to retarget`);
    else {
      fs.writeFileSync(abs, text);
      console.log(`rewrote ${file}`);
    }
  }
  text.split('\n').forEach((line, i) => {
    if (LEFT.some((p) => p.test(line)) && !line.includes(COMPAT) && !line.includes(DESIGN)) left.push(`${file}:${i + 1}: ${line.trim()}`);
  });
}

if (CHECK) {
  for (const l of left) console.log(l);
  console.log(`${changedFiles} files with ${changes} references to retarget; ${left.length} lines to look at`);
  process.exit(left.length ? 1 : 0);
}
console.log(`${changes} references in ${changedFiles} files now point into docs/`);
if (left.length) {
  console.log('\nLeft for a person to decide (no rule covers them):');
  for (const l of left) console.log(`  ${l}`);
}
