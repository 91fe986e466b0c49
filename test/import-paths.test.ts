import { readdirSync, readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { bypass, EXEMPT_FILES, heldToRule, INDEXED_FOLDERS, OWN_PATH_ENTRIES } from '../scripts/import-rule.js';
import { repoRoot } from '../testkit/components.js';

/**
 * Between folders, through the folder's index.ts (issue 31; docs/architecture.md): a new import of product code that
 * reaches past another folder's index.ts fails here. `npx tsx scripts/imports-through-index.ts` rewrites such imports
 * and adds the names to the index; the few files reached by their own path are listed, with why, in
 * scripts/import-rule.ts.
 */

/** Every module specifier of a source: import/export … from, bare imports and import(). */
export function specifiersOf(source: string): string[] {
  const found: string[] = [];
  for (const m of source.matchAll(/^\s*(?:import|export)\b[^;]*?\bfrom\s*['"]([^'"]+)['"]/gm)) found.push(m[1] ?? '');
  for (const m of source.matchAll(/^\s*import\s*['"]([^'"]+)['"]/gm)) found.push(m[1] ?? '');
  for (const m of source.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)) found.push(m[1] ?? '');
  return found;
}

function bypassesIn(file: string, source: string): string[] {
  return specifiersOf(source)
    .filter((spec) => bypass(file, spec))
    .map((spec) => `${file}: ${spec}`);
}

function productFiles(): string[] {
  return INDEXED_FOLDERS.flatMap((folder) =>
    readdirSync(path.join(repoRoot, folder), { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('.ts'))
      .map((file) => `${folder}/${file.split(path.sep).join('/')}`),
  ).filter(heldToRule);
}

describe('imports between folders go through the folder’s index.ts', () => {
  it('no product file reaches past another folder’s index.ts', () => {
    const files = productFiles();
    expect(files.length).toBeGreaterThan(300);
    const offenders = files.flatMap((file) => bypassesIn(file, readFileSync(path.join(repoRoot, file), 'utf8')));
    expect(offenders).toEqual([]);
  });

  it('catches a bypass, static, re-exported or dynamic, and lets the index and the listed entries through', () => {
    const probe = [
      "import { NotaryError } from '../core/errors.js';",
      "import type { Storage } from '../../storage/db.js';",
      "export { Pricing } from '../payments/pricing.js';",
      "const m = await import('../runtime/runtime.js');",
      "import { NotaryError as E } from '../core/index.js';",
      "import { detectLanguage } from '../core/language.js';",
      "import { registeredPlugins } from '../runtime/plugins.js';",
      "import { sibling } from './sibling.js';",
      "import { apiKey } from '../sdk/ts/src/index.js';",
    ].join('\n');
    expect(bypassesIn('search/probe.ts', probe)).toEqual(['search/probe.ts: ../core/errors.js', 'search/probe.ts: ../payments/pricing.js', 'search/probe.ts: ../runtime/runtime.js']);
    expect(bypassesIn('search/sub/probe.ts', "import type { Storage } from '../../storage/db.js';")).toEqual(['search/sub/probe.ts: ../../storage/db.js']);
    expect(heldToRule('search/probe.test.ts')).toBe(false);
    expect(heldToRule('test/probe.ts')).toBe(false);
  });

  it('the allow-list names files that exist, each with its reason', () => {
    for (const [file, why] of [...Object.entries(OWN_PATH_ENTRIES), ...Object.entries(EXEMPT_FILES)]) {
      expect(existsSync(path.join(repoRoot, file.replace(/\.js$/, '.ts'))), file).toBe(true);
      expect(why.length, file).toBeGreaterThan(20);
    }
  });
});
