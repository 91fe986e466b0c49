/**
 * The reference to beat on known-item lookups (issue 11): a page-level BM25 over title and body, k1 0.9, b 0.4, the
 * title counted twice, whole pages, the site's generated index pages left out. Built from what the indexer stored
 * (each page's title and its passages in order, headings included), with core/text's analysis (stopwords dropped,
 * Porter stems). Evaluation only: the service searches with FTS5.
 */
import type { Kysely } from 'kysely';
import { STOPWORDS, stem, words } from '../../core/text.js';
import type { Database } from '../../storage/schema.js';
import type { Ranker } from './run.js';

export const PAGE_BM25 = { k1: 0.9, b: 0.4, titleRepeats: 2 } as const;

function analyse(text: string): string[] {
  return words(text)
    .filter((w) => !STOPWORDS.has(w))
    .map(stem);
}

interface PageDocument {
  url: string;
  length: number;
  tf: Map<string, number>;
}

/** Each indexed page as one document: its title `titleRepeats` times, then its headings and passages in order. */
export async function storedPageDocuments(db: Kysely<Database>): Promise<Array<{ url: string; title: string; body: string }>> {
  const rows = await db
    .selectFrom('passages')
    .select(['page_id', 'url', 'title', 'heading_path', 'text'])
    .orderBy('page_id')
    .orderBy('ordinal')
    .execute();
  const pages = new Map<number, { url: string; title: string; parts: string[]; lastHeading: string }>();
  for (const row of rows) {
    let page = pages.get(row.page_id);
    if (!page) pages.set(row.page_id, (page = { url: row.url, title: row.title, parts: [], lastHeading: '' }));
    if (row.heading_path && row.heading_path !== page.lastHeading) {
      // Only the innermost new heading: the outer ones were written before.
      page.parts.push(row.heading_path.split(' > ').pop() ?? '');
      page.lastHeading = row.heading_path;
    }
    page.parts.push(row.text);
  }
  return [...pages.values()].map((p) => ({ url: p.url, title: p.title, body: p.parts.join('\n') }));
}

/** Okapi BM25 over whole pages; `exclude` leaves pages out (the generated index pages). */
export function pageBm25Ranker(
  pages: ReadonlyArray<{ url: string; title: string; body: string }>,
  options: { exclude?: (url: string) => boolean; depth?: number } = {},
): Ranker {
  const { k1, b, titleRepeats } = PAGE_BM25;
  const docs: PageDocument[] = [];
  const postings = new Map<string, number[]>();
  for (const page of pages) {
    if (options.exclude?.(page.url)) continue;
    const title = analyse(page.title);
    const tokens = [...Array.from({ length: titleRepeats }, () => title).flat(), ...analyse(page.body)];
    const tf = new Map<string, number>();
    for (const t of tokens) tf.set(t, (tf.get(t) ?? 0) + 1);
    const index = docs.length;
    docs.push({ url: page.url, length: tokens.length, tf });
    for (const term of tf.keys()) {
      let list = postings.get(term);
      if (!list) postings.set(term, (list = []));
      list.push(index);
    }
  }
  const n = docs.length;
  const avgLength = docs.reduce((sum, d) => sum + d.length, 0) / Math.max(1, n);
  const depth = options.depth ?? 100;
  return async (query) => {
    const scores = new Map<number, number>();
    for (const term of analyse(query)) {
      const list = postings.get(term);
      if (!list) continue;
      const idf = Math.log(1 + (n - list.length + 0.5) / (list.length + 0.5));
      for (const i of list) {
        const doc = docs[i] as PageDocument;
        const f = doc.tf.get(term) ?? 0;
        const s = (idf * f * (k1 + 1)) / (f + k1 * (1 - b + (b * doc.length) / avgLength));
        scores.set(i, (scores.get(i) ?? 0) + s);
      }
    }
    return [...scores.entries()]
      .sort((x, y) => y[1] - x[1] || x[0] - y[0])
      .slice(0, depth)
      .map(([i]) => (docs[i] as PageDocument).url);
  };
}
