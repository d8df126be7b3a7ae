/**
 * The size limits of a unit (docs/development.md, "Units"): no class longer than 300 lines and no
 * function longer than 100 lines in packages/{server,cli,client,web}/src. A unit that grows past
 * them does more than one job; split it by job rather than by line count.
 *
 * Not counted: generated code (packages/client/src/generated) and registration tables: the
 * exported `…Routes(app, services)` functions of packages/server/src/api/routes/, whose body is a
 * list of `app.get(…)`/`app.post(…)` registrations, and the `register(program)` functions of
 * packages/cli/src/commands/, a list of `program.command(…)` declarations. The handlers inside
 * such a table are still functions and are held to the limit.
 *
 * Run by scripts/test.sh. Usage: node --import tsx scripts/check-unit-sizes.ts [--list N]
 * (--list prints the N largest classes and functions whatever their size.)
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export const MAX_CLASS_LINES = 300;
export const MAX_FUNCTION_LINES = 100;

const root = fileURLToPath(new URL('..', import.meta.url));
const SOURCE_ROOTS = ['packages/server/src', 'packages/cli/src', 'packages/client/src', 'packages/web/src'];
const GENERATED = /^packages\/client\/src\/generated\//;
const REGISTRATION_TABLES = [
  { file: /^packages\/server\/src\/api\/routes\/[^/]+\.ts$/, name: /Routes$/ },
  { file: /^packages\/cli\/src\/commands\/[^/]+\.ts$/, name: /^register$/ },
];

interface Unit {
  file: string;
  kind: 'class' | 'function';
  name: string;
  line: number;
  lines: number;
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
    const rel = `${dir}/${entry.name}`;
    if (entry.isDirectory()) out.push(...sourceFiles(rel));
    else if (/\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts') && !GENERATED.test(rel)) out.push(rel);
  }
  return out;
}

function nameOf(node: ts.Node, sf: ts.SourceFile): string {
  const named = node as { name?: ts.Node };
  if (named.name) return named.name.getText(sf);
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) {
    return parent.name.getText(sf);
  }
  if (ts.isCallExpression(parent)) return `callback of ${parent.expression.getText(sf).slice(0, 60)}`;
  return '(anonymous)';
}

function isRegistrationTable(file: string, node: ts.Node): boolean {
  if (!ts.isFunctionDeclaration(node) || !ts.isSourceFile(node.parent)) return false;
  const name = node.name?.text ?? '';
  return REGISTRATION_TABLES.some((table) => table.file.test(file) && table.name.test(name));
}

export function measureUnits(): Unit[] {
  const units: Unit[] = [];
  for (const file of SOURCE_ROOTS.flatMap(sourceFiles)) {
    const text = fs.readFileSync(path.join(root, file), 'utf8');
    const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, file.endsWith('x') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
    const visit = (node: ts.Node): void => {
      const isClass = ts.isClassDeclaration(node) || ts.isClassExpression(node);
      const isFunction =
        ts.isFunctionDeclaration(node) ||
        ts.isFunctionExpression(node) ||
        ts.isArrowFunction(node) ||
        ts.isMethodDeclaration(node) ||
        ts.isConstructorDeclaration(node) ||
        ts.isGetAccessorDeclaration(node) ||
        ts.isSetAccessorDeclaration(node);
      if ((isClass || isFunction) && !isRegistrationTable(file, node)) {
        const start = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
        const end = sf.getLineAndCharacterOfPosition(node.getEnd()).line;
        units.push({ file, kind: isClass ? 'class' : 'function', name: nameOf(node, sf), line: start + 1, lines: end - start + 1 });
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return units;
}

const limitOf = (u: Unit): number => (u.kind === 'class' ? MAX_CLASS_LINES : MAX_FUNCTION_LINES);
const describe = (u: Unit): string => `${u.file}:${u.line} ${u.kind} ${u.name}: ${u.lines} lines (limit ${limitOf(u)})`;

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const units = measureUnits();
  const listAt = process.argv.indexOf('--list');
  if (listAt !== -1) {
    const n = Number(process.argv[listAt + 1] ?? 20);
    for (const kind of ['class', 'function'] as const) {
      console.log(`largest ${kind === 'class' ? 'classes' : 'functions'}:`);
      for (const u of units
        .filter((x) => x.kind === kind)
        .sort((a, b) => b.lines - a.lines)
        .slice(0, n))
        console.log(`  ${describe(u)}`);
    }
  }
  const over = units.filter((u) => u.lines > limitOf(u));
  for (const u of over) console.error(`too long: ${describe(u)}`);
  console.log(`${units.length} classes and functions measured, ${over.length} over the limit`);
  if (over.length > 0) process.exit(1);
}
