import type { NotaryConfig } from '../core/config.js';
import { NotaryError } from '../core/errors.js';
import { SearchPipeline } from '../search/pipeline.js';
import { queryRewriterFromConfig } from '../search/query-rewriter.js';
import { openContext, openReranker } from './context.js';
import { openDense } from './dense.js';

export async function searchCommand(cfg: NotaryConfig, query: string, opts: { depth: number; json?: boolean }): Promise<void> {
  const trimmed = query.trim();
  if (!trimmed) throw new NotaryError('invalid_request', 'the query is empty');
  if (trimmed.length > cfg.search.max_query_length) {
    throw new NotaryError('invalid_request', `the query is longer than ${cfg.search.max_query_length} characters`);
  }
  if (opts.depth > cfg.search.max_depth) {
    throw new NotaryError('depth_out_of_range', `depth must be from 1 to ${cfg.search.max_depth}`);
  }
  const ctx = await openContext(cfg);
  const reranker = await openReranker(cfg);
  const opened = await openDense(cfg, ctx.storage, { reranker, log: () => {} });
  try {
    const rewriter = queryRewriterFromConfig(cfg.search);
    const pipeline = new SearchPipeline({
      index: ctx.index,
      reranker,
      config: cfg.search,
      ...(opened.dense ? { dense: opened.dense } : {}),
      ...(rewriter ? { rewriter } : {}),
    });
    const outcome = await pipeline.search({ query: trimmed, depth: opts.depth });
    if (opts.json) {
      process.stdout.write(`${JSON.stringify({ query: trimmed, depth: opts.depth, results: outcome.results }, null, 2)}\n`);
      return;
    }
    if (outcome.results.length === 0) process.stdout.write('no results\n');
    outcome.results.forEach((r, i) => {
      process.stdout.write(`${i + 1}. ${r.title}  [${r.rerank_score.toFixed(3)}]\n   ${r.url}\n   ${r.snippet}\n\n`);
    });
    const t = outcome.timings;
    process.stderr.write(
      `${outcome.results.length} results in ${t.total_ms.toFixed(1)} ms (retrieve ${t.retrieve_ms.toFixed(1)} ms, ` +
        `rerank ${t.reranked} passages ${t.rerank_ms.toFixed(1)} ms; scorer ${reranker.info.kind}: ${reranker.info.model}; ` +
        `retrieval ${pipeline.retrieval})\n`,
    );
    const rewrite = t.passes.find((p) => p.rewriter)?.rewriter;
    if (rewrite && rewriter) {
      process.stderr.write(
        rewrite.error
          ? `query rewriter (${rewriter.model}) failed after ${Math.round(rewrite.ms)} ms, searched without it: ${rewrite.error}\n`
          : `query rewriter (${rewriter.model}, ${Math.round(rewrite.ms)} ms): ${rewrite.queries.map((q) => JSON.stringify(q)).join(', ') || 'no new query'}\n`,
      );
    }
  } finally {
    await opened.close();
    await reranker.close();
    await ctx.close();
  }
}
