import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_ARGS } from '../core/chromium.js';
import { adminCreate, createKey, LOCAL_DEMO_CONFIG, offlineContext } from '../scripts/dashboard-screenshots.js';
import { runCli, startServer, type RunningServer } from '../testkit/cli.js';
import { fileAvailable } from '../testkit/components.js';
import { html, writeSite } from '../testkit/crawl-site.js';
import { freePort } from '../testkit/postgres.js';
import { serveDirectory, type StaticServer } from '../testkit/serve-static.js';

/**
 * The dashboard as a newcomer meets it, on a 390 px phone and a 1280 px screen: every page fits its viewport (no
 * sideways scrolling), and what a page says agrees with what its controls do (prices and tiers that say where they
 * come from above a Save button, no price asked for a depth no call may ask for, a Quick start that searches for a
 * page of this index, one period on every page, a command-line crawl explained beside the seeds).
 */
const CHROMIUM = process.env['NOTARY_CHROMIUM'] ?? '/usr/bin/chromium';
const OPERATOR = { email: 'ops@notary.test', password: 'operator-password-17' };
const MEMBER = { email: 'grace@harbour.test', password: 'member-password-17', organisation: 'harbour-lights-and-a-rather-long-organisation-name' };
/** The site crawled from the command line: its titles are what the Quick start may search for. */
const TITLES = ['Trimming the lamp wicks', 'Sounding the fog horn', 'Keeping the tower logbook'];
const VIEWPORTS = [
  { width: 390, height: 844 },
  { width: 1280, height: 860 },
];
const MEMBER_PAGES = ['/', '/keys', '/credits', '/usage', '/crawl-jobs', '/plan', '/parties', '/receipts', '/account'];
const OPERATOR_PAGES = ['/', '/operator/crawl', '/operator/collections', '/operator/crawl-jobs', '/operator/index', '/operator/pricing', '/operator/tiers', '/operator/tenants', '/operator/revenue', '/receipts', '/account'];

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core's WCAG 2.1 A/AA violations on the page as it is (ids and targets). */
async function accessibility(page: Page): Promise<string[]> {
  await page.evaluate(axeSource);
  return page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(context: unknown, options: object): Promise<{ violations: Array<{ id: string; nodes: Array<{ target: unknown[] }> }> }> } }).axe;
    const result = await axe.run((globalThis as unknown as { document: unknown }).document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } });
    return result.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  });
}

/** How wide the page is against its viewport, and the widest elements when it is too wide (to say what to fix). */
async function widths(page: Page): Promise<{ scrollWidth: number; innerWidth: number; widest: string[] }> {
  return page.evaluate(() => {
    const doc = (globalThis as unknown as { document: { documentElement: { scrollWidth: number }; querySelectorAll(s: string): ArrayLike<{ getBoundingClientRect(): { right: number }; tagName: string; className: unknown }> } }).document;
    const innerWidth = (globalThis as unknown as { innerWidth: number }).innerWidth;
    const widest = Array.from(doc.querySelectorAll('body *'))
      .map((el) => ({ right: Math.round(el.getBoundingClientRect().right), name: `${el.tagName.toLowerCase()}.${String(el.className)}` }))
      .filter((el) => el.right > innerWidth)
      .sort((a, b) => b.right - a.right)
      .slice(0, 5)
      .map((el) => `${el.name} ${el.right}px`);
    return { scrollWidth: doc.documentElement.scrollWidth, innerWidth, widest };
  });
}

describe.runIf(fileAvailable('Chromium', CHROMIUM))('the dashboard at 390 px and 1280 px', () => {
  let dataDir: string;
  let server: RunningServer;
  let site: StaticServer;
  let browser: Browser;
  const contexts: BrowserContext[] = [];
  let memberKey = '';

  async function signedIn(viewport: { width: number; height: number }, who: { email: string; password: string }): Promise<Page> {
    const context = await offlineContext(browser, () => undefined, viewport);
    contexts.push(context);
    const page = await context.newPage();
    await page.goto(`${server.url}/dashboard/signin`);
    await page.getByLabel('Email').fill(who.email);
    await page.getByLabel('Password').fill(who.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL((url) => url.pathname === '/dashboard/');
    await page.getByTestId('whoami').waitFor({ state: 'attached' });
    return page;
  }

  async function visit(page: Page, route: string): Promise<void> {
    await page.goto(`${server.url}/dashboard${route}`);
    await page.getByRole('heading', { level: 1 }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/dashboard${route}`);
    await page.waitForLoadState('networkidle');
    await page.getByText('Loading…').first().waitFor({ state: 'detached', timeout: 10_000 }).catch(() => undefined);
  }

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'notary-dash-layout-'));
    writeFileSync(path.join(dataDir, 'notary.json'), JSON.stringify(LOCAL_DEMO_CONFIG));
    const words = (title: string) => `<p>${`${title} is part of the keeper's duties, every evening and every morning. `.repeat(30)}</p>`;
    site = await serveDirectory(
      writeSite({
        'index.html': html('Keeper', `<p>Start here.</p><a href="lamps.html">Lamps</a> <a href="fog.html">Fog</a> <a href="logbook.html">Logbook</a>`),
        'lamps.html': html(TITLES[0] ?? '', words('Trimming the lamp wicks')),
        'fog.html': html(TITLES[1] ?? '', words('Sounding the fog horn')),
        'logbook.html': html(TITLES[2] ?? '', words('Keeping the tower logbook')),
      }),
    );
    // A crawl from the command line, before any seed exists: it shows under Crawl status, and is no seed.
    const crawled = await runCli(['crawl', '--data', dataDir, `${site.url}/index.html`], { NOTARY_MODEL_DOWNLOAD: 'false', NOTARY_EMBEDDING_MODEL: 'off' });
    expect(crawled.code, crawled.stderr).toBe(0);
    await adminCreate(dataDir, OPERATOR.email, OPERATOR.password);
    server = await startServer(['--data', dataDir], await freePort(), { NOTARY_LOG_LEVEL: 'warn' });
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: [...CHROMIUM_ARGS] });
    // A member with a key (a row in the keys table, with a long name).
    const context = await offlineContext(browser, () => undefined);
    contexts.push(context);
    const page = await context.newPage();
    await page.goto(`${server.url}/dashboard/signup`);
    await page.getByLabel('Email').fill(MEMBER.email);
    await page.getByLabel('Organisation').fill(MEMBER.organisation);
    await page.getByLabel('Password').fill(MEMBER.password);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('heading', { level: 1, name: MEMBER.organisation }).waitFor();
    memberKey = await createKey(page, 'nightly-harbour-lights-indexer-production');
    await page.getByRole('button', { name: 'I have stored it' }).click();
  });

  afterAll(async () => {
    for (const context of contexts) await context.close().catch(() => undefined);
    await browser?.close();
    await server?.stop();
    await site?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  for (const viewport of VIEWPORTS) {
    it(`no member page is wider than ${viewport.width} px`, async () => {
      const page = await signedIn(viewport, MEMBER);
      const tooWide: unknown[] = [];
      for (const route of MEMBER_PAGES) {
        await visit(page, route);
        const w = await widths(page);
        if (w.scrollWidth > w.innerWidth) tooWide.push({ route, ...w });
      }
      expect(tooWide).toEqual([]);
    });

    it(`no operator page is wider than ${viewport.width} px`, async () => {
      const page = await signedIn(viewport, OPERATOR);
      const tooWide: unknown[] = [];
      for (const route of OPERATOR_PAGES) {
        await visit(page, route);
        const w = await widths(page);
        if (w.scrollWidth > w.innerWidth) tooWide.push({ route, ...w });
      }
      expect(tooWide).toEqual([]);
    });
  }

  it('Prices and Tiers say an operator edit overrides the configuration file, above the Save button that makes one', async () => {
    const page = await signedIn({ width: 1280, height: 860 }, OPERATOR);
    for (const [route, button] of [
      ['/operator/pricing', 'Save prices'],
      ['/operator/tiers', 'Save tiers'],
    ] as const) {
      await visit(page, route);
      const origin = (await page.getByTestId('origin').textContent()) ?? '';
      expect(await page.getByRole('button', { name: button }).isEnabled()).toBe(true);
      expect(origin).not.toMatch(/no operator edit/i);
      expect(origin).toMatch(/configuration file/);
      expect(origin).toMatch(/Saving here .* overrides the file/);
    }
  });

  it('Prices asks for the depths a call may ask for (1 to search.max_depth), none above', async () => {
    const page = await signedIn({ width: 1280, height: 860 }, OPERATOR);
    await visit(page, '/operator/pricing');
    // search.max_depth is 2 by default; credits_by_depth has 3 entries by default.
    expect(await page.getByLabel(/^Depth \d+/).count()).toBe(2);
    expect(await page.getByText('above max_depth').count()).toBe(0);
    expect(await accessibility(page)).toEqual([]);
    await page.getByLabel('Depth 2').fill('5');
    await page.getByRole('button', { name: 'Save prices' }).click();
    await page.getByText('Saved: the next call is priced with it.').waitFor();
    await expect.poll(() => page.getByTestId('price-table').textContent()).toContain('search depth 25');
  });

  it("the Quick start searches for the title of a page in this server's index, and finds it", async () => {
    const page = await signedIn({ width: 1280, height: 860 }, MEMBER);
    await visit(page, '/');
    const example = page.getByLabel('Example request');
    await expect.poll(() => example.textContent()).toMatch(/"query":"/);
    const text = (await example.textContent()) ?? '';
    expect(text).not.toContain('vacuum dead tuples');
    const query = /"query":"([^"]+)"/.exec(text)?.[1] ?? '';
    expect(TITLES).toContain(query);
    // Copied as it is shown, the call finds that page.
    const res = await fetch(`${server.url}/v1/search`, {
      method: 'POST',
      headers: { authorization: `Bearer ${memberKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query, depth: 1 }),
    });
    expect(res.status).toBe(200);
    const found = (await res.json()) as { results: Array<{ title?: string }> };
    expect(found.results[0]?.title).toBe(query);
    // The titles are for signed-in accounts only.
    const anonymous = await fetch(`${server.url}/dashboard/api/v1/example-query`);
    expect(anonymous.status).toBe(401);
  });

  it('counts one period on every page: 30 days until the person picks another, then that one everywhere', async () => {
    const page = await signedIn({ width: 1280, height: 860 }, MEMBER);
    await visit(page, '/');
    const calls = page.locator('.stat-label', { hasText: 'Calls' });
    await expect.poll(() => calls.textContent()).toContain('last 30 days');
    await visit(page, '/usage');
    expect(await page.getByLabel('Period').inputValue()).toBe('30');
    await page.getByLabel('Period').selectOption('7');
    await visit(page, '/');
    await expect.poll(() => calls.textContent()).toContain('last 7 days');
    const operator = await signedIn({ width: 1280, height: 860 }, OPERATOR);
    await visit(operator, '/operator/revenue');
    expect(await operator.getByLabel('Period').inputValue()).toBe('30');
  });

  it('a crawl run from the command line is shown beside the seeds as crawled once, not a seed, and can be made one', async () => {
    const page = await signedIn({ width: 1280, height: 860 }, OPERATOR);
    await visit(page, '/operator/crawl');
    const url = `${site.url}/index.html`;
    await expect.poll(() => page.getByTestId('runs-table').textContent()).toContain(url);
    const note = page.getByTestId('one-off-crawls');
    await note.waitFor();
    expect(await note.textContent()).toContain(url);
    expect(await note.textContent()).toContain('notary crawl');
    expect(await accessibility(page)).toEqual([]);
    await note.getByRole('button', { name: `Add as seed ${url}` }).click();
    await page.getByTestId('seeds-table').getByRole('rowheader', { name: url }).waitFor();
    await expect.poll(() => page.getByTestId('one-off-crawls').count()).toBe(0);
  });
});
