/**
 * Depth-1 CPU a search, server against server (issue 28): `notary serve` started once per config over one data folder
 * (a folder `npm run bench` left, or any with pages, passages and vectors), then loaded in turn with distinct
 * known-item queries (each query once per server), rounds alternating between the servers, so that a busy machine
 * weighs on each alike. Per run: searches/s, p50, and the server's CPU milliseconds a search split by thread kind
 * (main threads, model worker threads, V8's GC helpers, libuv's pool) from /proc.
 *
 *   npx tsx bench/depth1-cpu.ts --data DIR --config A.json --config B.json [--seconds 10] [--rounds 3]
 *     [--connections 10] [--depth 1] [--workers 2] [--settle 20] [--skip 0] [--out FILE]
 *
 * A config given as REPO::FILE runs that checkout's `notary serve` (e.g. an unpacked `git archive` of the commit before a
 * change, with node_modules linked), so before and after alternate in one run. REPO::FILE::DATA serves its own data
 * folder (a copy: an older checkout cannot open a database a newer one has migrated); then give `--key` (a key made
 * in the data folder before it was copied; one `--key` a config, in order, where the folders hold different keys), since the key is otherwise made with this checkout's CLI in --data.
 *
 * BENCH_SERVE_NODE_OPTIONS reaches the servers (e.g. "--cpu-prof --cpu-prof-dir=DIR").
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { knownItemQueries, requirePgDocs, sample } from '../testkit/pgdocs.js';
import { distinctQueries, load } from './perf/load-runner.js';
import { loadAverage, processTreeCpuMs } from './perf/machine.js';
import { createBenchKey, startServe, type ServerHandle } from './perf/serve-server.js';
import { round2 } from './perf/stats.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

interface Args {
  data: string;
  configs: string[];
  seconds: number;
  rounds: number;
  connections: number;
  depth: number;
  workers: number;
  out: string | null;
  /** Seconds of rest after the warm-up (each process builds its full-text copy and loads its vectors then). */
  settle: number;
  /** Queries of the pool left out at the start (another population: the pool's later queries are known-item queries with a word added). */
  skip: number;
  /** API keys already in the data folders, one a config in order (the last for the rest); none: one is made with this checkout's CLI in --data. */
  keys: string[];
}

function parseArgs(argv: readonly string[]): Args {
  const args: Args = { data: '', configs: [], seconds: 10, rounds: 3, connections: 10, depth: 1, workers: 2, out: null, settle: 20, skip: 0, keys: [] };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = argv[i + 1];
    if (value === undefined) throw new Error(`${flag} needs a value`);
    i++;
    if (flag === '--data') args.data = value;
    else if (flag === '--config') args.configs.push(value);
    else if (flag === '--seconds') args.seconds = Number(value);
    else if (flag === '--rounds') args.rounds = Number(value);
    else if (flag === '--connections') args.connections = Number(value);
    else if (flag === '--depth') args.depth = Number(value);
    else if (flag === '--workers') args.workers = Number(value);
    else if (flag === '--out') args.out = value;
    else if (flag === '--settle') args.settle = Number(value);
    else if (flag === '--skip') args.skip = Number(value);
    else if (flag === '--key') args.keys.push(value);
    else throw new Error(`unknown flag ${flag}`);
  }
  if (!args.data || args.configs.length === 0) throw new Error('usage: --data DIR --config FILE [--config FILE ...]');
  return args;
}

/** CPU ms so far of every thread of `pid` and its child processes, by thread kind. */
function threadCpu(rootPid: number): Map<string, number> {
  const parentOf = new Map<number, number>();
  const pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name)).map(Number);
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      parentOf.set(pid, Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // exited meanwhile
    }
  }
  const tree = new Set([rootPid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [pid, parent] of parentOf) {
      if (tree.has(parent) && !tree.has(pid)) {
        tree.add(pid);
        grew = true;
      }
    }
  }
  const byKind = new Map<string, number>();
  for (const pid of tree) {
    let tasks: string[];
    try {
      tasks = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue;
    }
    for (const tid of tasks) {
      try {
        const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        const kind = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
        const ms = (Number(fields[11]) + Number(fields[12])) * 10;
        byKind.set(kind, (byKind.get(kind) ?? 0) + ms);
      } catch {
        // exited meanwhile
      }
    }
  }
  return byKind;
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const made = args.keys.length > 0 ? null : await createBenchKey(repoRoot, args.configs[0]!.split('::')[1] ?? args.configs[0]!, args.data);
  const keyOf = (i: number): string => made ?? args.keys[Math.min(i, args.keys.length - 1)]!;
  const queries = distinctQueries(sample(knownItemQueries(requirePgDocs()), 100_000).map((q) => q.query));
  const servers: Array<{ config: string; server: ServerHandle; used: number; key: string }> = [];
  const rows: Array<Record<string, unknown>> = [];
  try {
    for (const given of args.configs) {
      const [repo, config, data = args.data] = given.includes('::') ? (given.split('::') as [string, string, string?]) : [repoRoot, given];
      const server = await startServe(path.resolve(repo), config, data, args.workers);
      servers.push({ config: given, server, used: args.skip, key: keyOf(servers.length) });
    }
    // Warm-up: JIT, connections, the full-text copy each process builds at start (a few seconds in its own thread).
    for (const s of servers) await load(s.server.url, s.key, queries.slice(-300), 2, 3, args.depth);
    await new Promise((r) => setTimeout(r, args.settle * 1000));
    for (let round = 0; round < args.rounds; round++) {
      for (const s of servers) {
        const pid = s.server.child.pid!;
        const before = threadCpu(pid);
        const totalBefore = processTreeCpuMs(pid) ?? 0;
        const loadBefore = loadAverage();
        // Each server gets its own slice: the same queries for every server, never repeated within one.
        const pool = queries.slice(s.used);
        // The run's window on the monotonic clock a --cpu-prof profile's timestamps use (µs), to cut a profile to it.
        const startUs = Number(process.hrtime.bigint() / 1000n);
        const result = await load(s.server.url, s.key, pool, args.connections, args.seconds, args.depth);
        const after = threadCpu(pid);
        const totalAfter = processTreeCpuMs(pid) ?? 0;
        s.used += result.requests.total;
        const n = Math.max(1, result.requests.total);
        const cpu: Record<string, number> = {};
        // Threads that exited during the run (their time stays in the process's own counters) count in the total only.
        for (const [kind, ms] of after) {
          const d = ms - (before.get(kind) ?? 0);
          if (d > 0) cpu[kind] = round2(d / n);
        }
        const total = totalAfter - totalBefore;
        const row = {
          config: s.config,
          round,
          searches_per_s: round2(result.requests.total / args.seconds),
          p50_ms: result.latency.p50,
          non_2xx: result.non2xx,
          errors: result.errors + result.timeouts,
          // The pool ran out within the run: its requests beyond the pool repeated queries (answered from caches).
          repeated_queries: Math.max(0, result.requests.total - pool.length),
          server_cpu_ms_per_search: round2(total / n),
          cpu_ms_per_search_by_thread: cpu,
          load_before: loadBefore,
          window_us: [startUs, Number(process.hrtime.bigint() / 1000n)],
        };
        rows.push(row);
        console.log(JSON.stringify(row));
        if (row.repeated_queries > 0) {
          console.warn(`round ${round} of ${s.config} ran out of distinct queries (${pool.length} left, ${result.requests.total} sent): its figures include repeats; use fewer or shorter rounds`);
        }
      }
    }
  } finally {
    for (const s of servers) await s.server.stop();
  }
  if (args.out) writeFileSync(args.out, JSON.stringify({ args, rows }, null, 2));
}

await main();
