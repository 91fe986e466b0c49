/**
 * Same answers, same charges (issue 28): `notary serve` of two checkouts (or configs) over one data folder, asked the
 * same distinct known-item queries one at a time, each call under its own X-Request-Id; then every answer's results
 * and credits_used, and each call's ledger and usage rows (found by request id), are compared between the two. A
 * change that only makes a search cheaper must leave all of them equal. Exits 1 on the first difference it prints.
 *
 *   npx tsx bench/depth1-same.ts --data DIR --config A --config B [--queries 300] [--depth 1] [--workers 2]
 *
 * A config given as REPO::FILE runs that checkout's `notary serve` (as in bench/depth1-cpu.ts).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import BetterSqlite3 from 'better-sqlite3';
import { knownItemQueries, requirePgDocs, sample } from '../testkit/pgdocs.js';
import { distinctQueries } from './perf/load-runner.js';
import { createBenchKey, startServe, type ServerHandle } from './perf/serve-server.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function parseArgs(argv: readonly string[]): { data: string; configs: string[]; queries: number; depth: number; workers: number } {
  const args = { data: '', configs: [] as string[], queries: 300, depth: 1, workers: 2 };
  for (let i = 0; i < argv.length; i += 2) {
    const [flag, value] = [argv[i], argv[i + 1]];
    if (value === undefined) throw new Error(`${flag} needs a value`);
    if (flag === '--data') args.data = value;
    else if (flag === '--config') args.configs.push(value);
    else if (flag === '--queries') args.queries = Number(value);
    else if (flag === '--depth') args.depth = Number(value);
    else if (flag === '--workers') args.workers = Number(value);
    else throw new Error(`unknown flag ${flag}`);
  }
  if (!args.data || args.configs.length !== 2) throw new Error('usage: --data DIR --config A --config B');
  return args;
}

interface Answer {
  status: number;
  results: unknown;
  credits_used: unknown;
}

async function ask(server: ServerHandle, key: string, requestId: string, query: string, depth: number): Promise<Answer> {
  const response = await fetch(`${server.url}/v1/search`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-request-id': requestId },
    body: JSON.stringify({ query, depth }),
    signal: AbortSignal.timeout(60_000),
  });
  const body = (await response.json()) as Record<string, unknown>;
  return { status: response.status, results: body['results'] ?? body['code'], credits_used: body['credits_used'] };
}

/** A call's ledger and usage rows without what differs by design between two calls (ids, times, balances). */
function rowsOf(db: BetterSqlite3.Database, requestId: string): unknown {
  const ledger = db.prepare('select delta, reason, key_id, idempotency_key from credit_ledger where request_id = ? order by id').all(requestId);
  const usage = db
    .prepare('select tenant_id, key_id, payer, mode, environment, operation, depth, render, credits, amount, asset from usage_events where request_id = ? order by id')
    .all(requestId);
  return { ledger, usage };
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const key = await createBenchKey(repoRoot, args.configs[0]!.split('::').at(-1)!, args.data);
  // Queries from the end of the list: bench/depth1-cpu.ts takes its own from the start.
  const queries = distinctQueries(sample(knownItemQueries(requirePgDocs()), 100_000).map((q) => q.query)).slice(-args.queries);
  const servers: ServerHandle[] = [];
  const stamp = Date.now().toString(36);
  let differences = 0;
  let compared = 0;
  try {
    for (const given of args.configs) {
      const [repo, config] = given.includes('::') ? (given.split('::') as [string, string]) : [repoRoot, given];
      servers.push(await startServe(path.resolve(repo), config, args.data, args.workers));
    }
    const db = new BetterSqlite3(path.join(args.data, 'notary.sqlite'), { readonly: true });
    try {
      for (const [i, query] of queries.entries()) {
        const ids = servers.map((_, s) => `same_${stamp}_${s}_${i}`);
        const answers: Answer[] = [];
        for (const [s, server] of servers.entries()) answers.push(await ask(server, key, ids[s]!, query, args.depth));
        if (answers.some((answer) => answer.status !== 200 || !Array.isArray(answer.results))) throw new Error(`not answered: ${JSON.stringify(answers)}`);
        const [a, b] = answers.map((answer, s) => JSON.stringify({ ...answer, rows: rowsOf(db, ids[s]!) }));
        compared += (answers[0]!.results as unknown[]).length;
        if (a !== b) {
          differences++;
          console.log(JSON.stringify({ query, a: JSON.parse(a!), b: JSON.parse(b!) }));
          break;
        }
      }
    } finally {
      db.close();
    }
  } finally {
    for (const server of servers) await server.stop();
  }
  console.log(JSON.stringify({ queries: queries.length, depth: args.depth, configs: args.configs, results: compared, same: differences === 0 }));
  if (differences > 0) process.exitCode = 1;
}

await main();
