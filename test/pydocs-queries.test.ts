/** The Python documentation known-item set: queries read from the general index of Debian's python3.11-doc. */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DOC_SITES, pathKey } from '../bench/eval/doc-sites.js';
import { fileAvailable } from '../testkit/components.js';
import { pyDocsDir, sphinxIndexQueries } from '../testkit/pydocs.js';

describe.runIf(fileAvailable('Python docs (apt-get install python3.11-doc)', path.join(pyDocsDir, 'genindex-all.html')))('Python docs general index', () => {
  it('reads entries, sub-entries under their parent and every target page', () => {
    const queries = sphinxIndexQueries(pyDocsDir);
    expect(queries.length).toBeGreaterThan(10_000);
    const byText = new Map(queries.map((q) => [q.query, q.targets]));
    expect(byText.get('nlargest() (in module heapq)')).toEqual(['library/heapq.html']);
    // A sub-entry's qualifier replaces its parent's: "abort() (asyncio.Barrier method)", not "abort() (…) (…)".
    expect(byText.get('abort() (asyncio.Barrier method)')).toEqual(['library/asyncio-sync.html']);
    expect(byText.get('abc module')).toEqual(['library/abc.html']);
    // Every target is a page of the docs, never a generated index.
    for (const q of queries.slice(0, 2000)) {
      for (const target of q.targets) {
        expect(target).not.toMatch(/genindex|py-modindex/);
        expect(existsSync(path.join(pyDocsDir, target))).toBe(true);
      }
    }
  });

  it('keeps the reported sample and the development queries apart', () => {
    const site = DOC_SITES.find((s) => s.name === 'pydocs')!;
    const reported = site.queries({});
    const dev = site.devQueries();
    expect(reported).toHaveLength(400);
    expect(dev).toHaveLength(300);
    const reportedTexts = new Set(reported.map((q) => q.text));
    expect(dev.some((q) => reportedTexts.has(q.text))).toBe(false);
    expect(pathKey('http://127.0.0.1:8080/library/os.path.html')).toBe('library/os.path.html');
  });
});
