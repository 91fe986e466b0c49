import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import type { Embedder } from '../../reranker/embedder.js';
import { decodeVector, encodeVector } from '../../indexer/vector-encoding.js';

/** Where evaluation runs keep embeddings between runs (NOTARY_EVAL_CACHE_DIR, else ~/.cache/notary/eval). */
export function evalCacheDir(): string {
  return process.env['NOTARY_EVAL_CACHE_DIR'] ?? path.join(homedir(), '.cache', 'notary', 'eval');
}

/**
 * An Embedder that remembers every text's vector in a SQLite file keyed by model and the text's sha256, so repeated
 * evaluation runs embed each passage once. For the harness only: the service embeds through the indexer.
 */
export function cachedEmbedder(inner: Embedder, file: string = path.join(evalCacheDir(), 'embeddings.sqlite')): Embedder & { close(): void; hits: () => number } {
  mkdirSync(path.dirname(file), { recursive: true });
  const db = new BetterSqlite3(file);
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE IF NOT EXISTS embeddings (model TEXT NOT NULL, text_sha256 TEXT NOT NULL, vector BLOB NOT NULL, PRIMARY KEY (model, text_sha256))');
  const get = db.prepare<[string, string], { vector: Buffer }>('SELECT vector FROM embeddings WHERE model = ? AND text_sha256 = ?');
  const put = db.prepare<[string, string, Buffer]>('INSERT OR REPLACE INTO embeddings (model, text_sha256, vector) VALUES (?, ?, ?)');
  let hits = 0;
  return {
    model: inner.model,
    dimensions: inner.dimensions,
    hits: () => hits,
    close: () => db.close(),
    embed: async (texts) => {
      const keys = texts.map((t) => createHash('sha256').update(t).digest('hex'));
      const out = keys.map((key) => {
        const row = get.get(inner.model, key);
        return row ? decodeVector(row.vector, inner.dimensions) : null;
      });
      const todo = out.flatMap((v, i) => (v === null ? [i] : []));
      hits += texts.length - todo.length;
      if (todo.length > 0) {
        const fresh = await inner.embed(todo.map((i) => texts[i] ?? ''));
        db.transaction(() => {
          todo.forEach((i, j) => {
            const v = fresh[j];
            if (!v) return;
            out[i] = v;
            put.run(inner.model, keys[i] ?? '', encodeVector(v));
          });
        })();
      }
      return out.map((v) => v ?? new Float32Array(inner.dimensions));
    },
  };
}
