/**
 * What MPP costs beside an API key, measured side by side in one process (`npx tsx bench/mpp.ts`):
 *  - verifying an envelope (form + Ed25519 per party), by number of parties;
 *  - a paid /v1/search through the whole API (Fastify inject, real SQLite or PostgreSQL, the lexical scorer over four
 *    documents, so the payment path is what differs), API key against MPP with 1, 3 and 16 parties, interleaved;
 *  - the all-or-none multi-party debit alone, 3 parties, sequential and 50 at once.
 * Flags: --calls N (paid calls per series, default 200), --postgres (also on a throwaway PostgreSQL cluster),
 * --out FILE. Writes JSON under bench/results/ with the date, machine, load and commit.
 */
import { createPublicKey, randomBytes, verify as nodeVerify } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type { ConfigInput } from '../core/config.js';
import { buildEnvelope, equalShares, parseEnvelope, Parties, verifyPartySignature, type PartySigner } from '../payments/modes/mpp/index.js';
import { publicKeyFromSeed, signBytes, verifyBytes } from '../payments/crypto/ed25519.js';
import { toBase64Url } from '../payments/crypto/encoding.js';
import { apiTestConfig, startApi, type ApiHarness } from '../testkit/app.js';
import { createDatabase, startPostgres } from '../testkit/postgres.js';
import { gitCommit, loadAverage, machineInfo } from './perf/machine.js';
import { summarise, type LatencySummary } from './perf/stats.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const flag = (name: string) => args.includes(name);
const value = (name: string, fallback: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? (args[i + 1] ?? fallback) : fallback;
};
const CALLS = Number(value('--calls', '200'));
const note = (message: string) => process.stderr.write(`[bench:mpp] ${message}\n`);
const URL_OF_CALL = 'http://localhost:80/v1/search';
const BODY = JSON.stringify({ query: 'vacuum tables', depth: 1 });

function verifySeries(parties: number, rounds: number): LatencySummary {
  const signers: PartySigner[] = equalShares(parties).map((share, i) => ({ party: `p${i}`, share, seed: new Uint8Array(randomBytes(32)) }));
  const keys = signers.map((s) => publicKeyFromSeed(s.seed));
  const times: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const { encoded } = buildEnvelope({ method: 'POST', url: URL_OF_CALL, body: BODY, totalCredits: 1, parties: signers });
    const started = performance.now();
    const parsed = parseEnvelope(encoded, { maxParties: 64 });
    for (const [i, key] of keys.entries()) if (!verifyPartySignature(parsed, i, key)) throw new Error('signature did not verify');
    times.push(performance.now() - started);
  }
  return summarise(times);
}

/**
 * One Ed25519 verification of a 600-byte message (an envelope's signing input is about that long for 3 parties) with
 * @noble/ed25519 (what the server uses) and with Node's OpenSSL binding, interleaved: what switching would save.
 */
function verifyLibraries(rounds: number): { noble: LatencySummary; node_crypto: LatencySummary } {
  const seed = new Uint8Array(randomBytes(32));
  const publicKey = publicKeyFromSeed(seed);
  const message = new TextEncoder().encode('x'.repeat(600));
  const signature = signBytes(message, seed);
  const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: toBase64Url(publicKey) }, format: 'jwk' });
  const noble: number[] = [];
  const native: number[] = [];
  for (let r = 0; r < rounds; r++) {
    let started = performance.now();
    if (!verifyBytes(signature, message, publicKey)) throw new Error('noble did not verify');
    noble.push(performance.now() - started);
    started = performance.now();
    if (!nodeVerify(null, message, key, signature)) throw new Error('node:crypto did not verify');
    native.push(performance.now() - started);
  }
  return { noble: summarise(noble), node_crypto: summarise(native) };
}

interface BackendResult {
  backend: string;
  calls_per_series: number;
  /** Whole-call latency of /v1/search depth 1, ms. */
  search: Record<string, LatencySummary>;
  /** accounts.debitMany with 3 parties, ms per debit when sequential; debits per second with 50 at once. */
  debit_many: { sequential: LatencySummary; concurrent_50_per_s: number };
}

async function backendSeries(name: string, storage: ConfigInput['storage']): Promise<BackendResult> {
  const dir = mkdtempSync(path.join(tmpdir(), 'notary-bench-mpp-'));
  let api: ApiHarness | undefined;
  try {
    api = await startApi(apiTestConfig(dir, { storage, payments: { modes: { mpp: { max_parties: 16 } } } }));
    const harness = api;
    const parties = new Parties(harness.runtime.storage.db);
    const makeParties = async (prefix: string, count: number): Promise<PartySigner[]> => {
      const shares = equalShares(count);
      const out: PartySigner[] = [];
      for (let i = 0; i < count; i++) {
        const tenant = await harness.runtime.accounts.createTenant(`${prefix}-${i}`, { credits: 1_000_000, tier: 'bulk' });
        const seed = new Uint8Array(randomBytes(32));
        await parties.addKey(tenant, toBase64Url(publicKeyFromSeed(seed)));
        out.push({ party: tenant.name, share: shares[i] ?? '0', seed });
      }
      return out;
    };
    const keyTenant = await harness.runtime.accounts.createTenant('bench-key', { credits: 1_000_000, tier: 'bulk' });
    const { key } = await harness.runtime.accounts.createKey(keyTenant.id);
    const groups: Record<string, PartySigner[]> = { mpp_1: await makeParties('one', 1), mpp_3: await makeParties('three', 3), mpp_16: await makeParties('sixteen', 16) };
    const series: Record<string, number[]> = { api_key: [], mpp_1: [], mpp_3: [], mpp_16: [] };
    const call = async (authorization: string) => {
      const started = performance.now();
      const res = await harness.app.inject({ method: 'POST', url: '/v1/search', headers: { 'content-type': 'application/json', authorization }, payload: BODY });
      const ms = performance.now() - started;
      if (res.statusCode !== 200) throw new Error(`bench call failed: ${res.statusCode} ${res.body}`);
      return ms;
    };
    // Warm-up, then the series interleaved so load changes hit every series alike.
    for (let i = 0; i < 10; i++) await call(`Bearer ${key}`);
    for (let r = 0; r < CALLS; r++) {
      series['api_key']?.push(await call(`Bearer ${key}`));
      for (const [label, signers] of Object.entries(groups)) {
        const { encoded } = buildEnvelope({ method: 'POST', url: URL_OF_CALL, body: BODY, totalCredits: 1, parties: signers });
        series[label]?.push(await call(`MPP envelope=${encoded}`));
      }
    }
    const trio = (await harness.runtime.accounts.listTenants()).filter((t) => t.name.startsWith('three-'));
    const debit = (i: number) =>
      harness.runtime.accounts.debitMany({ debits: trio.map((t) => ({ tenantId: t.id, credits: 1, reason: 'bench' })), requestId: `req_bench_${i}` });
    const sequential: number[] = [];
    for (let i = 0; i < CALLS; i++) {
      const started = performance.now();
      const outcome = await debit(i);
      sequential.push(performance.now() - started);
      if (!outcome.ok) throw new Error('bench debit refused');
    }
    const started = performance.now();
    await Promise.all(Array.from({ length: 50 }, (_, i) => debit(CALLS + i)));
    const concurrentMs = performance.now() - started;
    return {
      backend: name,
      calls_per_series: CALLS,
      search: Object.fromEntries(Object.entries(series).map(([label, times]) => [label, summarise(times)])),
      debit_many: { sequential: summarise(sequential), concurrent_50_per_s: Math.round((50 / concurrentMs) * 1000) },
    };
  } finally {
    await api?.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const loadBefore = loadAverage();
  note(`load ${loadBefore.join(' ')}; ${CALLS} calls per series`);
  verifyLibraries(20);
  const libraries = verifyLibraries(CALLS);
  note(`one Ed25519 verify p50: @noble/ed25519 ${libraries.noble.p50} ms, node:crypto ${libraries.node_crypto.p50} ms`);
  verifySeries(3, 20); // warm-up: JIT and noble's tables, so the first series is not charged for them
  const verify = Object.fromEntries([1, 3, 16].map((n) => [`parties_${n}`, verifySeries(n, CALLS)]));
  note(`verify: ${Object.entries(verify).map(([k, v]) => `${k} p50 ${v.p50} ms`).join(', ')}`);
  const backends: BackendResult[] = [await backendSeries('sqlite', { driver: 'sqlite' })];
  if (flag('--postgres')) {
    const pg = await startPostgres();
    try {
      backends.push(await backendSeries('postgres', { driver: 'postgres', postgres_url: await createDatabase(pg.url, `bench_mpp_${process.pid}`) }));
    } finally {
      pg.stop();
    }
  }
  const result = {
    date: new Date().toISOString(),
    commit: gitCommit(repoRoot),
    machine: machineInfo(),
    load_before: loadBefore,
    load_after: loadAverage(),
    ed25519_verify_ms: libraries,
    envelope_verify_ms: verify,
    backends,
  };
  for (const b of backends) {
    process.stdout.write(`\n${b.backend}: /v1/search depth 1, ${b.calls_per_series} calls each (ms)\n`);
    process.stdout.write('series     p50     p95     mean\n');
    for (const [label, s] of Object.entries(b.search)) process.stdout.write(`${label.padEnd(9)} ${String(s.p50).padStart(6)}  ${String(s.p95).padStart(6)}  ${String(s.mean).padStart(6)}\n`);
    process.stdout.write(`debitMany (3 parties): p50 ${b.debit_many.sequential.p50} ms sequential, ${b.debit_many.concurrent_50_per_s}/s with 50 at once\n`);
  }
  process.stdout.write(`\none Ed25519 verify p50: @noble/ed25519 ${libraries.noble.p50} ms, node:crypto ${libraries.node_crypto.p50} ms\n`);
  process.stdout.write(`envelope verify (form + Ed25519 each party), p50 ms: ${Object.entries(verify).map(([k, v]) => `${k} ${v.p50}`).join(', ')}\n`);
  process.stdout.write(`load ${loadBefore.join(' ')} -> ${result.load_after.join(' ')}\n`);
  const out = value('--out', path.join(repoRoot, 'bench/results', `mpp-${result.date.slice(0, 10)}.json`));
  mkdirSync(path.dirname(out), { recursive: true });
  writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
  note(`wrote ${out}`);
}

await main();
