import { defineConfig } from 'vitest/config';

export const config = defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['{core,storage,crawler,extract,indexer,reranker,search,payments,runtime,api,cli,bench}/**/*.test.ts'],
          testTimeout: 30_000,
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts'],
          testTimeout: 600_000,
          hookTimeout: 600_000,
          fileParallelism: false,
        },
      },
    ],
  },
});

// vitest's config loader needs the default export.
// eslint-disable-next-line no-restricted-syntax
export default config;
