import type { NotaryConfig } from '../core/index.js';
import { NotaryError } from '../core/index.js';
import { Runtime, warningsLog, type ModelAssignment } from '../runtime/index.js';
import { normalizeQuery } from '../search/index.js';

/** "bi-encoder all-MiniLM-L6-v2" or "lexical": who gives rerank_score at `depth`. */
function scorerAt(assignment: ModelAssignment, depth: number): string {
  const row = assignment.depths.find((d) => depth >= d.from && depth <= d.to);
  return row ? (row.scorer === 'lexical' ? 'lexical' : `${row.scorer} ${row.model}`) : 'none';
}

export async function searchCommand(cfg: NotaryConfig, query: string, opts: { depth: number; json?: boolean }): Promise<void> {
  const trimmed = normalizeQuery(query, cfg.search.max_query_length);
  if (opts.depth > cfg.search.max_depth) {
    throw new NotaryError('depth_out_of_range', `depth must be from 1 to ${cfg.search.max_depth}`);
  }
  const runtime = await Runtime.open(cfg, { log: warningsLog });
  try {
    const pipeline = await runtime.search();
    const { assignment } = await runtime.scorers();
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
        `rerank ${t.reranked} passages ${t.rerank_ms.toFixed(1)} ms; ` +
        (t.cross_encoder
          ? `cross-encoder ${assignment.cross_encoder ?? ''} judged ${t.cross_encoder.scored} results in ${t.cross_encoder.ms.toFixed(1)} ms (${t.cross_encoder.cached} cached); `
          : '') +
        `scorer at depth ${opts.depth}: ${scorerAt(assignment, opts.depth)}; retrieval ${pipeline.retrieval})\n`,
    );
    const rewrite = t.passes.find((p) => p.rewriter)?.rewriter;
    const rewriter = runtime.queryRewriter;
    // A failed rewrite was already reported as a warning by the runtime's rewriter.
    if (rewrite && rewriter && !rewrite.error) {
      process.stderr.write(`query rewriter (${rewriter.model}, ${Math.round(rewrite.ms)} ms): ${rewrite.queries.map((q) => JSON.stringify(q)).join(', ') || 'no new query'}\n`);
    }
  } finally {
    await runtime.close();
  }
}
