import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, startServer, type RunningServer } from '../testkit/cli.js';
import { available } from '../testkit/components.js';
import { createDatabase, freePort, startPostgres, type TestPostgres } from '../testkit/postgres.js';

/**
 * `kill -9` between the charge and the answer, with a real `notary serve` on PostgreSQL: the call is debited, the
 * process dies before it stores the answer for replays or writes it, and the caller gets nothing. The documented
 * recovery (docs/payments.md, Idempotency-Key): after the restart a retry with the same key is "in progress" until
 * `payments.idempotency.in_progress_timeout_s`, then is taken over, runs again and answers, and the ledger's unique
 * key per tenant keeps it from being debited a second time.
 * The process is held between the two steps without a hook: the test locks the call's idempotency row (SELECT … FOR
 * UPDATE) while the work runs, so storing the answer waits on the lock after the debit has committed.
 */

const postgresHere = Boolean(process.env['NOTARY_TEST_DATABASE_URL']) || existsSync('/usr/lib/postgresql');
const KEY = 'kill-mid-call-1';
const CREDITS = 100;

describe.runIf(available('PostgreSQL (Debian) or NOTARY_TEST_DATABASE_URL', postgresHere))('a process killed between the charge and the answer', () => {
  let postgres: TestPostgres;
  let databaseUrl: string;
  let dataDir: string;
  let site: Server;
  let siteUrl: string;
  let apiKey: string;
  let env: Record<string, string>;
  let server: RunningServer | undefined;

  beforeAll(async () => {
    postgres = await startPostgres();
    databaseUrl = await createDatabase(postgres.url, `kill_mid_call_${process.pid}`);
    // A page that takes a second: long enough to take the lock while the work runs.
    site = createServer((_req, res) => {
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end(`<!doctype html><html><head><title>Slow page</title></head><body><article><h1>Slow page</h1><p>${'A page worth paying for, served slowly. '.repeat(8)}</p></article></body></html>`);
      }, 1_000);
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}/slow`;
    dataDir = mkdtempSync(path.join(tmpdir(), 'notary-kill-mid-call-'));
    writeFileSync(
      path.join(dataDir, 'notary.json'),
      JSON.stringify({
        reranker: { download: false },
        embeddings: { model: 'off' },
        extract: { allow_private_networks: true, respect_robots_txt: false, render: 'never' },
        payments: { idempotency: { in_progress_timeout_s: 2 } },
      }),
    );
    env = { NOTARY_STORAGE: 'postgres', NOTARY_DATABASE_URL: databaseUrl, NOTARY_MODEL_DOWNLOAD: 'false', NOTARY_EMBEDDING_MODEL: 'off', NOTARY_LOG_LEVEL: 'warn' };
    const created = await runCli(['--data', dataDir, 'keys', 'create', '--tenant', 'killed', '--credits', String(CREDITS)], env, 120_000);
    if (created.code !== 0) throw new Error(`notary keys create failed:\n${created.stderr}`);
    apiKey = created.stdout.trim().split('\n').at(-1) ?? '';
  }, 180_000);

  afterAll(async () => {
    await server?.stop();
    await new Promise<void>((resolve) => (site ? site.close(() => resolve()) : resolve()));
    postgres?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  const extract = (url: string) =>
    fetch(`${url}/v1/extract`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}`, 'idempotency-key': KEY },
      body: JSON.stringify({ url: siteUrl, mode: 'text' }),
    });

  async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await probe();
      if (value !== undefined) return value;
      if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  it('the caller got nothing; after the restart the retry is answered once the dead lease runs out, debited once', async () => {
    server = await startServer(['--data', dataDir, '--no-crawl'], await freePort(), env);
    const db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    const balance = async () => Number((await db.query<{ credits: string }>(`select credits from tenants where name = 'killed'`)).rows[0]?.credits);
    const ledgerRows = async () => Number((await db.query<{ n: string }>('select count(*) as n from credit_ledger where idempotency_key = $1', [KEY])).rows[0]?.n);
    const locker = new pg.Client({ connectionString: databaseUrl });
    await locker.connect();
    try {
      const call = extract(server.url).then(
        async (res) => `answered ${res.status}: ${await res.text()}`,
        (err: unknown) => `no answer (${err instanceof Error ? String(err.cause ?? err.message) : String(err)})`,
      );
      // The call's idempotency row exists while its work runs: lock it, so storing the answer waits.
      await waitFor('the call began', async () => ((await db.query('select 1 from idempotency_keys where key = $1', [KEY])).rowCount ? true : undefined));
      await locker.query('begin');
      await locker.query('select * from idempotency_keys where key = $1 for update', [KEY]);
      // The debit commits; the answer is not stored yet (the lock), so not written either: kill -9 now.
      await waitFor('the debit', async () => ((await balance()) < CREDITS ? true : undefined));
      const charged = CREDITS - (await balance());
      expect(charged).toBeGreaterThan(0);
      server.child.kill('SIGKILL');
      await new Promise((resolve) => (server?.child.exitCode !== null ? resolve(null) : server.child.once('exit', resolve)));
      await locker.query('rollback');
      expect(await call).toMatch(/^no answer/);
      expect(await ledgerRows()).toBe(1);

      // Restarted: while the dead call's lease lasts, a retry is told to wait (not run, not charged).
      server = await startServer(['--data', dataDir, '--no-crawl'], await freePort(), env);
      const early = await extract(server.url);
      const earlyBody = (await early.json()) as { code?: string };
      if (early.status === 409) {
        expect(earlyBody.code).toBe('idempotency_in_progress');
        expect(early.headers.get('retry-after')).toBe('1');
      } else {
        // The restart took longer than the lease: the retry was already taken over.
        expect(early.status, JSON.stringify(earlyBody)).toBe(200);
      }
      // Then it is taken over: the work runs again and the caller gets the answer, with no second debit.
      const answered = await waitFor('the retry answered', async () => {
        const res = await extract(server!.url);
        if (res.status === 409) return undefined;
        return { status: res.status, replayed: res.headers.get('idempotency-replayed'), body: (await res.json()) as Record<string, unknown> };
      });
      expect(answered.status).toBe(200);
      expect(JSON.stringify(answered.body)).toMatch(/A page worth paying for/);
      expect(CREDITS - (await balance())).toBe(charged);
      expect(await ledgerRows()).toBe(1);
      // And from now on it is replayed byte for byte.
      const replay = await extract(server.url);
      expect(replay.status).toBe(200);
      expect(replay.headers.get('idempotency-replayed')).toBe('true');
      expect(CREDITS - (await balance())).toBe(charged);
    } finally {
      await locker.end().catch(() => {});
      await db.end();
    }
  }, 120_000);
});
