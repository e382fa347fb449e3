#!/usr/bin/env node
// Lists the functions of the source folders by length, longest first: lines from the line of the
// function's start to the line of its end, nested functions included in their enclosing one's count
// (as eslint's max-lines-per-function counts them, which `npm run lint` holds at 120 in lib/ and plugins/).
//
// usage: node scripts/function-lengths.mjs [--top N] [folders...]   (default: lib plugins app, the top 20)
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const args = process.argv.slice(2);
let top = 20;
const folders = [];
for (let index = 0; index < args.length; index++) {
  if (args[index] === '--top') top = Number(args[++index]);
  else folders.push(args[index]);
}
if (folders.length === 0) folders.push('lib', 'plugins', 'app');
if (!Number.isInteger(top) || top < 0) {
  console.error('function-lengths: --top takes a whole number, 0 for every function');
  process.exit(2);
}

function sourceFiles(folder) {
  if (!fs.existsSync(folder)) {
    console.error(`function-lengths: no folder ${folder}`);
    process.exit(2);
  }
  return fs
    .readdirSync(folder, { recursive: true })
    .map(String)
    .filter((name) => name.endsWith('.ts') && !name.endsWith('.d.ts'))
    .map((name) => path.join(folder, name));
}

/** What to call a function: its declared name, or the name of what it is assigned to, or where it sits. */
function nameOf(node) {
  if (node.name && ts.isIdentifier(node.name)) return node.name.text;
  if (node.name) return node.name.getText();
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) {
    return parent.name.getText();
  }
  if (ts.isCallExpression(parent)) return `(argument of ${parent.expression.getText().slice(0, 40)})`;
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  return '(anonymous)';
}

const found = [];
for (const file of folders.flatMap(sourceFiles)) {
  const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const visit = (node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line + 1;
      found.push({ lines: end - start + 1, where: `${file}:${start}`, name: nameOf(node) });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
}
found.sort((a, b) => b.lines - a.lines || a.where.localeCompare(b.where));
for (const { lines, where, name } of top === 0 ? found : found.slice(0, top)) {
  console.log(`${String(lines).padStart(5)}  ${where}  ${name}`);
}
