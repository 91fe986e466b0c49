import type { Generated } from 'kysely';

/** The SQL vector store's tables (its migrations: sql-vector-migrations.ts), joined to the shared database's type. */

export interface PassageVectorsTable {
  /** passages.id; the row goes when the passage does (ON DELETE CASCADE). */
  passage_id: number;
  page_id: number;
  /** Embedding model that produced the vector. */
  model: string;
  dimensions: number;
  /** passage_vector_generation.generation of the write that stored this row. */
  seq: number;
  /** Little-endian float32 bytes, `dimensions` * 4 long. */
  vector: Buffer;
  /** The passage's host and its page's publication date (epoch ms), which domain and date filters read; null: unknown. */
  host: string | null;
  published: number | string | null;
  /** JSON array of the collection ids the passage's page was in when it was embedded; null: the default collection. */
  collections: Generated<string | null>;
}

/** One row (id 1): incremented by every write to passage_vectors. */
export interface PassageVectorGenerationTable {
  id: number;
  generation: number;
}

/** One row (id 1): on SQLite, incremented by triggers for every row inserted, updated or deleted in passage_vectors. */
export interface PassageVectorChangesTable {
  id: number;
  changes: number;
}

declare module '../storage/schema.js' {
  interface Database {
    passage_vectors: PassageVectorsTable;
    passage_vector_generation: PassageVectorGenerationTable;
    passage_vector_changes: PassageVectorChangesTable;
  }
}
