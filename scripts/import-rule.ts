import path from 'node:path';

/**
 * The rule of docs/architecture.md "between folders, through the folder's index.ts": product code of one top-level
 * folder imports another folder's files only through that folder's index.ts. Checked by test/import-paths.test.ts;
 * scripts/imports-through-index.ts rewrites imports to follow it.
 */

/** The product folders that are reached through their index.ts (sdk/ is reached through its package, sdk/ts/src/index.ts). */
export const INDEXED_FOLDERS = ['core', 'storage', 'extract', 'reranker', 'crawler', 'indexer', 'search', 'payments', 'accounts', 'webhooks', 'runtime', 'api', 'cli', 'mcp'];

/**
 * Files reached by their own path, and why: each would make its folder's index.ts costly for every importer, or is
 * the light way in that notary's start uses so that `notary --help` loads neither models nor servers.
 */
export const OWN_PATH_ENTRIES: Record<string, string> = {
  'core/language.js': 'loads the language detector (eld) and its n-gram tables at import: 0.6 s of CPU no core/index.ts importer should pay',
  'runtime/plugins.js': "the plug-in lists without the runtime: notary's start (every command, --help) loads it, not runtime/index.ts (models, ONNX, Redis)",
  'mcp/paying.js': "the MCP help text without the MCP server, for notary's command list",
};

/** Product files that reach past indexes, and why. */
export const EXEMPT_FILES: Record<string, string> = {
  'runtime/plugins.ts': 'the light entry above: it loads the registration lists and the plug-in interfaces, not the payments/ and indexer/ indexes',
};

/** Tests beside the code test their folder's insides and may use another's; they are not product code. */
export const TEST_FILE = /\.(test|contract)\.ts$/;

export const folderOf = (relPath: string): string => relPath.split('/')[0] ?? '';

/** Where a relative import of `fromRel` (a path from the repository root) lands, when it breaks the rule. */
export function bypass(fromRel: string, spec: string): { folder: string; target: string } | undefined {
  if (!spec.startsWith('.')) return undefined;
  const target = path.posix.normalize(path.posix.join(path.posix.dirname(fromRel), spec));
  const folder = folderOf(target);
  if (folder === folderOf(fromRel) || !INDEXED_FOLDERS.includes(folder) || !target.includes('/')) return undefined;
  if (target === `${folder}/index.js` || target in OWN_PATH_ENTRIES) return undefined;
  return { folder, target };
}

/** Whether a product file is held to the rule. */
export function heldToRule(fromRel: string): boolean {
  return INDEXED_FOLDERS.includes(folderOf(fromRel)) && !TEST_FILE.test(fromRel) && !(fromRel in EXEMPT_FILES);
}
