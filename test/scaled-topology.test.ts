import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as cheerio from 'cheerio';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot, runCli, startServer, type RunningServer } from '../testkit/cli.js';
import { available } from '../testkit/components.js';
import { meilisearchAvailable, startMeilisearch, type TestMeilisearch } from '../testkit/meilisearch.js';
import { pgDocsDir } from '../testkit/pgdocs.js';
import { createDatabase, freePort, startPostgres, type TestPostgres } from '../testkit/postgres.js';
import { redisAvailable, startRedis, type TestRedis } from '../testkit/redis.js';

/**
 * The docker-compose topology run natively on 127.0.0.1: PostgreSQL (state, shared crawl frontier, ledger), Redis
 * (rate limits, idempotency), Meilisearch (the index), two `notary crawl-worker` processes on one shared frontier and
 * two `notary serve` API nodes. The workers crawl the SQL command reference of Debian's PostgreSQL documentation; one
 * is killed with SIGKILL mid-crawl. Then concurrent paid searches go to both API nodes.
 */

const SCOPE = /\/sql-[a-z0-9]+\.html$/;
const ready =
  available('PostgreSQL documentation (postgresql-doc-15)', existsSync(path.join(pgDocsDir, 'sql-commands.html'))) &&
  available('PostgreSQL (Debian)', existsSync('/usr/lib/postgresql')) &&
  redisAvailable() &&
  meilisearchAvailable();

let postgres: TestPostgres | undefined;
let redis: TestRedis | undefined;
let meili: TestMeilisearch | undefined;
let site: Server | undefined;
let siteUrl = '';
const hits = new Map<string, number>();
/** Page requests the site was answering at once, and the most at any moment (per_host_concurrency across workers). */
let inFlight = 0;
let mostInFlight = 0;
let databaseUrl = '';
const dir = mkdtempSync(path.join(tmpdir(), 'notary-topology-'));
const children: ChildProcess[] = [];
const servers: RunningServer[] = [];
let env: Record<string, string> = {};

async function query<T>(sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows as T[];
  } finally {
    await client.end();
  }
}

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

interface Worker {
  child: ChildProcess;
  output: () => string;
}

function startWorker(name: string): Worker {
  const child = spawn(process.execPath, [path.join(repoRoot, 'bin/notary.js'), '--data', path.join(dir, name), 'crawl-worker'], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  return { child, output: () => output };
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}

beforeAll(async () => {
  if (!ready) return;
  // Each server is kept as soon as it is up, so afterAll stops it even when another one fails to start (a failed
  // Meilisearch start once left this suite's PostgreSQL and Redis running after the run).
  const [startedPostgres, startedRedis, startedMeili] = await Promise.all([
    startPostgres().then((server) => (postgres = server)),
    startRedis().then((server) => (redis = server)),
    startMeilisearch().then((server) => (meili = server)),
  ]);
  databaseUrl = await createDatabase(startedPostgres.url, `notary_topology_${process.pid}`);
  // The documentation served as a site, a little slowly (so a worker can be killed mid-crawl), counting page fetches.
  site = createServer((req, res) => {
    const pathname = new URL(req.url ?? '/', 'http://x').pathname;
    const file = path.join(pgDocsDir, path.basename(pathname));
    if (!pathname.endsWith('.html') || !existsSync(file)) return void res.writeHead(404).end();
    hits.set(pathname, (hits.get(pathname) ?? 0) + 1);
    inFlight++;
    mostInFlight = Math.max(mostInFlight, inFlight);
    setTimeout(() => {
      inFlight--;
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(readFileSync(file));
    }, 40);
  });
  await new Promise<void>((resolve) => site!.listen(0, '127.0.0.1', resolve));
  siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  const config = path.join(dir, 'notary.json');
  writeFileSync(config, JSON.stringify({ crawler: { include: [SCOPE.source], max_concurrency: 4, use_sitemaps: false } }));
  env = {
    NOTARY_CONFIG: config,
    NOTARY_STORAGE: 'postgres',
    NOTARY_DATABASE_URL: databaseUrl,
    NOTARY_INDEX_BACKEND: 'meilisearch',
    NOTARY_MEILISEARCH_URL: startedMeili.url,
    NOTARY_MEILISEARCH_API_KEY: startedMeili.masterKey,
    NOTARY_MEILISEARCH_INDEX: 'topology',
    NOTARY_STORES: 'redis',
    NOTARY_REDIS_URL: startedRedis.url,
    NOTARY_EMBEDDING_MODEL: 'off',
    NOTARY_MODEL_DOWNLOAD: 'false',
    NOTARY_CRAWL_SHARED_FRONTIER: 'true',
    NOTARY_CRAWL_LEASE_SECONDS: '3',
    NOTARY_CRAWL_DELAY_MS: '0',
    NOTARY_SEEDS: `${siteUrl}/sql-commands.html`,
    NOTARY_RECEIPTS_KEY_FILE: path.join(dir, 'receipt-keys.json'),
  };
}, 120_000);

afterAll(async () => {
  for (const server of servers) await server.stop();
  for (const child of children) await stopChild(child);
  if (site) {
    site.closeAllConnections();
    await new Promise<void>((resolve) => site!.close(() => resolve()));
  }
  await meili?.stop();
  await redis?.stop();
  postgres?.stop();
  rmSync(dir, { recursive: true, force: true });
}, 60_000);

describe.runIf(ready)('the compose topology on 127.0.0.1: 2 crawler workers, 2 API nodes, PostgreSQL, Redis, Meilisearch', () => {
  it('two workers crawl one frontier: no stored page fetched again (a re-fetch is only a lease the SIGKILLed worker had not stored), nothing lost, index and pages agree', async () => {
    const first = startWorker('worker-1');
    const second = startWorker('worker-2');
    const stored = async () => Number((await query<{ n: string }>("select count(*) as n from pages where state != 'gone'").catch(() => [{ n: '0' }]))[0]?.n ?? 0);
    await waitFor('40 stored pages', async () => (await stored()) >= 40, 120_000);
    expect(first.child.exitCode, first.output()).toBeNull();
    // Both workers hold leases of the one round at once.
    const both = [String(first.child.pid), String(second.child.pid)].sort();
    await waitFor('both workers to hold leases', async () => {
      const owners = await query<{ lease_owner: string }>("select distinct lease_owner from crawl_frontier where state = 'leased'");
      return JSON.stringify(owners.map((o) => o.lease_owner.split(':').at(-1)).sort()) === JSON.stringify(both);
    }, 20_000);
    const killedOwner = `:${first.child.pid}`;
    first.child.kill('SIGKILL');
    await new Promise((r) => first.child.once('exit', r));
    // What the killed worker held: leased, perhaps fetched and stored, never marked done. And what was stored and
    // fetched when it died (the snapshot is taken before its leases can run out, so nobody has taken them over yet).
    const heldByKilled = (await query<{ url: string }>("select url from crawl_frontier where state = 'leased' and lease_owner like $1", [`%${killedOwner}`])).map(
      (r) => new URL(r.url).pathname,
    );
    const hitsAtKill = new Map(hits);
    const storedAtKill = new Set(
      (await query<{ url: string }>("select url from pages where state != 'gone'")).map((r) => new URL(r.url).pathname),
    );

    // The surviving worker takes over the expired leases, finishes the round and indexes it.
    await waitFor('the round to finish and be indexed', async () => /crawl run_\S+ of \S+ finished: .*indexed \d+ pages/.test(second.output()), 240_000);
    await stopChild(second.child);

    const runs = await query<{ id: string; status: string; options: string }>('select id, status, options from crawl_runs');
    expect(runs.map((r) => r.status)).toEqual(['finished']);
    expect(JSON.parse(runs[0]!.options)).toMatchObject({ shared: true });
    expect(await query('select 1 from crawl_frontier')).toEqual([]); // a finished round's frontier is cleared

    // No page whose content was stored in this cycle is fetched again: nothing stored when the worker died was
    // fetched after it. The only page fetched twice is one the killed worker held a lease on and had fetched (or was
    // fetching) without storing it: fetched once before the kill, once after, by the worker that took the lease over.
    // A page is stored in the transaction that marks its lease done, so none of the killed worker's leases has a page.
    expect(heldByKilled.filter((p) => storedAtKill.has(p)), 'stored, yet still leased by the killed worker').toEqual([]);
    const fetchedAfterStored = [...storedAtKill].filter((p) => (hits.get(p) ?? 0) !== (hitsAtKill.get(p) ?? 0));
    expect(fetchedAfterStored, 'stored before the kill, fetched again').toEqual([]);
    const twice = [...hits.entries()].filter(([, n]) => n > 1).map(([p]) => p);
    for (const p of twice) {
      expect(heldByKilled, `${p} fetched ${hits.get(p)} times`).toContain(p);
      expect(storedAtKill.has(p), `${p} was stored when the worker died and was fetched again`).toBe(false);
      expect([hitsAtKill.get(p), hits.get(p)], `${p}: fetches at the kill, in all`).toEqual([1, 2]);
    }

    // Nothing lost: every page fetched is stored, and every in-scope link of a stored page leads to a stored page.
    const pages = await query<{ url: string; html: string; indexed_at: string | null }>("select url, html, indexed_at from pages where state != 'gone'");
    const storedPaths = new Set(pages.map((p) => new URL(p.url).pathname));
    expect(storedPaths).toEqual(new Set(hits.keys()));
    for (const page of pages) {
      const $ = cheerio.load(page.html);
      $('a[href]').each((_, a) => {
        const target = new URL($(a).attr('href') ?? '', page.url);
        if (target.origin === siteUrl && SCOPE.test(target.pathname)) expect(storedPaths, `${target.pathname} linked from ${page.url}`).toContain(target.pathname);
      });
    }
    expect(storedPaths.size).toBeGreaterThan(150);
    // Each worker runs 4 requests at once, but the host sees at most per_host_concurrency (2) from both together.
    expect(mostInFlight).toBe(2);

    // The index agrees with the database: every page indexed, one Meilisearch document per stored passage.
    expect(pages.filter((p) => p.indexed_at === null)).toEqual([]);
    const passages = Number((await query<{ n: string }>('select count(*) as n from passages'))[0]?.n);
    const stats = (await (await fetch(`${meili!.url}/indexes/topology/stats`, { headers: { authorization: `Bearer ${meili!.masterKey}` } })).json()) as {
      numberOfDocuments: number;
    };
    expect(passages).toBeGreaterThan(storedPaths.size);
    expect(stats.numberOfDocuments).toBe(passages);
    process.stderr.write(
      `topology: ${storedPaths.size} pages stored, ${passages} passages = ${stats.numberOfDocuments} Meilisearch documents; ` +
        `the killed worker held ${heldByKilled.length} leases, none stored; at most ${mostInFlight} requests to the site at once; ` +
        `${twice.length} pages fetched twice, each a lease of the killed worker with nothing stored (${twice.join(', ') || 'none'})\n`,
    );
  }, 420_000);

  it('two API nodes: concurrent paid searches are charged once each, the rate limit holds across nodes', async () => {
    const created = await runCli(['--data', path.join(dir, 'admin'), 'keys', 'create', '--tenant', 'acme', '--credits', '100', '--tier', 'enterprise'], env);
    expect(created.code, created.stderr).toBe(0);
    const key = created.stdout.trim().split('\n').at(-1) ?? '';
    const limited = await runCli(['--data', path.join(dir, 'admin'), 'keys', 'create', '--tenant', 'small', '--credits', '100', '--tier', 'free'], env);
    const smallKey = limited.stdout.trim().split('\n').at(-1) ?? '';
    // The API nodes sign receipts with one key (compose: a shared volume), made once before they start.
    const rotated = await runCli(['--data', path.join(dir, 'admin'), 'receipts', 'rotate-key'], env);
    expect(rotated.code, rotated.stderr).toBe(0);
    for (const name of ['api-1', 'api-2']) servers.push(await startServer(['--data', path.join(dir, name), '--no-crawl'], await freePort(), env));
    const [a, b] = servers as [RunningServer, RunningServer];

    const search = (server: RunningServer, bearer: string, idempotencyKey?: string) =>
      fetch(`${server.url}/v1/search`, {
        method: 'POST',
        headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json', ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}) },
        body: JSON.stringify({ query: 'vacuum a database', depth: 1 }),
      });

    const one = await search(a, key);
    expect(one.status).toBe(200);
    const body = (await one.json()) as { results: Array<{ url: string }> };
    expect(body.results.map((r) => r.url)).toContain(`${siteUrl}/sql-vacuum.html`);

    // 12 operations, each sent to both nodes at once with one Idempotency-Key, and 8 without a key.
    const calls: Array<Promise<Response>> = [];
    for (let i = 0; i < 12; i++) calls.push(search(a, key, `op-${i}`), search(b, key, `op-${i}`));
    for (let i = 0; i < 8; i++) calls.push(search(i % 2 ? a : b, key));
    const answers = await Promise.all(calls);
    await Promise.all(answers.map((r) => r.arrayBuffer()));
    const statuses = answers.map((r) => r.status);
    for (const s of statuses) expect([200, 409]).toContain(s); // 409: the same key still running on the other node
    for (let i = 0; i < 12; i++) expect([statuses[2 * i], statuses[2 * i + 1]]).toContain(200);
    const balance = await query<{ credits: number }>("select credits from tenants where name = 'acme'");
    const debits = await query<{ n: string }>("select count(*) as n from credit_ledger l join tenants t on t.id = l.tenant_id where t.name = 'acme' and l.delta < 0");
    expect(Number(debits[0]?.n)).toBe(1 + 12 + 8);
    expect(Number(balance[0]?.credits)).toBe(100 - (1 + 12 + 8));

    // The free tier allows a burst of 10: with Redis the two nodes share it (in-process limits would allow 20).
    const started = Date.now();
    const burst = await Promise.all(Array.from({ length: 20 }, (_, i) => search(i % 2 ? a : b, smallKey)));
    const elapsedS = (Date.now() - started) / 1000;
    await Promise.all(burst.map((r) => r.arrayBuffer()));
    const allowed = burst.filter((r) => r.status === 200).length;
    expect(burst.filter((r) => r.status === 429).length).toBe(20 - allowed);
    expect(allowed).toBeGreaterThanOrEqual(10);
    expect(allowed).toBeLessThanOrEqual(11 + Math.ceil(elapsedS)); // refill: 60 a minute
    const smallDebits = await query<{ n: string }>("select count(*) as n from credit_ledger l join tenants t on t.id = l.tenant_id where t.name = 'small' and l.delta < 0");
    expect(Number(smallDebits[0]?.n)).toBe(allowed);
  }, 240_000);
  it('two API nodes: a key limited to a collection reads it on either node, never the others (issue 33 isolation)', async () => {
    expect(servers.length, 'the two API nodes of the previous test').toBe(2);
    const [a, b] = servers as [RunningServer, RunningServer];
    const admin = (args: string[]) => runCli(['--data', path.join(dir, 'admin'), ...args], env, 180_000);
    // One page outside the shared crawl's scope, crawled into its own collection by the command line.
    const crawled = await admin(['crawl', `${siteUrl}/tutorial-arch.html`, '--collection', 'hr', '--max-pages', '1', '--include', 'tutorial-arch']);
    expect(crawled.code, crawled.stderr).toBe(0);
    const keyOf = async (args: string[]) => {
      const made = await admin(['keys', 'create', ...args, '--credits', '50', '--tier', 'enterprise']);
      expect(made.code, made.stderr).toBe(0);
      return made.stdout.trim().split('\n').at(-1) ?? '';
    };
    const hrKey = await keyOf(['--tenant', 'hr-team', '--collections', 'hr']);
    const docsKey = await keyOf(['--tenant', 'docs-team', '--collections', 'default']);
    const search = async (server: RunningServer, bearer: string, collection?: string) => {
      const res = await fetch(`${server.url}/v1/search`, {
        method: 'POST',
        headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
        body: JSON.stringify({ query: 'client server architecture processes', depth: 1, ...(collection ? { collection } : {}) }),
      });
      return { status: res.status, body: (await res.json()) as { code?: string; results?: Array<{ url: string }> } };
    };
    const arch = `${siteUrl}/tutorial-arch.html`;
    for (const node of [a, b]) {
      const own = await search(node, hrKey, 'hr');
      expect(own.status, JSON.stringify(own.body)).toBe(200);
      expect(own.body.results?.map((r) => r.url)).toEqual([arch]);
      const other = await search(node, docsKey);
      expect(other.status).toBe(200);
      expect(other.body.results?.length).toBeGreaterThan(0);
      expect(other.body.results?.map((r) => r.url)).not.toContain(arch);
      for (const [bearer, collection] of [
        [hrKey, undefined],
        [hrKey, 'default'],
        [docsKey, 'hr'],
      ] as const) {
        const refused = await search(node, bearer, collection);
        expect(refused.status).toBe(403);
        expect(refused.body.code).toBe('collection_forbidden');
      }
    }
    const debits = await query<{ name: string; n: string }>(
      "select t.name, count(*) as n from credit_ledger l join tenants t on t.id = l.tenant_id where t.name in ('hr-team', 'docs-team') and l.delta < 0 group by t.name order by t.name",
    );
    expect(debits.map((d) => [d.name, Number(d.n)])).toEqual([
      ['docs-team', 2],
      ['hr-team', 2],
    ]);
  }, 300_000);
});
