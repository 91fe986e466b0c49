/**
 * The documentation known-item sets: a Debian documentation package served on 127.0.0.1, crawled and indexed, with
 * queries from its own index (term -> pages). Each set has a fixed-seed reported sample and a development pool drawn
 * with another seed from the entries outside it (bench/tune-search.ts tunes on the development pool only).
 */
import path from 'node:path';
import { knownItemQueries, pgDocsDir, sample, type KnownItemQuery } from '../../testkit/pgdocs.js';
import { pyDocsDir, sphinxIndexQueries } from '../../testkit/pydocs.js';
import type { EvalQuery } from './run.js';

export const DEFAULT_DOC_QUERIES = 400;
export const DEFAULT_DEV_QUERIES = 300;
const DEV_SEED = 7;

export interface DocSite {
  name: 'pgdocs' | 'pydocs';
  dir: string;
  /** The judgment key of a result URL. */
  key: (url: string) => string;
  /** Generated index pages (the back-of-book or general index the queries come from, module indexes), by key. */
  generatedIndex: (key: string) => boolean;
  judgedBy: string;
  queries: (options: { pgdocsQueries?: number; pydocsQueries?: number }) => EvalQuery[];
  /** Development queries: outside the reported sample, another seed. */
  devQueries: (n?: number) => EvalQuery[];
}

/** The file name of a result ("sql-vacuum.html"): PostgreSQL's pages sit in one folder. */
export function pgDocsKey(url: string): string {
  try {
    return path.posix.basename(new URL(url).pathname);
  } catch {
    return url;
  }
}

/** The path from the docs root ("library/os.html"): Sphinx sites have folders with equal file names. */
export function pathKey(url: string): string {
  try {
    return new URL(url).pathname.replace(/^\/+/, '');
  } catch {
    return url;
  }
}

function asEval(items: readonly KnownItemQuery[], prefix = ''): EvalQuery[] {
  return items.map((q, i) => ({ id: `${prefix}${i + 1}`, text: q.query, judgments: new Map(q.targets.map((t) => [t, 1])) }));
}

function split(all: readonly KnownItemQuery[], reported: number): { reported: KnownItemQuery[]; devPool: KnownItemQuery[] } {
  const picked = sample(all, reported);
  const texts = new Set(picked.map((q) => q.query));
  return { reported: picked, devPool: all.filter((q) => !texts.has(q.query)) };
}

let pgCache: KnownItemQuery[] | null = null;
let pyCache: KnownItemQuery[] | null = null;

export const DOC_SITES: readonly DocSite[] = [
  {
    name: 'pgdocs',
    dir: pgDocsDir,
    key: pgDocsKey,
    generatedIndex: (key) => key === 'bookindex.html',
    judgedBy: "bookindex.html known items: a hit is a result whose file name is one of the entry's target pages",
    queries: (o) => asEval(split((pgCache ??= knownItemQueries(pgDocsDir)), o.pgdocsQueries ?? DEFAULT_DOC_QUERIES).reported),
    devQueries: (n = DEFAULT_DEV_QUERIES) =>
      asEval(sample(split((pgCache ??= knownItemQueries(pgDocsDir)), DEFAULT_DOC_QUERIES).devPool, n, DEV_SEED), 'dev'),
  },
  {
    name: 'pydocs',
    dir: pyDocsDir,
    key: pathKey,
    generatedIndex: (key) => /^(?:genindex[^/]*|py-modindex)\.html$/.test(key),
    judgedBy: "genindex-all.html known items (Python 3.11 docs): a hit is a result whose path is one of the entry's target pages",
    queries: (o) => asEval(split((pyCache ??= sphinxIndexQueries(pyDocsDir)), o.pydocsQueries ?? DEFAULT_DOC_QUERIES).reported),
    devQueries: (n = DEFAULT_DEV_QUERIES) =>
      asEval(sample(split((pyCache ??= sphinxIndexQueries(pyDocsDir)), DEFAULT_DOC_QUERIES).devPool, n, DEV_SEED), 'dev'),
  },
];
