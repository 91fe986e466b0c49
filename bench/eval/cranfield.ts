/**
 * Cranfield 1400 (format notes: <shared>/eval/retrieval/cranfield/README.md): parsing, and an index of its documents
 * built the way web pages are indexed (title + abstract cut into passages by cutPassages, into the runtime's index).
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { NotaryConfig } from '../../core/config.js';
import { NotaryError } from '../../core/errors.js';
import type { ExtractedDocument } from '../../extract/types.js';
import { cutPassages } from '../../indexer/passages.js';
import type { IndexDoc, SearchIndex } from '../../indexer/search-index.js';
import type { Runtime } from '../../runtime/index.js';
import type { DenseRetrieval } from '../../search/request-state.js';
import type { Storage } from '../../storage/db.js';
import { embedStoredPassages, type EvalDenseOptions } from './dense.js';
import { openEvalRuntime } from './eval-runtime.js';
import { cranfieldGain, type Judgments } from './metrics.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** <NOTARY_SHARED_DIR or ../shared>/eval/retrieval/cranfield */
export function cranfieldDir(env: Record<string, string | undefined> = process.env): string {
  const shared = env['NOTARY_SHARED_DIR'] ?? path.resolve(repoRoot, '../shared');
  return path.join(shared, 'eval', 'retrieval', 'cranfield');
}

export interface CranfieldDoc {
  id: number;
  title: string;
  authors: string;
  bibliography: string;
  abstract: string;
}

export interface CranfieldQuery {
  /** Position in cran.qry, 1..225: the number cranqrel uses. */
  id: number;
  /** The `.I` number printed in cran.qry (not the judgments' number). */
  fileId: string;
  text: string;
}

export interface CranfieldCollection {
  docs: CranfieldDoc[];
  queries: CranfieldQuery[];
  /** Query id (position) -> document key (cranfieldUrl) -> gain. */
  judgments: Map<number, Map<string, number>>;
}

/** The synthetic URL a Cranfield document is indexed under; results are per URL = per document. */
export function cranfieldUrl(docId: number): string {
  return `cranfield:${docId}`;
}

interface SmartRecord {
  id: string;
  fields: Map<string, string>;
}

/**
 * SMART format: `.I <id>` starts a record, `.X` (a single letter) starts field X and the lines up to the next
 * marker are its text. A field repeated within a record (docs 576 and 578 carry two `.W`) is appended. CRLF is
 * accepted (cran.qry has it).
 */
function parseSmart(text: string, source: string): SmartRecord[] {
  const records: SmartRecord[] = [];
  let record: SmartRecord | undefined;
  let field: string | undefined;
  const lines = text.split(/\r?\n/);
  for (const [n, line] of lines.entries()) {
    const start = /^\.I\s+(\S+)\s*$/.exec(line);
    if (start) {
      record = { id: start[1] as string, fields: new Map() };
      records.push(record);
      field = undefined;
      continue;
    }
    const marker = /^\.([A-Z])\s*$/.exec(line);
    if (marker) {
      if (!record) throw new NotaryError('invalid_request', `${source}:${n + 1}: field .${marker[1]} before any .I`);
      field = marker[1] as string;
      if (!record.fields.has(field)) record.fields.set(field, '');
      continue;
    }
    if (!record || !field) {
      if (line.trim() === '') continue;
      throw new NotaryError('invalid_request', `${source}:${n + 1}: text outside a field: ${JSON.stringify(line.slice(0, 60))}`);
    }
    const prev = record.fields.get(field) ?? '';
    record.fields.set(field, prev ? `${prev}\n${line}` : line);
  }
  return records;
}

/** Line-wrapped SMART text as one whitespace-normalised string. */
function flatten(text: string | undefined): string {
  return (text ?? '').replace(/\s+/g, ' ').trim();
}

export function parseCranfieldDocs(text: string): CranfieldDoc[] {
  return parseSmart(text, 'cran.all.1400').map((r) => {
    const id = Number(r.id);
    if (!Number.isSafeInteger(id) || id <= 0) throw new NotaryError('invalid_request', `cran.all.1400: bad document id "${r.id}"`);
    return {
      id,
      title: flatten(r.fields.get('T')),
      authors: flatten(r.fields.get('A')),
      bibliography: flatten(r.fields.get('B')),
      abstract: flatten(r.fields.get('W')),
    };
  });
}

/** Queries numbered by their position in the file (1..n), which is how cranqrel refers to them. */
export function parseCranfieldQueries(text: string): CranfieldQuery[] {
  return parseSmart(text, 'cran.qry').map((r, i) => ({ id: i + 1, fileId: r.id, text: flatten(r.fields.get('W')) }));
}

/** `query-position doc-id grade` rows -> query -> document key -> gain (cranfieldGain: -1 and 5 give 0). */
export function parseCranfieldQrels(text: string): Map<number, Map<string, number>> {
  const out = new Map<number, Map<string, number>>();
  for (const [n, raw] of text.split(/\r?\n/).entries()) {
    const line = raw.trim();
    if (!line) continue;
    const parts = line.split(/\s+/);
    const [q, d, g] = parts.map(Number);
    if (parts.length !== 3 || !Number.isInteger(q) || !Number.isInteger(d) || !Number.isInteger(g)) {
      throw new NotaryError('invalid_request', `cranqrel:${n + 1}: expected "query doc grade", got ${JSON.stringify(line)}`);
    }
    let judged = out.get(q as number);
    if (!judged) out.set(q as number, (judged = new Map()));
    const key = cranfieldUrl(d as number);
    judged.set(key, Math.max(judged.get(key) ?? 0, cranfieldGain(g as number)));
  }
  return out;
}

export function loadCranfield(dir: string = cranfieldDir()): CranfieldCollection {
  const read = (name: string): string => {
    const file = path.join(dir, name);
    if (!existsSync(file)) {
      throw new NotaryError('invalid_config', `Cranfield file ${file} not found (set NOTARY_SHARED_DIR to the folder holding eval/retrieval/cranfield)`);
    }
    return readFileSync(file, 'utf8');
  };
  return {
    docs: parseCranfieldDocs(read('cran.all.1400')),
    queries: parseCranfieldQueries(read('cran.qry')),
    judgments: parseCranfieldQrels(read('cranqrel')),
  };
}

/** A Cranfield document as the extractor would hand it to the indexer: the abstract as one paragraph. */
export function cranfieldExtracted(doc: CranfieldDoc): ExtractedDocument {
  const blocks: ExtractedDocument['blocks'] = doc.abstract ? [{ type: 'paragraph', text: doc.abstract }] : [];
  return {
    title: doc.title || null,
    byline: doc.authors || null,
    siteName: null,
    lang: 'en',
    publishedAt: null,
    description: null,
    canonicalUrl: null,
    blocks,
    text: doc.abstract,
    wordCount: doc.abstract.split(/\s+/).filter(Boolean).length,
  };
}

/** Passages of every document, cut as the indexer cuts web pages; passage ids run from 1. */
export function cranfieldPassages(docs: readonly CranfieldDoc[], indexer: NotaryConfig['indexer']): IndexDoc[] {
  const out: IndexDoc[] = [];
  for (const doc of docs) {
    const passages = cutPassages(cranfieldExtracted(doc), { minWords: indexer.passage_min_words, maxWords: indexer.passage_max_words });
    for (const p of passages) {
      out.push({ id: out.length + 1, pageId: doc.id, url: cranfieldUrl(doc.id), title: doc.title, headingPath: p.headingPath, text: p.text });
    }
  }
  return out;
}

export interface CranfieldIndex {
  /** The composition root over the set's data folder: its index, pages and search pipelines. */
  runtime: Runtime;
  index: SearchIndex;
  /** The store the documents were written to (pages and passages). */
  storage: Storage;
  passages: number;
  indexMs: number;
  /** Present when dense retrieval was asked for: the passages' vectors. */
  dense?: DenseRetrieval;
  embedMs?: number;
  /** Closes the index and storage and deletes the temp folder. */
  close(): Promise<void>;
}

/**
 * A fresh runtime (SQLite store and the configured index) in a temp folder holding every document's passages: one stored page per
 * document, its passages written through PageStore (so they have storage ids, like crawled pages), then indexed; with
 * `dense`, every passage is embedded too.
 */
export async function buildCranfieldIndex(
  docs: readonly CranfieldDoc[],
  indexer: NotaryConfig['indexer'],
  options: { dense?: EvalDenseOptions; log?: (msg: string) => void } = {},
): Promise<CranfieldIndex> {
  const started = performance.now();
  const opened = await openEvalRuntime('cranfield', { indexer });
  const { runtime } = opened;
  const { index, pages } = runtime;
  try {
    const byDoc = new Map<number, IndexDoc[]>();
    for (const passage of cranfieldPassages(docs, indexer)) byDoc.set(passage.pageId, [...(byDoc.get(passage.pageId) ?? []), passage]);
    const indexDocs: IndexDoc[] = [];
    const pageIds = new Map<number, number>();
    for (const doc of docs) {
      const url = cranfieldUrl(doc.id);
      const { id } = await pages.saveFetched({
        url,
        final_url: url,
        host: 'cranfield',
        http_status: 200,
        content_type: 'text/plain',
        etag: null,
        last_modified: null,
        content_hash: `cranfield-${doc.id}`,
        title: doc.title,
        html: '',
        crawl_depth: 0,
      });
      pageIds.set(doc.id, id);
      const page = await pages.getById(id);
      if (!page) throw new NotaryError('internal_error', `cranfield page ${url} was not stored`);
      const rows = await pages.replacePassages(
        page,
        (byDoc.get(doc.id) ?? []).map((p, ordinal) => ({
          ordinal,
          url,
          title: p.title,
          heading_path: p.headingPath,
          text: p.text,
          word_count: p.text.split(/\s+/).filter(Boolean).length,
        })),
      );
      for (const row of rows) indexDocs.push({ id: row.id, pageId: id, url, title: row.title, headingPath: row.heading_path, text: row.text });
    }
    await index.upsert(indexDocs);
    const indexMs = performance.now() - started;
    await index.upsertPages(
      docs.flatMap((doc) => {
        const passages = byDoc.get(doc.id) ?? [];
        const pageId = pageIds.get(doc.id);
        return passages.length > 0 && pageId !== undefined
          ? [{ pageId, url: cranfieldUrl(doc.id), title: doc.title, headings: '', text: passages.map((p) => p.text).join('\n') }]
          : [];
      }),
    );
    const built: CranfieldIndex = { runtime, index, storage: runtime.storage, passages: indexDocs.length, indexMs, close: opened.close };
    if (options.dense) {
      const { dense, embedMs } = await embedStoredPassages(runtime, options.dense, options.log ?? (() => {}), 'cranfield');
      built.dense = dense;
      built.embedMs = embedMs;
    }
    return built;
  } catch (err) {
    await opened.close();
    throw err;
  }
}

/** Judgments of one query ({} when the query has none). */
export function judgmentsFor(collection: CranfieldCollection, queryId: number): Judgments {
  return collection.judgments.get(queryId) ?? new Map();
}
