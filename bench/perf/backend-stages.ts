/**
 * Per-stage rows of depth-1 search for several index backends side by side (issue 34): the same queries, each new to
 * every backend, interleaved query by query so a shared machine's load falls on all alike. For a search-engine
 * backend the engine probe splits each stage into the engine's own time (from its responses), the round trips around
 * it (HTTP, JSON, the client) and the number of requests a search sends.
 */
import { performance } from 'node:perf_hooks';
import { startEngineProbe, stopEngineProbe } from '../../indexer/backends/engine-probe.js';
import type { SearchIndex } from '../../indexer/search-index.js';
import type { SearchPipeline } from '../../search/pipeline.js';
import type { DenseRetrieval } from '../../search/request-state.js';
import { round2, summarise } from './stats.js';

export interface BackendUnderTest {
  backend: string;
  index: SearchIndex;
  dense: DenseRetrieval;
  pipeline: SearchPipeline;
}

export interface BackendStageRow {
  backend: string;
  stage: string;
  p50_ms: number;
  p95_ms: number;
  mean_ms: number;
  /** Requests to the engine per search in this stage (mean); 0 for an embedded index. */
  engine_calls: number;
  /** The engine's own time in this stage (sum of processingTimeMs, mean per search). */
  engine_ms: number;
  /** Wall time with a request to the engine in flight (mean per search; requests side by side count once). */
  round_trip_ms: number;
  /** The stage's requests by what they were for: requests and engine time per search (means); absent when none. */
  by_request?: Record<string, { calls: number; engine_ms: number }>;
}

interface Series {
  ms: number[];
  calls: number[];
  engine: number[];
  roundTrip: number[];
  /** Per request kind: total requests and engine ms over the timed searches. */
  kinds: Map<string, { calls: number; engineMs: number }>;
}

const STAGES = [
  'full text: passages (best 3 a page)',
  'full text: whole pages',
  'vector search',
  'search in process (depth 1: all stages + fusion, scores, snippets)',
] as const;

/** Runs every query through each backend's stages (queries[0..warmUp) untimed) and returns rows by backend and stage. */
export async function backendStages(backends: readonly BackendUnderTest[], queries: readonly string[], limit: number, warmUp = 5): Promise<BackendStageRow[]> {
  const series = new Map<string, Series>();
  const at = (backend: string, stage: string): Series => {
    const key = `${backend}\u0000${stage}`;
    let s = series.get(key);
    if (!s) series.set(key, (s = { ms: [], calls: [], engine: [], roundTrip: [], kinds: new Map() }));
    return s;
  };
  const probe = startEngineProbe();
  try {
    for (const [i, query] of queries.entries()) {
      // The first vector is embedded once for all backends: the embedding is the same work whatever the index.
      const [vector] = await backends[0]!.dense.embedder.embed([query]);
      for (let k = 0; k < backends.length; k++) {
        const b = backends[(i + k) % backends.length]!;
        const timed = async (stage: string, work: () => Promise<unknown>): Promise<void> => {
          const from = probe.calls.length;
          const started = performance.now();
          await work();
          const ms = performance.now() - started;
          if (i < warmUp) return;
          const engine = probe.since(from);
          const s = at(b.backend, stage);
          s.ms.push(ms);
          s.calls.push(engine.calls);
          s.engine.push(engine.engineMs);
          s.roundTrip.push(engine.roundTripMs);
          for (const call of probe.calls.slice(from)) {
            const kind = s.kinds.get(call.what) ?? { calls: 0, engineMs: 0 };
            kind.calls++;
            kind.engineMs += call.engineMs ?? 0;
            s.kinds.set(call.what, kind);
          }
        };
        await timed(STAGES[0], () => b.index.search(query, { limit, perPageLimit: 3, filter: { excludeNavigation: true } }));
        await timed(STAGES[1], () => b.index.searchPages(query, { limit: 20, filter: { excludeNavigation: true } }));
        if (vector) await timed(STAGES[2], () => b.dense.index.search(vector, { limit, perPageLimit: 3 }));
        await timed(STAGES[3], () => b.pipeline.search({ query, depth: 1 }));
      }
    }
  } finally {
    stopEngineProbe();
  }
  const mean = (xs: number[]) => (xs.length === 0 ? 0 : round2(xs.reduce((a, x) => a + x, 0) / xs.length));
  const rows: BackendStageRow[] = [];
  for (const b of backends) {
    for (const stage of STAGES) {
      const s = series.get(`${b.backend}\u0000${stage}`);
      if (!s) continue;
      const sum = summarise(s.ms);
      const n = Math.max(1, s.ms.length);
      const byRequest = Object.fromEntries([...s.kinds].map(([what, k]) => [what, { calls: round2(k.calls / n), engine_ms: round2(k.engineMs / n) }]));
      rows.push({
        backend: b.backend,
        stage,
        p50_ms: sum.p50,
        p95_ms: sum.p95,
        mean_ms: sum.mean,
        engine_calls: mean(s.calls),
        engine_ms: mean(s.engine),
        round_trip_ms: mean(s.roundTrip),
        ...(s.kinds.size > 0 ? { by_request: byRequest } : {}),
      });
    }
    const total = rows.find((r) => r.backend === b.backend && r.stage === STAGES[3]);
    if (total) {
      // What the pipeline spends with no request to the engine in flight: query building, fusion, scores, snippets
      // (and the query embedding where it does not overlap a request).
      rows.push({
        backend: b.backend,
        stage: 'outside the engine (search in process - time with a request in flight)',
        p50_ms: Number.NaN,
        p95_ms: Number.NaN,
        mean_ms: round2(total.mean_ms - total.round_trip_ms),
        engine_calls: 0,
        engine_ms: 0,
        round_trip_ms: 0,
      });
    }
  }
  return rows;
}

/** Each backend's stage mean over the first backend's (the baseline), for the report. */
export function stageRatios(rows: readonly BackendStageRow[]): Array<{ backend: string; stage: string; ratio_p50: number | null; ratio_mean: number | null }> {
  const base = rows[0]?.backend;
  return rows
    .filter((r) => r.backend !== base)
    .map((r) => {
      const b = rows.find((x) => x.backend === base && x.stage === r.stage);
      const ratio = (x: number, y: number | undefined) => (y && Number.isFinite(x) && Number.isFinite(y) && y > 0 ? round2(x / y) : null);
      return { backend: r.backend, stage: r.stage, ratio_p50: ratio(r.p50_ms, b?.p50_ms), ratio_mean: ratio(r.mean_ms, b?.mean_ms) };
    });
}
