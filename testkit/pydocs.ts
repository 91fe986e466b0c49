import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import * as cheerio from 'cheerio';
import type { KnownItemQuery } from './pgdocs.js';

/** Debian's python3.11-doc HTML (530 pages, Sphinx); NOTARY_PYDOCS_DIR points elsewhere. */
export const pyDocsDir = process.env['NOTARY_PYDOCS_DIR'] ?? '/usr/share/doc/python3.11/html';

export function requirePyDocs(): string {
  if (!existsSync(path.join(pyDocsDir, 'genindex-all.html'))) {
    throw new Error(`Python docs not found at ${pyDocsDir}: apt-get install python3.11-doc (scripts/install.sh test does)`);
  }
  return pyDocsDir;
}

/**
 * Known-item queries from a Sphinx general index (genindex-all.html): each entry ("abs() (in module operator)", or a
 * sub-entry under its parent as "abc module", "abort() (asyncio.Barrier method)") with the pages it points at (paths from the docs root,
 * "library/operator.html"). Entries pointing only at generated index pages are left out.
 */
export function sphinxIndexQueries(dir: string = pyDocsDir): KnownItemQuery[] {
  const $ = cheerio.load(readFileSync(path.join(dir, 'genindex-all.html'), 'utf8'));
  const out: KnownItemQuery[] = [];
  const ownText = (li: cheerio.Cheerio<never>): string => {
    const clone = li.clone() as cheerio.Cheerio<never>;
    clone.children('ul').remove();
    // "[1]", "[2]": further targets of one entry, not part of its name.
    clone.find('a').each((_, a) => {
      const text = $(a).text().trim();
      if (/^\[\d+\]$/.test(text)) $(a).remove();
    });
    return clone.text().replace(/\s+/gu, ' ').replace(/[\s,]+$/u, '').trim();
  };
  const targetsOf = (li: cheerio.Cheerio<never>): string[] => [
    ...new Set(
      li
        .children('a')
        .map((_, a) => ($(a).attr('href') ?? '').split('#')[0] ?? '')
        .get()
        .filter((h) => h.endsWith('.html') && !/(?:^|\/)(?:genindex[^/]*|py-modindex)\.html$/.test(h)),
    ),
  ];
  $('table.indextable > tbody > tr > td > ul > li, table.indextable > tr > td > ul > li').each((_, el) => {
    const li = $(el) as cheerio.Cheerio<never>;
    const term = ownText(li);
    if (!term) return;
    const targets = targetsOf(li);
    if (targets.length > 0) out.push({ query: term, targets });
    li.children('ul')
      .children('li')
      .each((_, subEl) => {
        const sub = $(subEl) as cheerio.Cheerio<never>;
        const subTerm = ownText(sub);
        const subTargets = targetsOf(sub);
        // "abs() (in module operator)" with a sub-entry "(decimal.Context method)": the qualifier replaces the parent's.
        const parent = subTerm.startsWith('(') ? term.replace(/\s+\([^()]+\)$/u, '') : term;
        if (subTerm && subTargets.length > 0) out.push({ query: `${parent} ${subTerm}`, targets: subTargets });
      });
  });
  return out;
}
