import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** Every top-level folder of ours that code can import from. */
const OURS = ['core', 'storage', 'extract', 'crawler', 'indexer', 'reranker', 'search', 'payments', 'accounts', 'runtime', 'api', 'cli', 'bench', 'test', 'spec', 'sdk', 'dashboard', 'mcp'];

/**
 * What each product folder may import (the architecture table, enforced). Tests beside the code and contract suites
 * are exempt, as are bench/ and test/: they may import anything, and nothing may import them.
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
  // People, sessions and sign-in throttling; sign-up creates a tenant through payments/.
  accounts: ['core', 'storage', 'payments'],
  runtime: ['core', 'storage', 'extract', 'crawler', 'indexer', 'reranker', 'search', 'payments', 'accounts'],
  api: ['core', 'storage', 'extract', 'crawler', 'indexer', 'reranker', 'search', 'payments', 'accounts'],
  // The CLI runs domain operations (a crawl, an extraction) on parts the composition root built; it never builds
  // storage, models or payment modes itself.
  cli: ['core', 'runtime', 'api', 'crawler', 'extract', 'indexer', 'search', 'mcp', 'sdk'],
  // The MCP server is a client of the HTTP API like any other: through the TypeScript SDK only.
  mcp: ['sdk'],
  sdk: [],
  // The web UI runs in the browser and talks to the API over HTTP like any client.
  dashboard: ['sdk'],
};

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
    const message = `${folder}/ may import only ${allowed.length ? allowed.join(', ') : 'nothing of ours'} (the architecture table in README's Layout)`;
    for (let depth = 1; depth <= 5; depth++) {
      const patterns = [{ regex: `^(\\.\\./){${depth}}(${forbidden.join('|')})(/|$)`, message }, notTests];
      if (folder === 'payments' || folder === 'accounts') patterns.push(noFramework(folder));
      if (folder === 'dashboard') patterns.push(browserOnly);
      blocks.push({
        files: [`${folder}/${'*/'.repeat(depth - 1)}*.{ts,tsx}`],
        ignores: testFiles,
        rules: { 'no-restricted-imports': ['error', { paths: notProductCode, patterns }] },
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
      'no-restricted-syntax': ['error', { selector: 'ExportDefaultDeclaration', message: 'Use named exports.' }],
    },
  },
  ...zoneBlocks(),
);

// eslint's flat config loader needs the default export (the named-exports rule applies to .ts files only).
export default config;
