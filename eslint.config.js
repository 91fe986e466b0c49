import js from '@eslint/js';
import tseslint from 'typescript-eslint';

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
    files: ['payments/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: ['fastify', 'fastify-*', '@fastify/*', '../api/*'] }],
    },
  },
);

// eslint's flat config loader needs the default export (the named-exports rule applies to .ts files only).
export default config;
