import type BetterSqlite3 from 'better-sqlite3';
import { withWordBreaks } from '../../../core/index.js';
import type { IndexDoc, PageDoc } from '../../search-index.js';
import { pathWords } from '../url-path.js';
import { facetsOf, passageFacetsOf } from './facets.js';
import { factWrites, PAGE_FACTS, PASSAGE_FACTS } from './fact-tables.js';
import { collectionWrites, PAGE_COLLECTIONS, PASSAGE_COLLECTIONS } from './collection-tables.js';
import { BUMP_GENERATION_SQL, PAGES, TABLE } from './schema.js';

/**
 * The writes to the FTS5 tables: passages and pages upserted (deleted and inserted again) and deleted, each batch in
 * one transaction that also bumps the write generation. Text of unspaced scripts goes in with zero-width spaces
 * between its words (unicode61 would make a clause one token); reads take them out.
 */
export class Fts5Writes {
  readonly upsertPassages: (docs: readonly IndexDoc[]) => void;
  readonly deletePassages: (ids: readonly number[]) => void;
  readonly upsertPages: (docs: readonly PageDoc[]) => void;
  readonly deletePages: (ids: readonly number[]) => void;

  /** `wrote` runs in each write transaction as it bumps the generation (reads after it must see the write). */
  constructor(db: BetterSqlite3.Database, wrote: () => void = () => undefined) {
    const bump = db.prepare(BUMP_GENERATION_SQL);
    const bumpGeneration = { run: () => { bump.run(); wrote(); } };
    const deleteStmt = db.prepare<[number]>(`DELETE FROM ${TABLE} WHERE rowid = ?`);
    const insertStmt = db.prepare<[number, string, string, string, string, number, string, string | null, number, string | null]>(
      `INSERT INTO ${TABLE} (rowid, title, headings, body, facets, page_id, url, lang, nav, tkey) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const deletePageStmt = db.prepare<[number]>(`DELETE FROM ${PAGES} WHERE rowid = ?`);
    const insertPageStmt = db.prepare<[number, string, string, string, string, string, string, string | null, number, string | null]>(
      `INSERT INTO ${PAGES} (rowid, title, headings, path, body, facets, url, lang, nav, tkey) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    const passageFacts = factWrites(db, PASSAGE_FACTS, 'id');
    const pageFacts = factWrites(db, PAGE_FACTS, 'page_id');
    const passageCollections = collectionWrites(db, PASSAGE_COLLECTIONS, 'id');
    const pageCollections = collectionWrites(db, PAGE_COLLECTIONS, 'page_id');
    this.upsertPassages = db.transaction((docs: readonly IndexDoc[]) => {
      for (const doc of docs) {
        deleteStmt.run(doc.id);
        passageFacts.put(doc.id, doc.url, doc.publishedAt);
        passageCollections.put(doc.id, doc.collections);
        insertStmt.run(doc.id, withWordBreaks(doc.title), withWordBreaks(doc.headingPath), withWordBreaks(doc.text), passageFacetsOf(doc), doc.pageId, doc.url, doc.language ?? null, doc.navigation ? 1 : 0, doc.translationKey ?? null);
      }
      bumpGeneration.run();
    });
    this.deletePassages = db.transaction((ids: readonly number[]) => {
      for (const id of ids) {
        deleteStmt.run(id);
        passageFacts.remove(id);
        passageCollections.remove(id);
      }
      bumpGeneration.run();
    });
    this.upsertPages = db.transaction((docs: readonly PageDoc[]) => {
      for (const doc of docs) {
        deletePageStmt.run(doc.pageId);
        pageFacts.put(doc.pageId, doc.url, doc.publishedAt);
        pageCollections.put(doc.pageId, doc.collections);
        insertPageStmt.run(
          doc.pageId, withWordBreaks(doc.title), withWordBreaks(doc.headings), pathWords(doc.url), withWordBreaks(doc.text), facetsOf(doc), doc.url, doc.language ?? null, doc.navigation ? 1 : 0, doc.translationKey ?? null,
        );
      }
      bumpGeneration.run();
    });
    this.deletePages = db.transaction((ids: readonly number[]) => {
      for (const id of ids) {
        deletePageStmt.run(id);
        pageFacts.remove(id);
        pageCollections.remove(id);
      }
      bumpGeneration.run();
    });
  }
}
