import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { seedWorker } from '../cli/crawl-worker.js';
import { Runtime, silentLog } from '../runtime/index.js';
import type { CrawlRun } from '../storage/crawl-runs.js';
import { DEFAULT_SEED_OPTIONS } from '../storage/crawl-seeds.js';
import { apiTestConfig } from '../testkit/app.js';
import { html, writeSite } from '../testkit/crawl-site.js';
import { serveDirectory } from '../testkit/serve-static.js';
import { until } from '../testkit/until.js';

function storedOf(run: CrawlRun): number {
  return run.stats ? Number((JSON.parse(run.stats) as { stored?: number }).stored ?? 0) : 0;
}

describe('the serve-time seed worker', () => {
  it('pausing a seed stops its crawl; resumed, the crawl goes on from its frontier instead of starting over', async () => {
    const PAGES = 40;
    const files: Record<string, string> = {
      'index.html': html('Index', Array.from({ length: PAGES }, (_, i) => `<a href="p${i}.html">page ${i}</a>`).join(' ')),
    };
    for (let i = 0; i < PAGES; i++) files[`p${i}.html`] = html(`Page ${i}`, `<p>${`Page ${i} of the manual about topic ${i * 7}. `.repeat(20)}</p>`);
    const site = await serveDirectory(writeSite(files));
    const dataDir = mkdtempSync(path.join(tmpdir(), 'notary-seed-worker-'));
    // 250 ms between requests to the one host: the crawl takes about 10 s, time enough to pause it halfway.
    const config = apiTestConfig(dataDir, { crawler: { per_host_delay_ms: 250, respect_robots_txt: false, use_sitemaps: false }, dashboard: { seed_poll_s: 1 } });
    const ctx = await Runtime.open(config, { env: {}, log: silentLog });
    const stop = new AbortController();
    const logs: string[] = [];
    let worker: Promise<void> = Promise.resolve();
    try {
      const seed = await ctx.seeds.add({ url: `${site.url}/index.html`, source: 'operator', options: DEFAULT_SEED_OPTIONS, recrawlMinutes: 60 });
      if (!seed) throw new Error('the seed was not added');
      worker = seedWorker(ctx, undefined, stop.signal, (line) => logs.push(line));

      const first = await until(async () => (await ctx.runs.recent(1)).find((run) => storedOf(run) >= 3), 'the first run to store pages');
      await ctx.seeds.update(seed.id, { paused: true });
      const stopped = await until(async () => (await ctx.runs.recent(5)).find((run) => run.id === first.id && run.status === 'stopped'), 'the paused crawl to stop');
      expect(storedOf(stopped)).toBeLessThan(PAGES + 1);
      // Paused, the seed is not crawled again.
      await new Promise((resolve) => setTimeout(resolve, 2500));
      expect((await ctx.runs.recent(5)).map((run) => run.id)).toEqual([first.id]);
      const fetchedWhileFirst = site.requests.length;

      await ctx.seeds.update(seed.id, { paused: false });
      const second = await until(
        async () => (await ctx.runs.recent(5)).find((run) => run.resumed_from === first.id && run.status === 'finished'),
        'the resumed crawl to finish',
      );
      expect(storedOf(second)).toBe(PAGES + 1);
      expect(logs.some((line) => line.includes(`resuming crawl ${first.id}`))).toBe(true);
      // Not started over: the index page and the pages the first run stored were not fetched again (a page in flight
      // when the crawl stopped may be).
      expect(site.requests.filter((p) => p.startsWith('/index.html'))).toHaveLength(1);
      const refetched = site.requests.length - PAGES - 1;
      expect(refetched).toBeLessThanOrEqual(config.crawler.per_host_concurrency);
      expect(site.requests.length).toBeGreaterThan(fetchedWhileFirst);
      await until(async () => (await ctx.seeds.get(seed.id))?.last_crawled_at ?? undefined, 'the seed to be marked crawled');
      expect((await ctx.pages.counts()).pages).toBe(PAGES + 1);
    } finally {
      stop.abort();
      await worker;
      await ctx.close();
      await site.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
