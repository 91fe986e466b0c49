import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import importX from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';

/** Every top-level folder of ours that code can import from. */
const OURS = ['core', 'storage', 'extract', 'crawler', 'indexer', 'reranker', 'search', 'payments', 'runtime', 'api', 'cli', 'bench', 'test', 'spec', 'sdk', 'dashboard', 'mcp'];

/**
 * What each product folder may import (docs/architecture.md's table, enforced). Tests beside the code, contract
 * suites and everything in bench/ and test/ are exempt: they may import anything, and nothing may import them.
 */
const MAY_IMPORT = {
  core: [],
  storage: ['core'],
  extract: ['core'],
  reranker: ['core'],
  crawler: ['core', 'storage', 'extract'],
  indexer: ['core', 'storage', 'extract', 'reranker'],
  search: ['core', 'indexer', 'reranker'],
  payments: ['core', 'storage'],
  runtime: ['core', 'storage', 'extract', 'crawler', 'indexer', 'reranker', 'search', 'payments'],
  api: ['core', 'storage', 'extract', 'crawler', 'indexer', 'reranker', 'search', 'payments'],
  // The CLI runs domain operations (a crawl, an extraction) on parts the composition root built; it never builds
  // storage, models or payment modes itself.
  cli: ['core', 'runtime', 'api', 'crawler', 'extract', 'indexer', 'search'],
};

const zones = Object.entries(MAY_IMPORT).map(([folder, allowed]) => ({
  target: `./${folder}`,
  from: OURS.filter((other) => other !== folder && !allowed.includes(other)).map((other) => `./${other}`),
  message: `${folder}/ may import only ${allowed.length ? allowed.join(', ') : 'nothing of ours'} (docs/architecture.md)`,
}));

const productFiles = Object.keys(MAY_IMPORT).map((folder) => `${folder}/**/*.ts`);
const testFiles = ['**/*.test.ts', '**/*.contract.ts'];

export const config = tseslint.config(
  { ignores: ['node_modules/**', 'data/**', 'bench/results/**', 'sdk/**', 'coverage/**'] },
  js.configs.recommended,
  { files: ['bin/**/*.js', '*.js'], languageOptions: { globals: { process: 'readonly', console: 'readonly' } } },
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-restricted-syntax': ['error', { selector: 'ExportDefaultDeclaration', message: 'Use named exports.' }],
    },
  },
  {
    files: productFiles,
    ignores: testFiles,
    plugins: { 'import-x': importX },
    settings: { 'import-x/resolver-next': [createTypeScriptImportResolver({ project: './tsconfig.json' })] },
    rules: {
      'import-x/no-restricted-paths': ['error', { zones }],
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'vitest', message: 'Test code belongs in *.test.ts files and test/.' }],
          patterns: [{ group: ['**/*.contract.js', '**/*.test.js'], message: 'Contract suites and tests are not product code.' }],
        },
      ],
    },
  },
  {
    // The payments core knows no HTTP framework (x402's reference shape: a framework-free core, thin adapters).
    files: ['payments/**/*.ts'],
    ignores: testFiles,
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: 'vitest', message: 'Test code belongs in *.test.ts files and test/.' }],
          patterns: [
            { group: ['fastify', 'fastify-*', '@fastify/*'], message: 'payments/ knows no HTTP framework.' },
            { group: ['**/*.contract.js', '**/*.test.js'], message: 'Contract suites and tests are not product code.' },
          ],
        },
      ],
    },
  },
);

// eslint's flat config loader needs the default export (the named-exports rule applies to .ts files only).
export default config;
