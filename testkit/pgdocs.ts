import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import * as cheerio from 'cheerio';

/** Debian's postgresql-doc-15 HTML (1,169 pages); NOTARY_PGDOCS_DIR points elsewhere. */
export const pgDocsDir = process.env['NOTARY_PGDOCS_DIR'] ?? '/usr/share/doc/postgresql-doc-15/html';

export function requirePgDocs(): string {
  if (!existsSync(path.join(pgDocsDir, 'bookindex.html'))) {
    throw new Error(`PostgreSQL docs not found at ${pgDocsDir}: apt-get install postgresql-doc-15 (scripts/install.sh test does)`);
  }
  return pgDocsDir;
}

export interface KnownItemQuery {
  query: string;
  /** Target page file names (e.g. "sql-vacuum.html"); any of them counts as a hit. */
  targets: string[];
}

/**
 * Known-item queries from the back-of-book index: each index entry ("VACUUM", or "functions > variadic" as
 * "functions variadic") with the pages it points at.
 */
export function knownItemQueries(dir: string = pgDocsDir): KnownItemQuery[] {
  const $ = cheerio.load(readFileSync(path.join(dir, 'bookindex.html'), 'utf8'));
  const termOf = (dt: cheerio.Cheerio<never>): string => {
    const own = dt
      .contents()
      .filter((_, n) => n.type === 'text')
      .text();
    return own.replace(/,\s*$/u, '').replace(/\s+/gu, ' ').trim().replace(/,$/u, '');
  };
  const out: KnownItemQuery[] = [];
  $('div.index dt').each((_, el) => {
    const dt = $(el) as cheerio.Cheerio<never>;
    const targets = [
      ...new Set(
        dt
          .find('a.indexterm')
          .map((_, a) => ($(a).attr('href') ?? '').split('#')[0] ?? '')
          .get()
          .filter((h) => h.endsWith('.html')),
      ),
    ];
    if (targets.length === 0) return;
    const term = termOf(dt);
    if (!term) return;
    const parentDt = dt.parent('dl').parent('dd').prev('dt') as cheerio.Cheerio<never>;
    const parent = parentDt.length ? termOf(parentDt) : '';
    const query = parent ? `${parent} ${term}` : term;
    out.push({ query, targets });
  });
  return out;
}

/** A fixed-seed sample (mulberry32), the same on every machine. */
export function sample<T>(items: readonly T[], n: number, seed = 20261122): T[] {
  let a = seed >>> 0;
  const rand = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
  }
  return copy.slice(0, n);
}
