import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../testkit/components.js';

/**
 * The shared code loops over the registered plug-ins (payments/plugins.ts) and names none of them: a payment mode or
 * the receipts extension named here would mean that adding or removing one edits shared files again (issue 31, item 1).
 */
/** Every product source file of a folder (tests aside). */
function sourcesOf(folder: string): string[] {
  return readdirSync(path.join(repoRoot, folder), { recursive: true, encoding: 'utf8' })
    .filter((file) => /\.tsx?$/.test(file) && !/\.test\.tsx?$/.test(file))
    .map((file) => `${folder}/${file}`)
    .sort();
}

/**
 * The folders whose every file is shared: the API's routes and dashboard endpoints, the command line (a mode's
 * commands, its server included, come from its plug-in's `cli` hook) and the composition root.
 */
const SHARED_FILES = [
  ...sourcesOf('core'),
  ...sourcesOf('api'),
  ...sourcesOf('cli'),
  ...sourcesOf('runtime'),
  // The dashboard's pages (the party keys' one too) say what a page does, not which mode it serves.
  ...sourcesOf('dashboard/src'),
  'storage/migrations.ts',
  'storage/db.ts',
  'payments/plugin.ts',
];

/**
 * The plug-ins by name, as code names them: x402 and MPP anywhere; the API-key mode as a mode (`'api_key'`,
 * `modes.api_key`, `modes/api-key`; other settings called api_key are no mode); signed receipts as a section or folder.
 */
const PLUGIN_NAMES = /\bx402\b|\bmpp\b|modes\W{1,4}api[-_]key|mode\s*(?:===|!==|:)\s*['"`]api_key|['"`]receipts['"`]|\.receipts\b|\/receipts\//i;

export function pluginNamesIn(source: string): string[] {
  return source
    .split('\n')
    .map((line, index) => ({ line, index }))
    .filter(({ line }) => PLUGIN_NAMES.test(line))
    .map(({ line, index }) => `${index + 1}: ${line.trim()}`);
}

/**
 * The files that loop over the registered index backends (indexer/backends/plugins.ts): a backend named here would
 * mean that adding or removing one edits shared files again. `postgres` alone is also the storage driver (shared), so
 * the backend is matched where it is one: `indexer.postgres`, a comparison of `backend`, its folder.
 */
const BACKEND_SHARED_FILES = [
  ...SHARED_FILES,
  'storage/frontier.ts',
  'runtime/backends.ts',
  'runtime/runtime.ts',
  'runtime/index.ts',
  'runtime/dense.ts',
  'cli/index-admin.ts',
  'indexer/backend-plugin.ts',
  'indexer/sql-vector-store.ts',
];

const BACKEND_NAMES =
  /meilisearch|\bfts5\b|pgvector|\bPgVector|indexer\W{1,4}postgres|backend\s*(?:===|!==)\s*['"`]postgres|backends\/(?:fts5|postgres|meilisearch)/i;

/**
 * Backend names in code (comments may say which engine a shared setting was measured on, e.g. that core/text.ts stems
 * as FTS5's tokenizer does).
 */
export function backendNamesIn(source: string): string[] {
  return source
    .split('\n')
    .map((line, index) => ({ line, index }))
    .filter(({ line }) => !/^\s*(?:\*|\/\*|\/\/)/.test(line) && BACKEND_NAMES.test(line.replace(/\/\/.*$/, '')))
    .map(({ line, index }) => `${index + 1}: ${line.trim()}`);
}

describe('shared files name no index backend', () => {
  it('finds a backend name when one is written (the check can fail)', () => {
    expect(backendNamesIn("if (cfg.indexer.backend === 'meilisearch') {}")).toHaveLength(1);
    expect(backendNamesIn("import { Fts5SearchIndex } from '../indexer/backends/fts5/search-index.js';")).toHaveLength(1);
    expect(backendNamesIn("case 'postgres': return PgVectorIndex.open(storage, options);")).toHaveLength(1);
    expect(backendNamesIn("if (config.indexer.backend !== 'postgres') return;")).toHaveLength(1);
    expect(backendNamesIn('const ranking = cfg.indexer.postgres.ranking;')).toHaveLength(1);
    expect(backendNamesIn("if (cfg.storage.driver === 'postgres') {}")).toEqual([]);
    expect(backendNamesIn(' * ranked as FTS5 ranks (measured on Meilisearch too)')).toEqual([]);
  });

  it.each(BACKEND_SHARED_FILES)('%s', (file) => {
    expect(backendNamesIn(readFileSync(path.join(repoRoot, file), 'utf8'))).toEqual([]);
  });
});

describe('shared files name no plug-in', () => {
  it('finds a plug-in name when one is written (the check can fail)', () => {
    expect(pluginNamesIn("if (config.payments.modes.x402.enabled) {}")).toHaveLength(1);
    expect(pluginNamesIn("import { Parties } from '../payments/modes/mpp/index.js';")).toHaveLength(1);
    expect(pluginNamesIn("if (options.mode === 'api_key') return;")).toHaveLength(1);
    expect(pluginNamesIn("const section = cfg.payments.modes['api_key'];")).toHaveLength(1);
    expect(pluginNamesIn('cfg.receipts.key_file')).toHaveLength(1);
    expect(pluginNamesIn("import { mppParties } from '../../../payments/modes/mpp/index.js';")).toHaveLength(1);
    expect(pluginNamesIn("  .description('serve the standard x402 facilitator API')")).toHaveLength(1);
    expect(pluginNamesIn("const paying = key ? 'API key' : 'no API key: x402 payments from the MCP client';")).toHaveLength(1);
    expect(pluginNamesIn("api_key: z.string().optional(), // a rewriter's key")).toEqual([]);
    expect(pluginNamesIn("{ env: 'NOTARY_MEILISEARCH_API_KEY', path: ['indexer', 'meilisearch', 'api_key'] }")).toEqual([]);
  });

  it.each(SHARED_FILES)('%s', (file) => {
    expect(pluginNamesIn(readFileSync(path.join(repoRoot, file), 'utf8'))).toEqual([]);
  });
});

describe('each plug-in exports its own', () => {
  it('payments/receipts/ relays none of payments/crypto/ (the modes import the primitives from there)', () => {
    expect(readFileSync(path.join(repoRoot, 'payments/receipts/index.ts'), 'utf8')).not.toMatch(/from '\.\.\/crypto\//);
  });
});
