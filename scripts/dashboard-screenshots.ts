// Takes the dashboard screenshots docs/dashboard.md shows (docs/screenshots/*.png) from a real `notary serve` in Debian's
// Chromium through playwright-core: a member signs up, makes keys and calls, registers an MPP party key; an operator
// crawls a small site served on 127.0.0.1 and looks at prices, tiers, tenants and revenue. Nothing leaves 127.0.0.1.
//
//   npx tsx scripts/dashboard-screenshots.ts [--out docs/screenshots] [--chromium /usr/bin/chromium]
import { spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { CHROMIUM_ARGS } from '../core/chromium.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = path.join(root, 'bin/notary.js');

/** `notary admin create`: an operator account, the password given on standard input as docs/dashboard.md says. */
export function adminCreate(dataDir: string, email: string, password: string): Promise<string> {
  return notaryCommand(dataDir, ['admin', 'create', '--email', email], `${password}\n`);
}

/** A `notary` command on the data folder (beside a running server); its output, or an error with it. */
function notaryCommand(dataDir: string, args: readonly string[], stdin = ''): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, '--data', dataDir, ...args], { cwd: root });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`notary ${args.join(' ')} exited ${code}: ${out}`))));
    child.stdin.end(stdin);
  });
}

/**
 * A browser context that may reach 127.0.0.1 only: any other request is refused and passed to `refused` (the
 * dashboard works offline: no CDN, no fonts, no analytics).
 */
export async function offlineContext(browser: Browser, refused: (url: string) => void, viewport = { width: 1280, height: 860 }): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport, locale: 'en-GB', timezoneId: 'UTC', colorScheme: 'light' });
  await context.route('**/*', async (route) => {
    const url = new URL(route.request().url());
    if (url.hostname === '127.0.0.1' || url.protocol === 'data:') return route.continue();
    refused(url.href);
    return route.abort();
  });
  return context;
}

/**
 * The config file of a short-lived local server: no model download (lexical scoring), no embeddings, a crawler
 * without politeness delays for a site on 127.0.0.1, and a crawl worker that looks for new seeds every second.
 */
export const LOCAL_DEMO_CONFIG = {
  reranker: { download: false },
  embeddings: { model: 'off' },
  crawler: { per_host_delay_ms: 0, respect_robots_txt: false, use_sitemaps: false },
  dashboard: { seed_poll_s: 1 },
};

/** A link of the dashboard's navigation. */
export function navLink(page: Page, name: string) {
  return page.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name, exact: true });
}

const DEMO_PAGES: Record<string, { title: string; text: string; links: string[] }> = {
  '/': { title: 'Field manual', text: 'How the archive is kept: storage, statistics, indexes and backups.', links: ['/vacuum', '/analyze', '/indexes', '/backups', '/replication'] },
  '/vacuum': { title: 'VACUUM', text: 'VACUUM reclaims storage occupied by dead tuples left behind by updates and deletes.', links: ['/', '/analyze'] },
  '/analyze': { title: 'ANALYZE', text: 'ANALYZE collects statistics about the contents of tables so the planner can choose good plans.', links: ['/'] },
  '/indexes': { title: 'Indexes', text: 'Indexes are a common way to enhance database performance; each one costs writes and storage.', links: ['/'] },
  '/backups': { title: 'Backups', text: 'A base backup plus archived write-ahead log restores the archive to any moment in between.', links: ['/', '/replication'] },
  '/replication': { title: 'Replication', text: 'Standby servers replay the write-ahead log of the primary and can take over when it fails.', links: ['/'] },
};

/** The small site the operator crawls, served from memory on 127.0.0.1. */
function demoSite(): Promise<{ url: string; server: Server }> {
  const server = createServer((request, response) => {
    const page = DEMO_PAGES[new URL(request.url ?? '/', 'http://x').pathname];
    if (!page) {
      response.writeHead(404).end();
      return;
    }
    const links = page.links.map((href) => `<li><a href="${href}">${DEMO_PAGES[href]?.title ?? href}</a></li>`).join('');
    const body = `<p>${`${page.text} `.repeat(30)}</p><ul>${links}</ul>`;
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    response.end(`<!doctype html><html lang="en"><head><title>${page.title}</title></head><body><main><h1>${page.title}</h1>${body}</main></body></html>`);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server })));
}

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** `notary serve` on a free port, once /healthz answers. */
async function serve(dataDir: string): Promise<{ url: string; child: ChildProcess; log: () => string }> {
  const port = await freePort();
  const child = spawn(process.execPath, [bin, '--data', dataDir, 'serve', '--port', String(port)], { cwd: root, env: { ...process.env, NOTARY_LOG_LEVEL: 'warn' } });
  let log = '';
  child.stdout?.on('data', (d: Buffer) => (log += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (log += d.toString()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  while (!(await fetch(`${url}/healthz`).then((r) => r.ok, () => false))) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`notary serve did not start:\n${log}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return { url, child, log: () => log };
}

/** POST /v1/crawl with an API key; the job's id. */
async function orderCrawl(server: string, key: string, url: string): Promise<string> {
  const response = await fetch(`${server}/v1/crawl`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url, max_pages: 6 }),
  });
  if (response.status !== 202) throw new Error(`POST /v1/crawl answered ${response.status}: ${await response.text()}`);
  return ((await response.json()) as { id: string }).id;
}

async function search(server: string, key: string, query: string, depth: number): Promise<void> {
  const response = await fetch(`${server}/v1/search`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ query, depth }),
  });
  if (!response.ok) throw new Error(`search "${query}" answered ${response.status}: ${await response.text()}`);
}

/** Creates a key on the API keys page; returns its plaintext, shown this once. */
export async function createKey(page: Page, name: string, kind: 'live' | 'test' = 'live'): Promise<string> {
  await navLink(page, 'API keys').click();
  await page.getByRole('heading', { name: 'API keys', level: 1 }).waitFor();
  await page.getByLabel('Name').fill(name);
  await page.getByLabel(kind === 'live' ? /^Live/ : /^Test/).check();
  await page.getByRole('button', { name: 'Create key' }).click();
  const value = page.getByLabel('API key', { exact: true });
  await value.waitFor();
  return value.inputValue();
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { out: { type: 'string', default: 'docs/screenshots' }, chromium: { type: 'string', default: process.env['NOTARY_CHROMIUM'] ?? '/usr/bin/chromium' } } });
  const out = path.resolve(values.out);
  mkdirSync(out, { recursive: true });
  const dataDir = mkdtempSync(path.join(tmpdir(), 'notary-screenshots-'));
  writeFileSync(path.join(dataDir, 'notary.json'), JSON.stringify(LOCAL_DEMO_CONFIG));
  const site = await demoSite();
  const refused: string[] = [];
  let server: Awaited<ReturnType<typeof serve>> | undefined;
  let browser: Browser | undefined;
  const shot = async (page: Page, name: string) => {
    await page.waitForLoadState('networkidle');
    // A page reached by a click in the app loads its data after the click: wait for it, not for the network.
    await page.locator('[data-loading]').first().waitFor({ state: 'detached', timeout: 10_000 });
    await page.screenshot({ path: path.join(out, `${name}.png`), fullPage: true });
    process.stdout.write(`${path.relative(process.cwd(), path.join(out, `${name}.png`))}\n`);
  };
  try {
    await adminCreate(dataDir, 'ops@example.org', 'operator-password-17');
    server = await serve(dataDir);
    browser = await chromium.launch({ executablePath: values.chromium, headless: true, args: [...CHROMIUM_ARGS] });

    // The operator adds the site as a crawl seed and watches it crawled.
    const operator = await (await offlineContext(browser, (u) => refused.push(u))).newPage();
    await operator.goto(`${server.url}/dashboard/signin`);
    await operator.getByLabel('Email').fill('ops@example.org');
    await operator.getByLabel('Password').fill('operator-password-17');
    await operator.getByRole('button', { name: 'Sign in' }).click();
    await operator.getByRole('heading', { name: 'Operator', level: 1 }).waitFor();
    await navLink(operator, 'Crawling').click();
    await operator.getByLabel('Start URL').fill(`${site.url}/`);
    await operator.getByRole('button', { name: 'Add seed' }).click();
    const run = operator.getByTestId('runs-table').locator('tbody tr').first();
    await run.waitFor({ timeout: 60_000 });
    for (const deadline = Date.now() + 120_000; (await run.getAttribute('data-run-state')) !== 'finished'; ) {
      if (Date.now() > deadline) throw new Error(`the crawl did not finish: ${await run.textContent()}`);
      await operator.waitForTimeout(500);
    }
    // Once indexed, the seed shows when it was last crawled (the seed list refreshes every 5 s).
    await operator.getByTestId('seeds-table').getByText(/UTC/).waitFor({ timeout: 60_000 });
    await shot(operator, 'operator-crawl');

    // A member signs up, makes a live and a test key, and calls the API with them.
    const member = await (await offlineContext(browser, (u) => refused.push(u))).newPage();
    await member.goto(`${server.url}/dashboard/signup`);
    await member.getByLabel('Email').fill('ada@acme.example');
    await member.getByLabel('Organisation').fill('acme');
    await member.getByLabel('Password').fill('member-password-17');
    await member.getByRole('button', { name: 'Create account' }).click();
    await member.getByRole('heading', { name: 'acme', level: 1 }).waitFor();
    const live = await createKey(member, 'research agent', 'live');
    await shot(member, 'keys-created');
    await member.getByRole('button', { name: 'I have stored it' }).click();
    const test = await createKey(member, 'staging', 'test');
    await member.getByRole('button', { name: 'I have stored it' }).click();
    const queries = ['vacuum dead tuples', 'planner statistics', 'restore from a base backup', 'standby takes over', 'index write cost'];
    for (const [i, query] of queries.entries()) {
      await search(server.url, live, query, 1);
      if (i % 2 === 0) await search(server.url, live, query, 2);
      await search(server.url, test, query, 1);
    }
    await shot(member, 'keys');
    await navLink(member, 'Overview').click();
    await member.getByTestId('balance').waitFor();
    await shot(member, 'overview');
    await navLink(member, 'Usage').click();
    await member.getByTestId('calls-chart').waitFor();
    await shot(member, 'usage');
    await navLink(member, 'Credits').click();
    await member.getByTestId('ledger-table').waitFor();
    await shot(member, 'credits');
    await navLink(member, 'Tier and limits').click();
    await shot(member, 'plan');
    await navLink(member, 'Party keys').click();
    await member.getByRole('textbox', { name: 'Public key' }).fill(String(generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }).x));
    await member.getByRole('textbox', { name: 'Label' }).fill('billing agent');
    await member.getByRole('textbox', { name: 'Collections' }).fill('default');
    await member.getByRole('button', { name: 'Register key' }).click();
    await member.getByText(/its kid is/).waitFor();
    await shot(member, 'parties');

    // The member's agent asks for a crawl of the site over the API (the operator lets this tenant reach 127.0.0.1).
    await notaryCommand(dataDir, ['keys', 'private-networks', '--tenant', 'acme', 'on']);
    const job = await orderCrawl(server.url, live, `${site.url}/`);
    await navLink(member, 'Crawl jobs').click();
    await member.locator(`[data-job-status="completed"]`).first().waitFor({ timeout: 120_000 });
    await shot(member, 'crawl-jobs');
    process.stdout.write(`crawl job ${job} completed\n`);

    // The operator's other pages, with the member's calls in them.
    for (const [link, name] of [
      ['Overview', 'operator-overview'],
      ['Index', 'operator-index'],
      ['Prices', 'operator-prices'],
      ['Tiers', 'operator-tiers'],
      ['Tenants', 'operator-tenants'],
      ['Collections', 'operator-collections'],
      ['Revenue', 'operator-revenue'],
    ] as const) {
      await navLink(operator, link).click();
      await shot(operator, name);
    }

    // On a phone, with the menu open.
    const phone = await (await offlineContext(browser, (u) => refused.push(u), { width: 390, height: 844 })).newPage();
    await phone.goto(`${server.url}/dashboard/signin`);
    await phone.getByLabel('Email').fill('ada@acme.example');
    await phone.getByLabel('Password').fill('member-password-17');
    await phone.getByRole('button', { name: 'Sign in' }).click();
    await phone.getByRole('heading', { name: 'acme', level: 1 }).waitFor();
    await phone.getByRole('button', { name: 'Menu' }).click();
    await shot(phone, 'phone-menu');
    if (refused.length > 0) throw new Error(`the dashboard asked for something outside 127.0.0.1: ${refused.join(', ')}`);
  } catch (err) {
    if (server) process.stderr.write(server.log());
    throw err;
  } finally {
    await browser?.close();
    if (server) {
      const child = server.child;
      await new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('close', () => resolve());
        child.kill('SIGTERM');
      });
    }
    await new Promise((resolve) => site.server.close(resolve));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
