import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export const config = tseslint.config(
  { ignores: ['node_modules/**', 'data/**', 'bench/results/**', 'sdk/**', 'coverage/**'] },
  js.configs.recommended,
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
    files: ['payments/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: ['fastify', 'fastify-*', '@fastify/*', '../api/*'] }],
    },
  },
);

// eslint's flat config loader needs the default export; this is the one place it is allowed.
// eslint-disable-next-line no-restricted-syntax
export default config;
