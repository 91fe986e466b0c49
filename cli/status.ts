import type { NotaryConfig } from '../core/config.js';
import { Runtime, silentLog } from '../runtime/index.js';

export async function collectStatus(cfg: NotaryConfig): Promise<Record<string, unknown>> {
  const runtime = await Runtime.open(cfg, { log: silentLog });
  try {
    const counts = await runtime.pages.counts();
    const stats = await runtime.index.stats();
    const last = await runtime.runs.latest();
    // Loading the reranker is what tells which scorer would be live: same resolution as `serve`.
    const info = (await runtime.reranker()).info;
    const opened = await runtime.dense();
    const vectors = opened.dense ? await opened.dense.index.stats() : null;
    const missing = opened.dense ? (await opened.dense.index.missing(counts.passages + 1)).length : 0;
    const retrieval = vectors ? { mode: 'hybrid', vectors, missing } : { mode: 'bm25', why: opened.off ?? null };
    return {
      data_dir: cfg.data_dir,
      storage: runtime.storage.dialect,
      pages: counts.pages,
      pages_pending_index: counts.pending,
      pages_gone: counts.gone,
      passages: counts.passages,
      index: stats,
      last_crawl: last
        ? { id: last.id, started_at: last.started_at, finished_at: last.finished_at, stats: last.stats ? (JSON.parse(last.stats) as unknown) : null }
        : null,
      reranker: info,
      retrieval,
    };
  } finally {
    await runtime.close();
  }
}

export async function statusCommand(cfg: NotaryConfig, opts: { json?: boolean }): Promise<void> {
  const s = await collectStatus(cfg);
  if (opts.json) {
    process.stdout.write(`${JSON.stringify(s, null, 2)}\n`);
    return;
  }
  const index = s['index'] as { documents: number; bytes: number | null; backend: string };
  const reranker = s['reranker'] as { kind: string; model: string; source: string };
  const retrieval = s['retrieval'] as { mode: string; why?: string | null; missing?: number; vectors?: { model: string; vectors: number; stale: number } };
  const last = s['last_crawl'] as { id: string; started_at: string; finished_at: string | null } | null;
  process.stdout.write(
    [
      `data        ${String(s['data_dir'])} (${String(s['storage'])})`,
      `pages       ${String(s['pages'])} (${String(s['pages_pending_index'])} waiting for the indexer, ${String(s['pages_gone'])} gone)`,
      `passages    ${String(s['passages'])}`,
      `index       ${index.backend}: ${index.documents} passages, ${index.bytes === null ? 'size unknown' : `${(index.bytes / 1e6).toFixed(1)} MB`}`,
      `last crawl  ${last ? `${last.id} started ${last.started_at}${last.finished_at ? `, finished ${last.finished_at}` : ', not finished'}` : 'never'}`,
      `retrieval   ${
        retrieval.vectors
          ? `hybrid: BM25 + ${retrieval.vectors.model}, ${retrieval.vectors.vectors} vectors (${retrieval.missing ?? 0} passages waiting, ${retrieval.vectors.stale} of another model)`
          : `bm25 only (${retrieval.why ?? 'dense retrieval off'})`
      }`,
      `reranker    ${reranker.kind}: ${reranker.model} (from ${reranker.source})${reranker.kind === 'lexical' ? '  <- no neural model: lexical scoring only' : ''}`,
      '',
    ].join('\n'),
  );
}
