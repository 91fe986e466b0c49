import { describe, expect, it } from 'vitest';
import { EngineProbe } from '../../indexer/backends/engine-probe.js';
import { stageRatios, type BackendStageRow } from './backend-stages.js';

describe('engine probe and backend stage rows (issue 34)', () => {
  it('counts requests sent side by side once in the time with a request in flight, and sums the engine time', () => {
    const probe = new EngineProbe();
    probe.calls.push({ what: 'search', startedAt: 0, roundTripMs: 10, engineMs: 4 });
    probe.calls.push({ what: 'vector search', startedAt: 5, roundTripMs: 10, engineMs: 6 });
    probe.calls.push({ what: 'reading vectors', startedAt: 20, roundTripMs: 5, engineMs: null });
    expect(probe.since(0)).toEqual({ calls: 3, roundTripMs: 20, engineMs: 10 });
    expect(probe.since(2)).toEqual({ calls: 1, roundTripMs: 5, engineMs: 0 });
  });

  it('gives each backend stage as a ratio of the first backend (SQLite) stage', () => {
    const row = (backend: string, p50: number, mean: number): BackendStageRow => ({ backend, stage: 'vector search', p50_ms: p50, p95_ms: p50, mean_ms: mean, engine_calls: 0, engine_ms: 0, round_trip_ms: 0 });
    expect(stageRatios([row('sqlite-fts5', 2, 4), row('meilisearch', 5, 6)])).toEqual([{ backend: 'meilisearch', stage: 'vector search', ratio_p50: 2.5, ratio_mean: 1.5 }]);
  });
});
