import { defineConfig } from 'vitest/config';

export const config = defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['{core,storage,crawler,extract,indexer,reranker,search,payments,accounts,webhooks,runtime,api,cli,bench,dashboard}/**/*.test.ts'],
          testTimeout: 30_000,
        },
      },
      {
        test: {
          name: 'sdk-ts',
          include: ['sdk/ts/test/**/*.test.ts', 'mcp/**/*.test.ts'],
          exclude: ['sdk/ts/test/live.test.ts'],
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
      // The TypeScript library's live suite: run by test/sdk-conformance.test.ts against the server it starts.
      ...(process.env['NOTARY_LIVE_URL'] ? [{ test: { name: 'sdk-ts-live', include: ['sdk/ts/test/live.test.ts'], testTimeout: 60_000 } }] : []),
    ],
  },
});

// vitest's config loader needs the default export.
// eslint-disable-next-line no-restricted-syntax
export default config;
