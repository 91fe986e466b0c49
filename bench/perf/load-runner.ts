/**
 * The load side of the serve phase (`npm run bench`): autocannon's searches against a running server, rotating or
 * never-repeating queries, with the CPU each search cost the server and the load generator, one row per run.
 */
import autocannon from 'autocannon';
import { loadAverage, machineBusyMs } from './machine.js';
import type { ServerHandle } from './serve-server.js';
import { round2 } from './stats.js';

export interface ServeSetting {
  name: string;
  workers: number;
  queryVectorCache: number;
  /** indexer.sqlite-fts5.ranking_cache: full-text rankings kept for repeated queries (FTS5). */
  rankingCache: number;
  /** reranker.workers of the server (unset: its default). */
  modelWorkers?: number;
}

export interface LoadRow {
  /** The index backend the server searched (indexer.backend). */
  backend: string;
  setting: string;
  workers: number;
  query_vector_cache: number;
  ranking_cache: number;
  /** rotating: the same pool of queries again and again; distinct: no query repeats within the run. */
  queries: 'rotating' | 'distinct';
  connections: number;
  duration_s: number;
  requests: number;
  searches_per_s: number;
  p50_ms: number;
  p90_ms: number;
  p99_ms: number;
  errors: number;
  non_2xx: number;
  load_average: [number, number, number];
  /** CPU per search: server processes and threads, and the load generator (same cores). */
  server_cpu_ms_per_search: number | null;
  client_cpu_ms_per_search: number;
  /** The whole machine's CPU per search (machine.ts machineBusyMs): with a search engine's own process, its share too. */
  machine_cpu_ms_per_search: number | null;
}

/** CPU milliseconds per search of a timed run: the server's (every process and thread), the load generator's, the machine's. */
export interface CpuPerSearch {
  server_cpu_ms_per_search: number | null;
  client_cpu_ms_per_search: number;
  machine_cpu_ms_per_search: number | null;
}

/** Runs `work` (a load of `requests()` searches) and says what each search cost in CPU, server and load generator. */
export async function withCpu<T>(server: ServerHandle, work: () => Promise<T>, requests: (result: T) => number): Promise<{ result: T; cpu: CpuPerSearch }> {
  const serverBefore = server.cpuMs();
  const machineBefore = machineBusyMs();
  const clientBefore = process.cpuUsage();
  const result = await work();
  const client = process.cpuUsage(clientBefore);
  const machineAfter = machineBusyMs();
  const serverAfter = server.cpuMs();
  const n = Math.max(1, requests(result));
  return {
    result,
    cpu: {
      server_cpu_ms_per_search: serverBefore === null || serverAfter === null ? null : round2((serverAfter - serverBefore) / n),
      client_cpu_ms_per_search: round2((client.user + client.system) / 1000 / n),
      machine_cpu_ms_per_search: machineBefore === null || machineAfter === null ? null : round2((machineAfter - machineBefore) / n),
    },
  };
}

/**
 * Queries for runs where none may repeat: `base` without duplicates (and without queries that have no word), then each of them with a content word of
 * another query added, twice over (two other queries), so that a few thousand known-item queries last for several
 * runs of a server answering hundreds a second.
 */
export function distinctQueries(base: readonly string[]): string[] {
  // A query without a letter or digit ("$", "::") is a 400 by design: not a search to time.
  const unique = [...new Set(base.map((q) => q.trim()).filter((q) => /[\p{L}\p{N}]/u.test(q)))];
  const lastWord = (q: string) => q.split(/\s+/).filter((w) => /^\p{L}{4,}$/u.test(w)).at(-1);
  const out = new Set(unique);
  for (const stride of [7, 13]) {
    unique.forEach((q, i) => {
      const word = lastWord(unique[(i * stride + 1) % unique.length]!);
      if (word && !q.split(/\s+/).includes(word)) out.add(`${q} ${word}`);
    });
  }
  return [...out];
}

/**
 * Queries to warm a server with before its timed runs, none of them among `distinctQueries(base)`: each query of
 * `base` with content words of two other queries added (other strides than distinctQueries'), so that the warm-up
 * runs the whole search path (no cache answers) and leaves every timed query new to the server.
 */
export function warmUpQueries(base: readonly string[]): string[] {
  const timed = new Set(distinctQueries(base));
  const unique = [...new Set(base.map((q) => q.trim()).filter((q) => /[\p{L}\p{N}]/u.test(q)))];
  const lastWord = (q: string) => q.split(/\s+/).filter((w) => /^\p{L}{4,}$/u.test(w)).at(-1);
  const out = new Set<string>();
  for (const [a, b] of [
    [17, 29],
    [23, 31],
  ] as const) {
    unique.forEach((q, i) => {
      const words = [lastWord(unique[(i * a + 2) % unique.length]!), lastWord(unique[(i * b + 3) % unique.length]!)].filter(
        (w): w is string => w !== undefined && !q.split(/\s+/).includes(w),
      );
      const query = [q, ...new Set(words)].join(' ');
      if (words.length > 0 && !timed.has(query)) out.add(query);
    });
  }
  return [...out];
}

export async function load(url: string, key: string, queries: readonly string[], connections: number, durationS: number, depth = 1): Promise<autocannon.Result> {
  let next = 0;
  return autocannon({
    url: `${url}/v1/search`,
    connections,
    duration: durationS,
    // A deep search queued behind others may take longer than autocannon's default 10 s: counted, not dropped.
    timeout: 120,
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    requests: [
      {
        setupRequest: (request) => ({ ...request, body: JSON.stringify({ query: queries[next++ % queries.length], depth }) }),
      },
    ],
  });
}

export interface LoadRunOptions {
  backend: string;
  setting: ServeSetting;
  key: string;
  /** The same pool of queries again and again. */
  rotating: readonly string[];
  /** Queries that never repeat: each run takes those the server has not had yet. */
  distinct: readonly string[];
  connections: readonly number[];
  durationS: number;
  note: (message: string) => void;
  /** Where remarks on the runs go (e.g. distinct queries that ran out). */
  notes: string[];
}

/** The timed runs against one started server: a warm-up, then rotating and distinct queries at each connection count. */
export async function runLoads(server: ServerHandle, options: LoadRunOptions): Promise<LoadRow[]> {
  const { backend, setting, key, rotating, distinct, note, notes } = options;
  const rows: LoadRow[] = [];
  // Where the next run with distinct queries starts in their list: each run takes queries this server never had.
  let unused = 0;
  await load(server.url, key, rotating, 2, 3); // warm-up: caches, JIT, connections
  for (const kind of ['rotating', 'distinct'] as const) {
    if (kind === 'distinct' && setting.queryVectorCache === 0 && setting.rankingCache === 0) continue; // the same as rotating without caches
    for (const connections of options.connections) {
      const before = loadAverage();
      // Distinct queries: a fresh slice of the list for each run, never searched before by this server.
      const pool = kind === 'rotating' ? rotating : distinct.slice(unused);
      const { result, cpu } = await withCpu(server, () => load(server.url, key, pool, connections, options.durationS), (x) => x.requests.total);
      if (kind === 'distinct') unused += result.requests.total;
      const r: LoadRow = {
        backend,
        setting: setting.name,
        workers: setting.workers,
        query_vector_cache: setting.queryVectorCache,
        ranking_cache: setting.rankingCache,
        queries: kind,
        connections,
        duration_s: options.durationS,
        requests: result.requests.total,
        searches_per_s: round2(result.requests.total / options.durationS),
        p50_ms: result.latency.p50,
        p90_ms: result.latency.p90,
        p99_ms: result.latency.p99,
        errors: result.errors + result.timeouts,
        non_2xx: result.non2xx,
        load_average: before,
        ...cpu,
      };
      if (kind === 'distinct' && result.requests.total > pool.length) {
        notes.push(`${setting.name}, ${connections} connections: ${result.requests.total} requests over ${pool.length} distinct queries, so some repeated`);
      }
      rows.push(r);
      note(`serve phase: ${backend}, ${setting.name}, ${kind}, ${connections} connections: ${r.searches_per_s}/s, p50 ${r.p50_ms} ms, p99 ${r.p99_ms} ms, CPU ${r.server_cpu_ms_per_search ?? '?'} + ${r.client_cpu_ms_per_search} ms a search, machine ${r.machine_cpu_ms_per_search ?? '?'} (load ${before.join(' ')})`);
    }
  }
  return rows;
}

/**
 * CPU a search of every process but notary's server and the load generator: a search engine's own process (Meilisearch,
 * PostgreSQL) on an otherwise quiet machine. Null where /proc cannot tell.
 */
export function otherCpuMsPerSearch(row: Pick<LoadRow, 'server_cpu_ms_per_search' | 'client_cpu_ms_per_search' | 'machine_cpu_ms_per_search'>): number | null {
  if (row.machine_cpu_ms_per_search === null || row.server_cpu_ms_per_search === null) return null;
  return round2(Math.max(0, row.machine_cpu_ms_per_search - row.server_cpu_ms_per_search - row.client_cpu_ms_per_search));
}

/**
 * Issue 34's targets for a backend measured beside SQLite (distinct queries, "1 process" as shipped): depth-1 p50 at
 * 1 connection within 2x of SQLite's, and at 10 connections at least half of SQLite's searches per second.
 */
export function backendTargets(rows: readonly LoadRow[]): Array<{ name: string; target: string; actual: number; met: boolean }> {
  const find = (backend: string, connections: number) => rows.find((r) => r.backend === backend && r.setting === '1 process' && r.queries === 'distinct' && r.connections === connections);
  const out: Array<{ name: string; target: string; actual: number; met: boolean }> = [];
  for (const backend of new Set(rows.map((r) => r.backend).filter((b) => b !== 'sqlite-fts5'))) {
    const [base1, base10, one, ten] = [find('sqlite-fts5', 1), find('sqlite-fts5', 10), find(backend, 1), find(backend, 10)];
    if (base1 && one) {
      const ratio = round2(one.p50_ms / Math.max(0.01, base1.p50_ms));
      out.push({ name: `${backend}_p50_over_sqlite_1_connection`, target: '<= 2 (issue 34)', actual: ratio, met: ratio <= 2 });
    }
    if (base10 && ten) {
      const ratio = round2(ten.searches_per_s / Math.max(0.01, base10.searches_per_s));
      out.push({ name: `${backend}_searches_per_s_over_sqlite_10_connections`, target: '>= 0.5 (issue 34)', actual: ratio, met: ratio >= 0.5 });
    }
  }
  return out;
}
