import type { NotaryConfig } from '../core/index.js';
import { assignmentLines, Runtime, silentLog, type ModelAssignment } from '../runtime/index.js';

export async function collectStatus(cfg: NotaryConfig): Promise<Record<string, unknown>> {
  const runtime = await Runtime.open(cfg, { log: silentLog });
  try {
    const counts = await runtime.pages.counts();
    const stats = await runtime.index.stats();
    // A run whose process died is "interrupted" from now on, not "running" forever.
    await runtime.runs.markDead();
    const last = await runtime.runs.latest();
    const resumable = await runtime.runs.latestResumable();
    // Loading the reranker is what tells which scorer would be live: same resolution as `serve`.
    const info = (await runtime.reranker()).info;
    const opened = await runtime.dense();
    const vectors = opened.dense ? await opened.dense.index.stats() : null;
    const missing = opened.dense ? (await opened.dense.index.missing(counts.passages + 1)).length : 0;
    const retrieval = vectors ? { mode: 'hybrid', vectors, missing } : { mode: 'bm25', why: opened.off ?? null };
    const { assignment } = await runtime.scorers();
    return {
      data_dir: cfg.data_dir,
      storage: runtime.storage.dialect,
      pages: counts.pages,
      pages_pending_index: counts.pending,
      pages_gone: counts.gone,
      passages: counts.passages,
      index: stats,
      last_crawl: last
        ? {
            id: last.id,
            status: last.status,
            started_at: last.started_at,
            finished_at: last.finished_at,
            resumed_from: last.resumed_from,
            stats: last.stats ? (JSON.parse(last.stats) as unknown) : null,
          }
        : null,
      resumable_crawl: resumable ? { id: resumable.id, status: resumable.status, queued: (await runtime.frontier.counts(resumable.id)).queued } : null,
      reranker: info,
      retrieval,
      models: assignment,
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
  const reranker = s['reranker'] as { kind: string; model: string; source: string; why?: string };
  const retrieval = s['retrieval'] as { mode: string; why?: string | null; missing?: number; vectors?: { model: string; vectors: number; stale: number } };
  const last = s['last_crawl'] as { id: string; status: string | null; started_at: string; finished_at: string | null } | null;
  const resumable = s['resumable_crawl'] as { id: string; status: string; queued: number } | null;
  const lastLine = last
    ? `${last.id} ${last.status ?? 'finished'}, started ${last.started_at}${last.finished_at ? `, ended ${last.finished_at}` : ''}` +
      (last.status === 'interrupted' ? ' (its process died)' : '')
    : 'never';
  process.stdout.write(
    [
      `data        ${String(s['data_dir'])} (${String(s['storage'])})`,
      `pages       ${String(s['pages'])} (${String(s['pages_pending_index'])} waiting for the indexer, ${String(s['pages_gone'])} gone)`,
      `passages    ${String(s['passages'])}`,
      `index       ${index.backend}: ${index.documents} passages, ${index.bytes === null ? 'size unknown' : `${(index.bytes / 1e6).toFixed(1)} MB`}`,
      `last crawl  ${lastLine}`,
      ...(resumable ? [`resumable   ${resumable.id} (${resumable.status}): ${resumable.queued} URLs queued; notary crawl --resume continues it`] : []),
      `retrieval   ${
        retrieval.vectors
          ? `hybrid: BM25 + ${retrieval.vectors.model}, ${retrieval.vectors.vectors} vectors (${retrieval.missing ?? 0} passages waiting, ${retrieval.vectors.stale} of another model)`
          : `bm25 only (${retrieval.why ?? 'dense retrieval off'})`
      }`,
      reranker.kind === 'lexical'
        ? `reranker    lexical fallback, term overlap only: ${reranker.why ?? 'no neural model'} (notary models list)`
        : `reranker    ${reranker.kind} ${reranker.model}: ${reranker.why ?? `from ${reranker.source}`}`,
      ...assignmentLines(s['models'] as ModelAssignment),
      '',
    ].join('\n'),
  );
}
