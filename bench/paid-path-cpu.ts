/**
 * CPU of the paid-call path of a depth-1 search in process (issue 28): the real app (Fastify inject), accounts, rate
 * limits, usage and collections on SQLite, over the four API documents with the lexical scorer, so that what differs
 * between two checkouts is the paid path. Prints CPU microseconds a call (this process: main thread and helpers) and
 * the SQLite statements a call runs, by kind.
 *
 *   npx tsx bench/paid-path-cpu.ts [--calls 2000] [--rounds 3]
 *
 * Run it from two checkouts one after the other, alternating, to compare them on a busy machine.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { apiTestConfig, startApi } from '../testkit/app.js';

const flag = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};
const calls = flag('--calls', 2000);
const rounds = flag('--rounds', 3);
const dir = mkdtempSync(path.join(tmpdir(), 'notary-paid-path-'));
const api = await startApi(apiTestConfig(dir, { tiers: { bulk: { requests_per_minute: 1_000_000, burst: 1_000_000 } } }));
try {
  const tenant = await api.runtime.accounts.createTenant('bench', { credits: 1_000_000_000, tier: 'bulk' });
  const { key } = await api.runtime.accounts.createKey(tenant.id);
  const sqlite = api.runtime.storage.sqlite;
  if (!sqlite) throw new Error('SQLite only');
  const words = ['vacuum', 'tables', 'index', 'postgres', 'query', 'planner', 'wal', 'checkpoint', 'backup', 'replica'];
  let n = 0;
  const call = async () => {
    n++;
    const query = `${words[n % words.length]} ${words[Math.floor(n / words.length) % words.length]} ${n}`;
    const r = await api.app.inject({
      method: 'POST',
      url: '/v1/search',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      payload: JSON.stringify({ query, depth: 1 }),
    });
    if (r.statusCode !== 200) throw new Error(`status ${r.statusCode}: ${r.body}`);
  };
  for (let i = 0; i < 200; i++) await call(); // warm-up
  const results: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const changesBefore = (sqlite.prepare('select total_changes() as c').get() as { c: number }).c;
    const cpu = process.cpuUsage();
    for (let i = 0; i < calls; i++) await call();
    const used = process.cpuUsage(cpu);
    const changes = (sqlite.prepare('select total_changes() as c').get() as { c: number }).c - changesBefore;
    const us = (used.user + used.system) / calls;
    results.push(us);
    console.log(JSON.stringify({ round, calls, cpu_us_per_call: Math.round(us), rows_changed_per_call: Math.round((changes / calls) * 100) / 100 }));
  }
  results.sort((a, b) => a - b);
  console.log(JSON.stringify({ median_cpu_us_per_call: Math.round(results[Math.floor(results.length / 2)]!) }));
} finally {
  await api.close();
  rmSync(dir, { recursive: true, force: true });
}
