import { describe, expect, it } from 'vitest';
import { otherCpuMsPerSearch, backendTargets, distinctQueries, warmUpQueries, type LoadRow } from './load-runner.js';

describe('distinctQueries', () => {
  it('keeps each query once, then adds variants with a word of another query, none repeating', () => {
    const base = ['create index', 'vacuum full', '::', 'create index', 'logical replication slots', 'pg_dump archive format', 'window functions'];
    const out = distinctQueries(base);
    expect(new Set(out).size).toBe(out.length);
    expect(out.slice(0, 5)).toEqual(['create index', 'vacuum full', 'logical replication slots', 'pg_dump archive format', 'window functions']);
    expect(out.length).toBeGreaterThan(5);
    for (const variant of out.slice(5)) {
      const [first, ...rest] = variant.split(' ');
      expect(base.some((q) => variant.startsWith(`${q} `))).toBe(true);
      expect(first).toBeTruthy();
      expect(rest.length).toBeGreaterThan(0);
    }
  });
});

describe('warmUpQueries', () => {
  it('are distinct, none of them a timed query, each a query of the base with words of others added', () => {
    const words = ['vacuum', 'index', 'replication', 'trigger', 'function', 'sequence', 'partition', 'extension', 'locking', 'statistics'];
    const base = words.flatMap((w, i) => [`${w} basics`, `${w} ${words[(i + 3) % words.length]!} options`, `tuning ${w}`, `${w}`]);
    const timed = new Set(distinctQueries(base));
    const warm = warmUpQueries(base);
    expect(new Set(warm).size).toBe(warm.length);
    expect(warm.length).toBeGreaterThanOrEqual(base.length);
    for (const q of warm) {
      expect(timed.has(q)).toBe(false);
      expect(base.some((b) => q.startsWith(`${b} `))).toBe(true);
    }
  });
});

describe('backendTargets (issue 34)', () => {
  const row = (backend: string, connections: number, p50: number, perS: number): LoadRow => ({
    backend, setting: '1 process', workers: 1, query_vector_cache: 10_000, ranking_cache: 10_000, queries: 'distinct', connections, duration_s: 10,
    requests: 100, searches_per_s: perS, p50_ms: p50, p90_ms: p50, p99_ms: p50, errors: 0, non_2xx: 0, load_average: [1, 1, 1],
    server_cpu_ms_per_search: null, client_cpu_ms_per_search: 1, machine_cpu_ms_per_search: null,
  });
  it('compares each backend with SQLite at 1 and 10 connections (distinct queries, 1 process)', () => {
    const targets = backendTargets([row('sqlite-fts5', 1, 10, 100), row('sqlite-fts5', 10, 0, 200), row('meilisearch', 1, 25, 40), row('meilisearch', 10, 0, 120)]);
    expect(targets).toEqual([
      { name: 'meilisearch_p50_over_sqlite_1_connection', target: '<= 2 (issue 34)', actual: 2.5, met: false },
      { name: 'meilisearch_searches_per_s_over_sqlite_10_connections', target: '>= 0.5 (issue 34)', actual: 0.6, met: true },
    ]);
    expect(backendTargets([row('sqlite-fts5', 1, 10, 100)])).toEqual([]);
  });
});

describe('otherCpuMsPerSearch', () => {
  it("is the machine's CPU a search less the server's and the load generator's, null where a counter is missing", () => {
    expect(otherCpuMsPerSearch({ machine_cpu_ms_per_search: 30.93, server_cpu_ms_per_search: 14.88, client_cpu_ms_per_search: 1.1 })).toBe(14.95);
    expect(otherCpuMsPerSearch({ machine_cpu_ms_per_search: 7, server_cpu_ms_per_search: 6.9, client_cpu_ms_per_search: 0.4 })).toBe(0);
    expect(otherCpuMsPerSearch({ machine_cpu_ms_per_search: null, server_cpu_ms_per_search: 6.9, client_cpu_ms_per_search: 0.4 })).toBeNull();
    expect(otherCpuMsPerSearch({ machine_cpu_ms_per_search: 7, server_cpu_ms_per_search: null, client_cpu_ms_per_search: 0.4 })).toBeNull();
  });
});
