import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_ARGS } from '../core/chromium.js';
import { adminCreate, createKey, LOCAL_DEMO_CONFIG, navLink, offlineContext } from '../scripts/dashboard-screenshots.js';
import { repoRoot, fileAvailable } from '../testkit/components.js';
import { html, writeSite } from '../testkit/crawl-site.js';
import { startServer, type RunningServer } from '../testkit/cli.js';
import { freePort } from '../testkit/postgres.js';
import { serveDirectory, type StaticServer } from '../testkit/serve-static.js';

const CHROMIUM = process.env['NOTARY_CHROMIUM'] ?? '/usr/bin/chromium';
/** Where the suite's screenshots go (to look at after a failure); the README's come from scripts/dashboard-screenshots.ts. */
const SHOTS = process.env['NOTARY_SCREENSHOTS'] ? path.resolve(repoRoot, process.env['NOTARY_SCREENSHOTS']) : mkdtempSync(path.join(tmpdir(), 'notary-shots-'));
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

const OPERATOR = { email: 'ops@notary.test', password: 'operator-password-17' };
const MEMBER = { email: 'ada@acme.test', password: 'member-password-17', organisation: 'acme' };

interface Found {
  id: string;
  impact: string | null;
  /** CSS selectors of the offending elements. */
  targets: string[];
}

/** axe-core's WCAG 2.1 A/AA rules on the page as it is; returns the violations. */
async function accessibility(page: Page): Promise<Found[]> {
  await page.evaluate(axeSource);
  return page.evaluate(async () => {
    const page = globalThis as unknown as {
      document: unknown;
      axe: { run(context: unknown, options: object): Promise<{ violations: Array<{ id: string; impact: string | null; nodes: Array<{ target: unknown[] }> }> }> };
    };
    const result = await page.axe.run(page.document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, targets: v.nodes.map((n) => n.target.join(' ')) }));
  });
}

describe.runIf(fileAvailable('Chromium', CHROMIUM))('the dashboard in Chromium (sign-up to revocation, operators steering prices and crawls)', () => {
  let dataDir: string;
  let server: RunningServer;
  let site: StaticServer;
  let browser: Browser;
  const outside: string[] = [];
  const cspErrors: string[] = [];

  async function context(viewport = { width: 1280, height: 860 }): Promise<BrowserContext> {
    const ctx = await offlineContext(browser, (url) => outside.push(url), viewport);
    ctx.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) cspErrors.push(message.text());
    });
    return ctx;
  }

  const nav = navLink;

  async function shot(page: Page, name: string): Promise<void> {
    await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
  }

  async function search(key: string, depth = 1): Promise<{ status: number; body: Record<string, unknown> }> {
    const res = await fetch(`${server.url}/v1/search`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'vacuum dead tuples', depth }),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  }

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    dataDir = mkdtempSync(path.join(tmpdir(), 'notary-dash-e2e-'));
    writeFileSync(path.join(dataDir, 'notary.json'), JSON.stringify(LOCAL_DEMO_CONFIG));
    const pages: Record<string, string> = {
      'index.html': html('Handbook', '<p>Start here.</p><a href="vacuum.html">Vacuum</a> <a href="analyze.html">Analyze</a> <a href="indexes.html">Indexes</a>'),
      'vacuum.html': html('VACUUM', `<p>${'VACUUM reclaims storage occupied by dead tuples. '.repeat(40)}</p><a href="index.html">Home</a>`),
      'analyze.html': html('ANALYZE', `<p>${'ANALYZE collects statistics about the contents of tables. '.repeat(40)}</p>`),
      'indexes.html': html('Indexes', `<p>${'Indexes are a common way to enhance database performance. '.repeat(40)}</p>`),
    };
    site = await serveDirectory(writeSite(pages));
    await adminCreate(dataDir, OPERATOR.email, OPERATOR.password);
    server = await startServer(['--data', dataDir], await freePort(), { NOTARY_LOG_LEVEL: 'warn' });
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: [...CHROMIUM_ARGS] });
  });

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await site?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  let member: Page;
  let operator: Page;
  let liveKey = '';

  it('signs up: a new organisation with its opening credits, and the overview passes axe', async () => {
    member = await (await context()).newPage();
    await member.goto(`${server.url}/dashboard/`);
    await member.waitForURL(/\/dashboard\/signin$/);
    await member.getByRole('link', { name: 'Create one' }).click();
    await member.getByLabel('Email').fill(MEMBER.email);
    await member.getByLabel('Organisation').fill(MEMBER.organisation);
    await member.getByLabel('Password').fill(MEMBER.password);
    await member.getByRole('button', { name: 'Create account' }).click();
    await member.getByRole('heading', { name: 'acme', level: 1 }).waitFor();
    await expect.poll(() => member.getByTestId('balance').textContent()).toContain('100 credits');
    await shot(member, 'overview');
    expect(await accessibility(member)).toEqual([]);
  });

  it('creates a key whose plaintext is shown once, never again, and searches with it', async () => {
    liveKey = await createKey(member, 'ci');
    expect(liveKey).toMatch(/^sk_live_[0-9A-Za-z]{38}$/);
    await shot(member, 'keys-created');
    expect(await accessibility(member)).toEqual([]);
    await member.getByRole('button', { name: 'I have stored it' }).click();
    expect(await member.content()).not.toContain(liveKey);
    await member.reload();
    await member.getByTestId('keys-table').waitFor();
    const page = await member.content();
    expect(page).not.toContain(liveKey);
    expect(page).toContain(`${liveKey.slice(0, 12)}…${liveKey.slice(-4)}`);
    // Nor does any endpoint give it back.
    const listed = await member.evaluate(async () => (await fetch('/dashboard/api/v1/keys')).text());
    expect(listed).not.toContain(liveKey.slice(12, -4));
    await shot(member, 'keys');

    const first = await search(liveKey);
    expect(first.status).toBe(200);
    expect(first.body['credits_used']).toBe(1);
    expect(first.body['test']).toBeUndefined();
  });

  it('the usage chart moves as calls come in', async () => {
    await nav(member, 'Usage').click();
    await expect.poll(() => member.getByTestId('usage-calls').textContent()).toContain('1');
    expect(await member.getByTestId('calls-chart').getAttribute('data-total')).toBe('1');
    for (let i = 0; i < 2; i++) expect((await search(liveKey)).status).toBe(200);
    // The page refreshes itself every 5 s: no reload.
    await expect.poll(() => member.getByTestId('calls-chart').getAttribute('data-total'), { timeout: 15_000 }).toBe('3');
    expect(await member.getByTestId('credits-chart').getAttribute('data-total')).toBe('3');
    await shot(member, 'usage');
    expect(await accessibility(member)).toEqual([]);
  });

  it('a test key calls the same API, is never charged, and its response says so', async () => {
    const testKey = await createKey(member, 'sandbox', 'test');
    expect(testKey).toMatch(/^sk_test_/);
    await member.getByRole('button', { name: 'I have stored it' }).click();
    const answer = await search(testKey);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ test: true, credits_used: 0 });
    await nav(member, 'Credits').click();
    await expect.poll(() => member.getByTestId('balance').textContent()).toContain('97 credits');
    await member.getByTestId('ledger-table').waitFor();
    await shot(member, 'credits');
    expect(await accessibility(member)).toEqual([]);
  });

  it('revoking the key in the dashboard makes the next call a 401', async () => {
    await nav(member, 'API keys').click();
    await member.getByRole('button', { name: 'Revoke ci' }).click();
    await member.getByRole('button', { name: 'Yes, revoke' }).click();
    await member.getByText('Revoked ci.').waitFor();
    const after = await search(liveKey);
    expect(after.status).toBe(401);
    expect(after.body['code']).toBe('revoked_api_key');
  });

  it('a member cannot reach the operator pages, in the page or through the API', async () => {
    await member.goto(`${server.url}/dashboard/operator/pricing`);
    await member.getByTestId('forbidden').waitFor();
    const status = await member.evaluate(async () => (await fetch('/dashboard/api/v1/operator/pricing')).status);
    expect(status).toBe(403);
    expect(await member.getByRole('link', { name: 'Prices' }).count()).toBe(0);
    expect(await nav(member, 'API keys').count()).toBe(1);
  });

  it('an operator signs in with the keyboard alone and changes the depth price; the next search costs the new price', async () => {
    operator = await (await context()).newPage();
    await operator.goto(`${server.url}/dashboard/signin`);
    await operator.getByLabel('Email').focus();
    await operator.keyboard.type(OPERATOR.email);
    await operator.keyboard.press('Tab');
    await operator.keyboard.type(OPERATOR.password);
    await operator.keyboard.press('Enter');
    await operator.getByRole('heading', { name: 'Operator', level: 1 }).waitFor();
    // Why the service is (not) healthy: the detail /healthz keeps to itself, for operators.
    await operator.getByTestId('service-health').waitFor();
    expect(await operator.getByTestId('service-health').textContent()).toContain('ok');
    expect(await accessibility(operator)).toEqual([]);
    await shot(operator, 'operator-overview');

    await nav(operator, 'Prices').click();
    // The cross-encoder's credits are an operator's setting too; this service has none loaded, and the field says so.
    await expect.poll(() => operator.getByLabel('Cross-encoder, added').inputValue()).toBe('40');
    expect(await operator.getByText('none: not loaded').count()).toBe(1);
    await operator.getByLabel('Depth 1').fill('3');
    await operator.getByRole('button', { name: 'Save prices' }).click();
    await operator.getByText('Saved: the next call is priced with it.').waitFor();
    await expect.poll(() => operator.getByTestId('price-table').textContent()).toContain('search depth 13');
    await shot(operator, 'operator-prices');
    expect(await accessibility(operator)).toEqual([]);

    await member.goto(`${server.url}/dashboard/keys`);
    const key = await createKey(member, 'after the price change');
    const priced = await search(key, 1);
    expect(priced.status).toBe(200);
    expect(priced.body['credits_used']).toBe(3);
  });

  it('an operator adds a crawl seed and watches the crawl status move to pages in the index', async () => {
    await nav(operator, 'Crawling').click();
    await operator.getByLabel('Start URL').fill(`${site.url}/index.html`);
    await operator.getByRole('button', { name: 'Add seed' }).click();
    await operator.getByTestId('seeds-table').getByRole('rowheader', { name: `${site.url}/index.html` }).waitFor();
    // The worker polls every second; the status table refreshes itself every 2 s.
    const row = operator.getByTestId('runs-table').locator('tbody tr').first();
    await expect.poll(async () => Number(await row.getAttribute('data-fetched')), { timeout: 60_000 }).toBeGreaterThanOrEqual(4);
    await expect.poll(() => row.getAttribute('data-run-state'), { timeout: 60_000 }).toBe('finished');
    await shot(operator, 'operator-crawl');
    expect(await accessibility(operator)).toEqual([]);
    await nav(operator, 'Index').click();
    await expect.poll(async () => (await operator.getByTestId('index-pages').textContent()) ?? '', { timeout: 30_000 }).toMatch(/Pages\s*4/);
    // And what was crawled is searchable with the member's key.
    const key = await createKey(member, 'searcher');
    const found = await search(key);
    expect((found.body['results'] as Array<{ url: string }>).map((r) => r.url)).toContain(`${site.url}/vacuum.html`);
  });

  it('the remaining operator pages render and pass axe: tiers, tenants, revenue', async () => {
    for (const [link, name] of [
      ['Tiers', 'operator-tiers'],
      ['Tenants', 'operator-tenants'],
      ['Revenue', 'operator-revenue'],
    ] as const) {
      await nav(operator, link).click();
      await operator.getByRole('heading', { name: link, level: 1 }).waitFor();
      await operator.waitForLoadState('networkidle');
      await shot(operator, name);
      expect({ page: link, violations: await accessibility(operator) }).toEqual({ page: link, violations: [] });
    }
    expect(await operator.getByTestId('revenue-table').textContent()).toMatch(/api key\s*5\s*9/);
  });

  it('the member pages left (tier, party keys, receipts, account) render and pass axe; on a phone the menu opens', async () => {
    for (const [link, name] of [
      ['Tier and limits', 'plan'],
      ['Party keys', 'parties'],
      ['Signed receipts', 'receipts'],
      ['Account', 'account'],
    ] as const) {
      await nav(member, link).click();
      await member.waitForLoadState('networkidle');
      expect({ page: link, violations: await accessibility(member) }).toEqual({ page: link, violations: [] });
      if (name === 'plan') await shot(member, name);
    }
    const phone = await (await context({ width: 390, height: 844 })).newPage();
    await phone.goto(`${server.url}/dashboard/signin`);
    await phone.getByLabel('Email').fill(MEMBER.email);
    await phone.getByLabel('Password').fill(MEMBER.password);
    await phone.getByRole('button', { name: 'Sign in' }).click();
    await phone.getByRole('heading', { name: 'acme', level: 1 }).waitFor();
    expect(await nav(phone, 'Usage').isVisible()).toBe(false);
    await phone.getByRole('button', { name: 'Menu' }).click();
    expect(await nav(phone, 'Usage').isVisible()).toBe(true);
    await shot(phone, 'phone-menu');
    expect(await accessibility(phone)).toEqual([]);
  });

  it('nothing outside the server was requested and nothing broke the content security policy', () => {
    expect(outside).toEqual([]);
    expect(cspErrors).toEqual([]);
  });
});
