import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { configSchema, deepMerge } from '../core/config.js';
import { repoRoot } from '../testkit/cli.js';
import { startApi, type ApiHarness } from '../testkit/app.js';
import type { StaticServer } from '../testkit/serve-static.js';
import { startCrawlJobSite, until } from './support/crawl-job-site.js';

/**
 * A crawl job whose worker is killed (SIGKILL, a real `notary crawl-worker` process) halfway: another worker takes the
 * job over at once (the dead owner's lease does not hold), resumes its crawl run from the frontier, completes it, and
 * the tenant is charged once, for the pages stored, by one settlement of the one hold.
 */

const PAGES = 30;
const PRICE = 2;
const CREDITS = 1000;
const settings = {
  reranker: { download: false },
  embeddings: { model: 'off' },
  extract: { allow_private_networks: true },
  // 150 ms between requests to the one host: the crawl takes about 5 s, time enough to kill it halfway.
  crawler: { respect_robots_txt: false, use_sitemaps: false, per_host_delay_ms: 150, per_host_concurrency: 1 },
  pricing: { crawl: { credits_per_page: PRICE } },
  // Polled every 100 ms.
  tiers: { free: { requests_per_minute: 60_000, burst: 1000 } },
  log_level: 'warn',
};

function crawlWorker(dataDir: string): { child: ChildProcess; output: () => string } {
  const child = spawn(process.execPath, [path.join(repoRoot, 'bin/notary.js'), '--data', dataDir, 'crawl-worker'], {
    cwd: repoRoot,
    env: { ...process.env, NOTARY_MODEL_DOWNLOAD: 'false', NOTARY_EMBEDDING_MODEL: 'off' },
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  return { child, output: () => output };
}

function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((resolve) => child.once('exit', () => resolve()));
}

interface Job {
  id: string;
  status: string;
  progress: { stored: number };
  credits_used: number | null;
}

describe('a crawl job whose worker is killed mid-run', () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'notary-crawl-job-kill-'));
  let site: StaticServer | undefined;
  let api: ApiHarness | undefined;
  const children: ChildProcess[] = [];

  afterAll(async () => {
    for (const child of children) {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        await exited(child);
      }
    }
    await api?.close();
    await site?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('resumes in another worker and is charged once, for the pages stored', async () => {
    writeFileSync(path.join(dataDir, 'notary.json'), JSON.stringify(settings));
    site = await startCrawlJobSite(PAGES);
    api = await startApi(configSchema.parse(deepMerge({ data_dir: dataDir } as Record<string, unknown>, settings as Record<string, unknown>)));
    const tenant = await api.runtime.accounts.createTenant('killed', { credits: CREDITS });
    const { key } = await api.runtime.accounts.createKey(tenant.id);
    const auth = { authorization: `Bearer ${key}` };
    const posted = await api.app.inject({ method: 'POST', url: '/v1/crawl', headers: auth, payload: { url: `${site.url}/docs/index.html`, max_pages: 50 } });
    expect(posted.statusCode, posted.body).toBe(202);
    const { id } = posted.json() as Job;
    const job = async () => (await api?.app.inject({ method: 'GET', url: `/v1/crawl/${id}`, headers: auth }))?.json() as Job;

    const first = crawlWorker(dataDir);
    children.push(first.child);
    const halfway = await until('the first worker to store some pages', async () => {
      const now = await job();
      return now.progress.stored >= 4 ? now : undefined;
    }, 60_000).catch((err: unknown) => {
      throw new Error(`${(err as Error).message}\n${first.output()}`);
    });
    first.child.kill('SIGKILL');
    await exited(first.child);
    expect(halfway.status).toBe('running');
    const before = (await job()).progress.stored;
    expect(before).toBeLessThan(PAGES);

    const second = crawlWorker(dataDir);
    children.push(second.child);
    const done = await until('the job to complete in the second worker', async () => {
      const now = await job();
      return now.status === 'completed' ? now : undefined;
    }, 90_000).catch((err: unknown) => {
      throw new Error(`${(err as Error).message}\n${second.output()}`);
    });
    expect(done.progress.stored).toBe(PAGES);
    expect(done.credits_used).toBe(PAGES * PRICE);
    expect(await api.runtime.accounts.balance(tenant.id)).toBe(CREDITS - PAGES * PRICE);
    const ledger = await api.runtime.accounts.ledger(tenant.id);
    // The opening grant, the one hold of the quote, the one settlement giving back the unused part.
    expect(ledger.map((e) => [e.idempotency_key, e.delta])).toEqual([
      [null, CREDITS],
      [`hold ${id}`, -50 * PRICE],
      [`settle ${id}`, (50 - PAGES) * PRICE],
    ]);
    // The second worker resumed the run: it did not fetch the pages the first one had stored again (a page in flight when
    // it died may be).
    const fetched = site.requests.filter((p) => p.startsWith('/docs/'));
    expect(fetched.length).toBeLessThanOrEqual(PAGES + 2);
    expect(second.output()).not.toMatch(/error/i);
  }, 180_000);
});
