import { readFileSync } from 'node:fs';
import path from 'node:path';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * The map: docs/architecture.md's table of folders (between <!-- zones:start --> and <!-- zones:end -->) says what each
 * may import; "anything" folders are not zoned, and no zoned folder may import them. One table for the page and the
 * lint, so they cannot disagree.
 */
function readMap() {
  const page = readFileSync(path.join(import.meta.dirname, 'docs/architecture.md'), 'utf8');
  const table = /<!-- zones:start -->([\s\S]*?)<!-- zones:end -->/.exec(page)?.[1];
  if (!table) throw new Error('docs/architecture.md: no <!-- zones:start --> table');
  const rows = table
    .split('\n')
    .filter((line) => /^\| `[a-z]+\/` \|/.test(line))
    .map((line) => line.split('|').map((cell) => cell.trim()));
  const ours = [];
  const mayImport = {};
  const butNot = {};
  for (const [, folderCell, importCell] of rows) {
    const folder = folderCell.replace(/[`/]/g, '');
    ours.push(folder);
    if (importCell === 'anything') continue;
    const named = [...importCell.matchAll(/`([a-z]+)`/g)].map((m) => m[1]);
    if (importCell.startsWith('anything but ')) {
      butNot[folder] = named;
      continue;
    }
    mayImport[folder] = importCell === 'nothing of ours' ? [] : named;
  }
  // "anything but X": every folder of ours except X (tests beside the code included: the rule is about the folders).
  for (const [folder, excluded] of Object.entries(butNot)) mayImport[folder] = ours.filter((other) => other !== folder && !excluded.includes(other));
  return { ours, mayImport, wholeFolder: Object.keys(butNot) };
}

/** Every top-level folder of the repository, and what each product folder may import (tests beside the code exempt). */
const { ours: OURS, mayImport: MAY_IMPORT, wholeFolder: WHOLE_FOLDER } = readMap();

const noDefaultExport = { selector: 'ExportDefaultDeclaration', message: 'Use named exports.' };
const testFiles = ['**/*.test.ts', '**/*.contract.ts'];
const notProductCode = [
  { name: 'vitest', message: 'Test code belongs in *.test.ts files and test/.' },
];
const notTests = { regex: '\\.(test|contract)\\.js$', message: 'Contract suites and tests are not product code.' };
const noFramework = (folder) => ({ group: ['fastify', 'fastify-*', '@fastify/*'], message: `${folder}/ knows no HTTP framework.` });
const browserOnly = { group: ['node:*'], message: 'dashboard/ runs in the browser: no Node built-ins.' };

/**
 * One block per folder and depth: a file `depth` folders below the root reaches another top-level folder with exactly
 * `depth` "../" segments, so the regular expression names the folder an import lands in without a resolver.
 */
function zoneBlocks() {
  const blocks = [];
  for (const [folder, allowed] of Object.entries(MAY_IMPORT)) {
    const forbidden = OURS.filter((other) => other !== folder && !allowed.includes(other));
    const whole = WHOLE_FOLDER.includes(folder);
    const message = whole
      ? `${folder}/ may import anything but ${forbidden.join(', ')} (the map in docs/architecture.md)`
      : `${folder}/ may import only ${allowed.length ? allowed.join(', ') : 'nothing of ours'} (the map in docs/architecture.md)`;
    for (let depth = 1; depth <= 5; depth++) {
      const landing = `^(\\.\\./){${depth}}(${forbidden.join('|')})(/|$)`;
      if (whole) {
        // Test and benchmark code: every file of the folder, vitest and contract suites allowed.
        blocks.push({
          files: [`${folder}/${'*/'.repeat(depth - 1)}*.{ts,tsx}`],
          rules: {
            'no-restricted-imports': ['error', { patterns: [{ regex: landing, message }] }],
            'no-restricted-syntax': ['error', noDefaultExport, { selector: `ImportExpression > Literal[value=/${landing.replaceAll('/', '\\/')}/]`, message }],
          },
        });
        continue;
      }
      // Its unit tests beside the code may import test worlds (testkit/), never the suites or the benchmarks.
      const testLanding = `^(\\.\\./){${depth}}(test|bench)(/|$)`;
      blocks.push({
        files: testFiles.map((glob) => `${folder}/${'*/'.repeat(depth - 1)}${glob.replace('**/', '')}`),
        rules: { 'no-restricted-imports': ['error', { patterns: [{ regex: testLanding, message: `a unit test of ${folder}/ may not import test/ or bench/: shared worlds live in testkit/` }] }] },
      });
      const patterns = [{ regex: landing, message }, notTests];
      if (folder === 'payments' || folder === 'accounts') patterns.push(noFramework(folder));
      if (folder === 'dashboard') patterns.push(browserOnly);
      blocks.push({
        files: [`${folder}/${'*/'.repeat(depth - 1)}*.{ts,tsx}`],
        ignores: testFiles,
        rules: {
          'no-restricted-imports': ['error', { paths: notProductCode, patterns }],
          // import() obeys the same zones (no-restricted-imports sees static imports only).
          'no-restricted-syntax': ['error', noDefaultExport, { selector: `ImportExpression > Literal[value=/${landing.replaceAll('/', '\\/')}/]`, message }],
        },
      });
    }
  }
  return blocks;
}

export const config = tseslint.config(
  { ignores: ['node_modules/**', 'data/**', 'bench/results/**', 'sdk/**', 'coverage/**', 'dashboard/dist/**'] },
  js.configs.recommended,
  { files: ['bin/**/*.js', '*.js'], languageOptions: { globals: { process: 'readonly', console: 'readonly' } } },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.{ts,tsx}'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-restricted-syntax': ['error', noDefaultExport],
    },
  },
  ...zoneBlocks(),
);

// eslint's flat config loader needs the default export (the named-exports rule applies to .ts files only).
export default config;
