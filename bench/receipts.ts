/**
 * Receipt benchmark: what a signed call adds to the paid path, per engine, measured in one run.
 *   npx tsx bench/receipts.ts [--count N] [--engines sqlite,postgres] [--out FILE]
 * Series (milliseconds): sign (JCS + digests + Ed25519 with @noble/ed25519), append (the log write: leaf hash, the
 * closed subtree hashes from the cached right edge, one transaction), append without the cached right edge (the
 * edge re-read from storage first, as after another process appended), issue (sign + append), checkpoint (root from
 * stored nodes + note signature), inclusion proof at the final size. Target: append p50 <= 1 ms.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openReceipts, type NotaryReceipt, type Receipts } from '../payments/receipts/index.js';
import { newRequestSalt } from '../payments/crypto/index.js';
import { migrateToLatest, openPostgres, openSqlite, type Storage } from '../storage/db.js';
import { createDatabase, startPostgres, type TestPostgres } from '../testkit/postgres.js';
import { gitCommit, loadAverage, machineInfo } from './perf/machine.js';
import { summarise, type LatencySummary } from './perf/stats.js';

interface Args {
  count: number;
  engines: Array<'sqlite' | 'postgres'>;
  out: string | null;
}

function parseArgs(argv: string[]): Args {
  const args: Args = { count: 5000, engines: ['sqlite', 'postgres'], out: null };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = argv[i + 1];
    if (flag === '--count' && value && /^\d+$/.test(value)) args.count = Number(value);
    else if (flag === '--engines' && value) args.engines = value.split(',').filter((e): e is 'sqlite' | 'postgres' => e === 'sqlite' || e === 'postgres');
    else if (flag === '--out' && value) args.out = value;
    else throw new Error(`usage: npx tsx bench/receipts.ts [--count N] [--engines sqlite,postgres] [--out FILE] (bad argument ${flag})`);
    i++;
  }
  return args;
}

const now = () => performance.now();
const body = new TextEncoder().encode('{"query":"vacuum dead tuples","depth":1}');
const response = (i: number) => ({
  query: 'vacuum dead tuples',
  depth: 1,
  results: Array.from({ length: 10 }, (_, k) => ({ url: `https://docs.test/${i}/${k}`, title: `Page ${k}`, snippet: 'x'.repeat(280), rerank_score: 0.5 + k / 100 })),
  credits_used: 1,
  rate_limit: { limit: 60, remaining: 59, reset_ms: 1000 },
});

async function runEngine(engine: 'sqlite' | 'postgres', count: number, dir: string, pg: TestPostgres | undefined): Promise<Record<string, LatencySummary | number>> {
  let storage: Storage;
  if (engine === 'sqlite') storage = openSqlite(path.join(dir, `${engine}.sqlite`));
  else storage = openPostgres(await createDatabase((pg as TestPostgres).url, `bench_receipts_${Date.now()}`));
  await migrateToLatest(storage);
  const settings = { issuer: 'https://bench.test', origin: 'bench.test/receipt-log', keyFile: path.join(dir, `${engine}-keys.json`), createKeyFile: true, checkpointIntervalMs: 0 };
  const receipts: Receipts = await openReceipts(storage.db, settings);
  const sign: number[] = [];
  const append: number[] = [];
  const appendCold: number[] = [];
  const issue: number[] = [];
  const signed: NotaryReceipt[] = [];
  const input = (i: number) => ({ claim: 'search_call_consumed' as const, credits: 1, requestId: `req_bench${String(i).padStart(15, '0')}`, requestBody: body, requestSalt: newRequestSalt(), responseBody: response(i) });
  for (let i = 0; i < count; i++) {
    const t = now();
    signed.push(receipts.issuer.sign(input(i)));
    sign.push(now() - t);
  }
  const started = now();
  for (const receipt of signed) {
    const t = now();
    await receipts.log.append(receipt);
    append.push(now() - t);
  }
  const appendWall = now() - started;
  // Without the cached right edge: a second ReceiptLog on the same storage, whose cache another appender keeps stale.
  const other = await openReceipts(storage.db, settings);
  const cold = Math.max(100, Math.floor(count / 10));
  for (let i = 0; i < cold; i++) {
    await other.log.append(signed[i] as NotaryReceipt);
    const t = now();
    await receipts.log.append(signed[i] as NotaryReceipt);
    appendCold.push(now() - t);
  }
  for (let i = 0; i < Math.floor(count / 5); i++) {
    const t = now();
    await receipts.issuer.issue(input(count + i));
    issue.push(now() - t);
  }
  const checkpoint: number[] = [];
  const proofs: number[] = [];
  const size = await receipts.log.treeSize();
  for (let i = 0; i < 200; i++) {
    await receipts.log.append(signed[i] as NotaryReceipt);
    let t = now();
    await receipts.log.checkpoint();
    checkpoint.push(now() - t);
    t = now();
    await receipts.log.inclusionProofAt((i * 7919) % size, size);
    proofs.push(now() - t);
  }
  await storage.close();
  return {
    sign: summarise(sign),
    append: summarise(append),
    append_per_s: Math.round((count / appendWall) * 1000),
    append_without_cached_edge: summarise(appendCold),
    issue: summarise(issue),
    checkpoint: summarise(checkpoint),
    inclusion_proof: summarise(proofs),
    final_tree_size: size + 200,
  };
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const dir = mkdtempSync(path.join(tmpdir(), 'notary-bench-receipts-'));
  const loadStart = loadAverage();
  const pg = args.engines.includes('postgres') ? await startPostgres() : undefined;
  const results: Record<string, unknown> = {};
  try {
    for (const engine of args.engines) {
      process.stderr.write(`${engine}: ${args.count} receipts...\n`);
      results[engine] = await runEngine(engine, args.count, dir, pg);
      const r = results[engine] as Record<string, LatencySummary>;
      process.stderr.write(
        `${engine}: sign p50 ${r['sign']?.p50} ms, append p50 ${r['append']?.p50} / p95 ${r['append']?.p95} / p99 ${r['append']?.p99} ms, ` +
          `append without cached edge p50 ${r['append_without_cached_edge']?.p50} ms, issue p50 ${r['issue']?.p50} ms\n`,
      );
    }
  } finally {
    pg?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const date = new Date().toISOString().slice(0, 10);
  const report = {
    benchmark: 'receipts',
    date: new Date().toISOString(),
    machine: machineInfo(),
    commit: gitCommit(process.cwd()),
    load_average_start: loadStart,
    load_average_end: loadAverage(),
    count: args.count,
    target: { append_p50_ms: 1 },
    results,
  };
  const out = args.out ?? path.join('bench/results', `receipts-${date}.json`);
  mkdirSync(path.dirname(out), { recursive: true });
  writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
}

await main();
