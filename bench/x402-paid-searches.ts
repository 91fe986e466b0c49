/**
 * 200 paid searches on a local EVM chain (`npx tsx bench/x402-paid-searches.ts [--searches N] [--payers N]`): the
 * official x402 client pays notary's /v1/search through `notary facilitator`'s code on an in-process EDR chain, then
 * the books are checked against the chain (payTo growth = sum of the quotes; ledger rows and Transfer events one to
 * one). Writes bench/results/x402-paid-searches-<date>.json with the machine and its load.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { gitCommit, loadAverage, machineInfo } from './perf/machine.js';
import { runPaidSearches, startChainWorld, startFacilitatorInProcess, startListeningApi, x402ApiConfig } from '../testkit/x402.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { searches: { type: 'string', default: '200' }, payers: { type: 'string', default: '4' }, out: { type: 'string' } } });
  const searches = Number(values.searches);
  const payerCount = Number(values.payers);
  if (!Number.isSafeInteger(searches) || searches < 1 || !Number.isSafeInteger(payerCount) || payerCount < 1) throw new Error('--searches and --payers take positive integers');
  const dir = mkdtempSync(path.join(tmpdir(), 'notary-bench-x402-'));
  const loadBefore = loadAverage();
  const world = await startChainWorld({ payers: payerCount, mint: 10_000_000n });
  const facilitator = await startFacilitatorInProcess(world, path.join(dir, 'facilitator'));
  const api = await startListeningApi(x402ApiConfig(path.join(dir, 'api'), world, facilitator));
  try {
    process.stderr.write(`[bench] ${searches} paid searches by ${payerCount} payers at once on ${world.chain.network} ...\n`);
    const report = await runPaidSearches(world, api, { searches, payers: world.payers });
    const holds =
      report.served === searches &&
      report.pay_to_growth_atomic === report.quoted_atomic &&
      report.payers_spent_atomic === report.quoted_atomic &&
      report.ledger_rows === searches &&
      report.transfer_events === searches &&
      report.matched_one_to_one === searches;
    const result = {
      benchmark: 'x402-paid-searches',
      date: new Date().toISOString(),
      commit: gitCommit(repoRoot),
      machine: machineInfo(),
      load_average_before: loadBefore,
      load_average_after: loadAverage(),
      chain: 'EDR (@nomicfoundation/edr, in process) behind HTTP JSON-RPC; EIP-3009 token compiled with solc from npm',
      holds,
      ...report,
    };
    const out = values.out ?? path.join(repoRoot, 'bench', 'results', `x402-paid-searches-${result.date.slice(0, 10)}.json`);
    mkdirSync(path.dirname(out), { recursive: true });
    writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    process.stderr.write(`[bench] ${holds ? 'the books match the chain' : 'MISMATCH between the books and the chain'}; written to ${out}\n`);
    if (!holds) process.exitCode = 1;
  } finally {
    await api.close();
    await facilitator.stop();
    await world.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
