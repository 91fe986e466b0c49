/**
 * Codemod for docs/architecture.md's rule "between folders, import a folder's index.ts": rewrites every import (and
 * export … from) of product code that reaches past another top-level folder's index.ts to go through it, and adds
 * the names it needs to that index.ts (`export { name } from './file.js'`, `export type` for types). Imports of one
 * file from the same index are merged. Tests beside the code, and the folders that are not product code, are left as
 * they are, as are the files scripts/import-rule.ts lists with their reasons.
 *
 *   npx tsx scripts/imports-through-index.ts [--check] [source folders…]
 *
 * --check lists what it would change and exits 1 when there is any. Names two files of a folder export differently
 * are reported, not rewritten: give one an index name by hand.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { bypass, folderOf, heldToRule, INDEXED_FOLDERS } from './import-rule.js';

const root = path.resolve(import.meta.dirname, '..');

const args = process.argv.slice(2);
const check = args.includes('--check');
const sources = args.filter((a) => !a.startsWith('--'));
const sourceFolders = sources.length > 0 ? sources : INDEXED_FOLDERS;

const configFile = ts.readConfigFile(path.join(root, 'tsconfig.json'), (f) => ts.sys.readFile(f));
const parsed = ts.parseJsonConfigFileContent(configFile.config, ts.sys, root);
const program = ts.createProgram(parsed.fileNames, parsed.options);
const checker = program.getTypeChecker();

const rel = (file: string): string => path.relative(root, file).split(path.sep).join('/');

/** What each index.ts exports now (name → the declaration it stands for), and what the codemod adds. */
const indexExports = new Map<string, Map<string, ts.Symbol>>();
const indexAdditions = new Map<string, Map<string, { names: Set<string>; types: Set<string> }>>();

function resolved(symbol: ts.Symbol): ts.Symbol {
  return symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
}

function exportsOf(folder: string): Map<string, ts.Symbol> {
  let known = indexExports.get(folder);
  if (known) return known;
  known = new Map();
  const source = program.getSourceFile(path.join(root, folder, 'index.ts'));
  const moduleSymbol = source ? checker.getSymbolAtLocation(source) : undefined;
  if (moduleSymbol) for (const symbol of checker.getExportsOfModule(moduleSymbol)) known.set(symbol.name, resolved(symbol));
  indexExports.set(folder, known);
  return known;
}

const problems: string[] = [];

/** Makes `name` (as exported by `target`) an export of its folder's index.ts; false when the index means another. */
function ensureExported(folder: string, target: string, name: string, where: string): boolean {
  const targetFile = program.getSourceFile(path.join(root, target.replace(/\.js$/, '.ts')));
  const moduleSymbol = targetFile ? checker.getSymbolAtLocation(targetFile) : undefined;
  const exported = moduleSymbol ? checker.getExportsOfModule(moduleSymbol).find((s) => s.name === name) : undefined;
  if (!exported) {
    problems.push(`${where}: ${target} has no export ${name}`);
    return false;
  }
  const symbol = resolved(exported);
  const known = exportsOf(folder);
  const already = known.get(name);
  if (already) {
    if (already === symbol) return true;
    problems.push(`${where}: ${folder}/index.ts exports another ${name}; import it from ${target} by an index name of its own`);
    return false;
  }
  known.set(name, symbol);
  const fromIndex = `./${path.posix.relative(folder, target)}`;
  const perFolder = indexAdditions.get(folder) ?? new Map<string, { names: Set<string>; types: Set<string> }>();
  indexAdditions.set(folder, perFolder);
  const entry = perFolder.get(fromIndex) ?? { names: new Set(), types: new Set() };
  perFolder.set(fromIndex, entry);
  (symbol.flags & ts.SymbolFlags.Value ? entry.names : entry.types).add(name);
  return true;
}

interface Edit {
  start: number;
  end: number;
  text: string;
}

const fileEdits = new Map<string, Edit[]>();
let rewritten = 0;

/** The folder whose index.ts a relative import already names (another folder's), if it does. */
function indexOf(fromRel: string, spec: string): string | undefined {
  if (!spec.startsWith('.')) return undefined;
  const target = path.posix.normalize(path.posix.join(path.posix.dirname(fromRel), spec));
  const folder = folderOf(target);
  return target === `${folder}/index.js` && folder !== folderOf(fromRel) && INDEXED_FOLDERS.includes(folder) ? folder : undefined;
}

function indexSpecifier(fromRel: string, folder: string): string {
  const spec = path.posix.relative(path.posix.dirname(fromRel), `${folder}/index.js`);
  return spec.startsWith('.') ? spec : `./${spec}`;
}

for (const source of program.getSourceFiles()) {
  if (source.isDeclarationFile || source.fileName.includes('node_modules')) continue;
  const fromRel = rel(source.fileName);
  if (!sourceFolders.includes(folderOf(fromRel)) || !heldToRule(fromRel)) continue;
  const text = source.getFullText();
  // Declarations per new index specifier, so one file imports each index once (types apart from values).
  const groups = new Map<string, { decls: ts.ImportDeclaration[]; parts: string[]; typeOnly: boolean }>();
  const edits: Edit[] = [];
  for (const statement of source.statements) {
    if (ts.isImportDeclaration(statement) && ts.isStringLiteral(statement.moduleSpecifier)) {
      const spec = statement.moduleSpecifier.text;
      const target = bypass(fromRel, spec);
      const clause = statement.importClause;
      const named = clause?.namedBindings && ts.isNamedImports(clause.namedBindings) ? clause.namedBindings : undefined;
      const alreadyIndex = indexOf(fromRel, spec);
      if (!target && !alreadyIndex) continue;
      if (!clause || !named || clause.name) {
        if (target) problems.push(`${fromRel}: ${spec}: not a named import; rewrite it by hand`);
        continue;
      }
      const folder = target?.folder ?? alreadyIndex ?? '';
      if (target) {
        const ok = named.elements.every((element) => ensureExported(folder, target.target, (element.propertyName ?? element.name).text, fromRel));
        if (!ok) continue;
        rewritten++;
      }
      const newSpec = indexSpecifier(fromRel, folder);
      const key = `${newSpec}\u0000${clause.isTypeOnly ? 'type' : 'value'}`;
      const group = groups.get(key) ?? { decls: [], parts: [], typeOnly: clause.isTypeOnly };
      groups.set(key, group);
      group.decls.push(statement);
      for (const element of named.elements) {
        const part = element.getText(source);
        if (!group.parts.includes(part)) group.parts.push(part);
      }
    } else if (ts.isExportDeclaration(statement) && statement.moduleSpecifier && ts.isStringLiteral(statement.moduleSpecifier)) {
      const spec = statement.moduleSpecifier.text;
      const target = bypass(fromRel, spec);
      if (!target) continue;
      const clause = statement.exportClause;
      if (!clause || !ts.isNamedExports(clause)) {
        problems.push(`${fromRel}: export * from ${spec}: rewrite it by hand`);
        continue;
      }
      const ok = clause.elements.every((element) => ensureExported(target.folder, target.target, (element.propertyName ?? element.name).text, fromRel));
      if (!ok) continue;
      rewritten++;
      const literal = statement.moduleSpecifier;
      edits.push({ start: literal.getStart(source), end: literal.getEnd(), text: `'${indexSpecifier(fromRel, target.folder)}'` });
    }
  }
  for (const [key, group] of groups) {
    const newSpec = key.split('\u0000')[0] ?? '';
    const untouched = group.decls.length === 1 && (group.decls[0]?.moduleSpecifier as ts.StringLiteral).text === newSpec;
    if (untouched) continue;
    const head = group.typeOnly ? 'import type' : 'import';
    let line = `${head} { ${group.parts.join(', ')} } from '${newSpec}';`;
    if (line.length > 120) line = `${head} {\n${group.parts.map((p) => `  ${p},`).join('\n')}\n} from '${newSpec}';`;
    const [first, ...rest] = group.decls;
    if (!first) continue;
    edits.push({ start: first.getStart(source), end: first.getEnd(), text: line });
    for (const decl of rest) {
      let end = decl.getEnd();
      if (text[end] === '\n') end++;
      edits.push({ start: decl.getStart(source), end, text: '' });
    }
  }
  if (edits.length > 0) fileEdits.set(source.fileName, edits);
}

function indexLines(additions: Map<string, { names: Set<string>; types: Set<string> }>): string {
  const lines: string[] = [];
  for (const [from, { names, types }] of [...additions].sort(([a], [b]) => a.localeCompare(b))) {
    const parts = [...[...names].sort(), ...[...types].sort().map((t) => (names.size > 0 ? `type ${t}` : t))];
    const head = names.size > 0 ? 'export' : 'export type';
    let line = `${head} { ${parts.join(', ')} } from '${from}';`;
    if (line.length > 120) line = `${head} {\n${parts.map((p) => `  ${p},`).join('\n')}\n} from '${from}';`;
    lines.push(line);
  }
  return `${lines.join('\n')}\n`;
}

if (check) {
  for (const file of fileEdits.keys()) console.log(`would rewrite ${rel(file)}`);
  for (const [folder, additions] of indexAdditions) console.log(`would add to ${folder}/index.ts:\n${indexLines(additions)}`);
} else {
  for (const [file, edits] of fileEdits) {
    let text = readFileSync(file, 'utf8');
    for (const edit of edits.sort((a, b) => b.start - a.start)) text = text.slice(0, edit.start) + edit.text + text.slice(edit.end);
    writeFileSync(file, text);
  }
  for (const [folder, additions] of indexAdditions) {
    const indexFile = path.join(root, folder, 'index.ts');
    const before = existsSync(indexFile) ? readFileSync(indexFile, 'utf8') : '';
    writeFileSync(indexFile, before + indexLines(additions));
  }
}
console.log(`${rewritten} imports through index.ts; ${fileEdits.size} files; ${problems.length} left:`);
for (const problem of problems) console.log(`  ${problem}`);
process.exitCode = check && (rewritten > 0 || problems.length > 0) ? 1 : 0;
