import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveMcpHttp, type McpHttpServer } from '../mcp/server.js';
import { apiKey, NotaryClient } from '../sdk/ts/src/index.js';
import { apiTestConfig, startApi, type ApiHarness } from '../testkit/app.js';
import { repoRoot } from '../testkit/cli.js';
import { html, writeSite } from '../testkit/crawl-site.js';
import { serveDirectory, type StaticServer } from '../testkit/serve-static.js';

/**
 * `notary mcp` with the official MCP client library: both transports list the tools with their annotations and
 * call them against a real notary API on 127.0.0.1 (the real search pipeline, a real page to extract).
 */
interface ToolResult {
  isError?: boolean;
  content: Array<{ type: string; text?: string }>;
  structuredContent?: Record<string, unknown>;
}

let api: ApiHarness;
let apiUrl: string;
let key: string;
let site: StaticServer;
let siteDir: string;
let dataDir: string;

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), 'notary-mcp-'));
  // Two crawl jobs at once (one per transport's run; no worker runs here to settle a cancelled one).
  api = await startApi(apiTestConfig(dataDir, { extract: { allow_private_networks: true, respect_robots_txt: false, render: 'never' }, tiers: { bulk: { requests_per_minute: 60_000, burst: 1000, crawl_concurrent_jobs: 3 } } }), { withExtract: true });
  await api.app.listen({ host: '127.0.0.1', port: 0 });
  // One dated page beside the harness's undated ones, for include: ["published_date"].
  await api.runtime.index.upsert([
    { id: 101, pageId: 101, url: 'https://docs.test/tablespaces', title: 'Tablespaces', headingPath: '', text: 'tablespaces let administrators choose directories for relation files', publishedAt: '2024-05-01' },
  ]);
  const address = api.app.server.address();
  apiUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  const tenant = await api.runtime.accounts.createTenant('mcp-agent', { credits: 100, tier: 'bulk' });
  key = (await api.runtime.accounts.createKey(tenant.id)).key;
  const paragraph = 'Autovacuum reclaims the storage of dead tuples so that tables do not grow without bound. '.repeat(12);
  siteDir = writeSite({
    'vacuum.html': html('Routine vacuuming', `<article><h2>Why vacuum</h2><p>${paragraph}</p><p>${paragraph}</p></article>`),
    'comments.html': readFileSync(path.join(repoRoot, 'test/fixtures/extract-shapes/article-comments.html'), 'utf8'),
  });
  site = await serveDirectory(siteDir);
});

afterAll(async () => {
  await api?.close();
  await site?.close();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(siteDir, { recursive: true, force: true });
});

async function exercise(client: Client): Promise<void> {
  const { tools } = await client.listTools();
  expect(tools.map((t) => t.name).sort()).toEqual(['notary_crawl', 'notary_crawl_status', 'notary_extract', 'notary_extract_batch', 'notary_map', 'notary_search']);
  for (const tool of tools) {
    // notary_crawl spends credits and starts work: neither read-only nor idempotent.
    const writes = tool.name === 'notary_crawl';
    expect(tool.annotations, tool.name).toMatchObject({ readOnlyHint: !writes, idempotentHint: !writes, destructiveHint: false });
    expect(tool.description?.length).toBeGreaterThan(150);
    expect(tool.outputSchema).toBeDefined();
  }
  const search = (await client.callTool({ name: 'notary_search', arguments: { query: 'vacuum dead tuples', depth: 1 } })) as ToolResult;
  expect(search.isError ?? false).toBe(false);
  const structured = search.structuredContent as { results: Array<{ url: string }>; cost: { credits_used: number; request_id: string } };
  expect(structured.results[0]?.url).toBe('https://docs.test/vacuum');
  expect(structured.cost.credits_used).toBe(1);
  expect(structured.cost.request_id).toMatch(/^req_/);
  expect(search.content[0]?.text).toContain(`Cost: 1 credits (request ${structured.cost.request_id})`);

  type Dated = { results: Array<{ url: string; published_date?: string }> };
  const dated = (await client.callTool({ name: 'notary_search', arguments: { query: 'tablespaces', include: ['published_date'] } })) as ToolResult;
  expect(dated.isError ?? false).toBe(false);
  expect((dated.structuredContent as Dated).results[0]).toMatchObject({ url: 'https://docs.test/tablespaces', published_date: '2024-05-01T00:00:00.000Z' });
  expect(dated.content[0]?.text).toContain('(published 2024-05-01T00:00:00.000Z)');
  const plain = (await client.callTool({ name: 'notary_search', arguments: { query: 'tablespaces' } })) as ToolResult;
  expect((plain.structuredContent as Dated).results[0]).not.toHaveProperty('published_date');
  expect(structured.results[0]).not.toHaveProperty('published_date');

  const deep = (await client.callTool({ name: 'notary_search', arguments: { query: 'autovacuum analyze', depth: 2 } })) as ToolResult;
  expect((deep.structuredContent as { cost: { credits_used: number } }).cost.credits_used).toBe(2);

  const extract = (await client.callTool({ name: 'notary_extract', arguments: { url: `${site.url}/vacuum.html`, mode: 'markdown' } })) as ToolResult;
  expect(extract.isError ?? false).toBe(false);
  const page = extract.structuredContent as { title: string; content: string; cost: { credits_used: number } };
  expect(page.title).toBe('Routine vacuuming');
  expect(page.content).toContain('Autovacuum reclaims the storage');
  expect(page.cost.credits_used).toBe(1);

  // A batch: each page or its error, in order; charged for the pages extracted.
  const batch = (await client.callTool({ name: 'notary_extract_batch', arguments: { urls: [`${site.url}/vacuum.html`, `${site.url}/nope.html`], mode: 'text' } })) as ToolResult;
  expect(batch.isError ?? false).toBe(false);
  const pages = batch.structuredContent as { results: Array<{ url: string; ok: boolean; title?: string; error?: { code: string } }>; cost: { credits_used: number } };
  expect(pages.results.map((r) => r.ok)).toEqual([true, false]);
  expect(pages.results[0]?.title).toBe('Routine vacuuming');
  expect(pages.results[1]?.error?.code).toBe('upstream_not_found');
  expect(pages.cost.credits_used).toBe(1);
  expect(batch.content[0]?.text).toContain('2. ' + `${site.url}/nope.html: error upstream_not_found`);
  const allFailed = (await client.callTool({ name: 'notary_extract_batch', arguments: { urls: [`${site.url}/nope.html`] } })) as ToolResult;
  expect(allFailed.isError).toBe(true);
  expect(allFailed.content[0]?.text).toMatch(/notary error 502 batch_failed: .*nothing was charged/);

  // collection: "default" is the index searched without it; an unknown one is a tool error naming the code.
  const inDefault = (await client.callTool({ name: 'notary_search', arguments: { query: 'vacuum dead tuples', collection: 'default' } })) as ToolResult;
  expect(inDefault.isError ?? false).toBe(false);
  expect((inDefault.structuredContent as { results: Array<{ url: string }> }).results[0]?.url).toBe('https://docs.test/vacuum');
  const unknown = (await client.callTool({ name: 'notary_search', arguments: { query: 'vacuum', collection: 'no-such-collection' } })) as ToolResult;
  expect(unknown.isError).toBe(true);
  expect(unknown.content[0]?.text).toMatch(/notary error 404 collection_not_found: .*nothing was charged/);
  for (const name of ['notary_extract', 'notary_extract_batch']) {
    const target = name === 'notary_extract' ? { url: `${site.url}/vacuum.html` } : { urls: [`${site.url}/vacuum.html`] };
    const refused = (await client.callTool({ name, arguments: { ...target, collection: 'no-such-collection' } })) as ToolResult;
    expect(refused.content[0]?.text, name).toMatch(/notary error 404 collection_not_found/);
  }
  // include_comments reaches the server: the reader comments are in the content only when asked.
  const comments = async (args: Record<string, unknown>) =>
    ((await client.callTool({ name: 'notary_extract', arguments: { url: `${site.url}/comments.html`, mode: 'text', ...args } })) as ToolResult).structuredContent as { content: string };
  expect((await comments({})).content).not.toContain('number 17');
  expect((await comments({ include_comments: true })).content).toContain('number 17');
  const commentsBatch = (await client.callTool({ name: 'notary_extract_batch', arguments: { urls: [`${site.url}/comments.html`], mode: 'text', include_comments: true } })) as ToolResult;
  expect((commentsBatch.structuredContent as { results: Array<{ content?: string }> }).results[0]?.content).toContain('number 17');

  // Crawl jobs (issue 33): submitted (its quote held, nothing charged yet), then polled; no worker runs here.
  const crawl = (await client.callTool({ name: 'notary_crawl', arguments: { url: `${site.url}/vacuum.html`, max_pages: 2, max_depth: 0 } })) as ToolResult;
  expect(crawl.isError, crawl.content[0]?.text).toBeFalsy();
  expect(crawl.structuredContent).toMatchObject({ status: 'queued', max_pages: 2, credits_used: null });
  const jobId = (crawl.structuredContent as { id: string }).id;
  expect(crawl.content[0]?.text).toContain(`notary_crawl_status with id ${jobId}`);
  const status = (await client.callTool({ name: 'notary_crawl_status', arguments: { id: jobId } })) as ToolResult;
  expect(status.structuredContent).toMatchObject({ id: jobId, status: 'queued' });
  // Cancelled through the library (the tier allows one job at a time; the other transport's run submits its own).
  expect((await new NotaryClient({ baseUrl: apiUrl, payment: apiKey(key) }).cancelCrawl(jobId)).status).toBe('cancelled');
  const unknownJob = (await client.callTool({ name: 'notary_crawl_status', arguments: { id: 'crawl_nope' } })) as ToolResult;
  expect(unknownJob.isError).toBe(true);
  expect(unknownJob.content[0]?.text).toMatch(/notary error 404 crawl_job_not_found/);
  const map = (await client.callTool({ name: 'notary_map', arguments: { url: `${site.url}/`, sitemaps: false } })) as ToolResult;
  expect(map.isError, map.content[0]?.text).toBeFalsy();
  expect(map.structuredContent).toMatchObject({ url: `${site.url}/`, cost: { credits_used: 1 } });

  // A failure reaches the agent as a tool error naming the code, not as a protocol error.
  const missing = (await client.callTool({ name: 'notary_extract', arguments: { url: `${site.url}/nope.html` } })) as ToolResult;
  expect(missing.isError).toBe(true);
  expect(missing.content[0]?.text).toMatch(/notary error 422 upstream_not_found: .*nothing was charged/);
}

describe('notary mcp', () => {
  it('stdio: the real command, spoken to by the official client', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [path.join(repoRoot, 'bin/notary.js'), 'mcp', '--url', apiUrl],
      env: { ...(process.env as Record<string, string>), NOTARY_API_KEY: key },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'notary-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      await exercise(client);
    } finally {
      await client.close();
    }
  });

  it('Streamable HTTP', async () => {
    let server: McpHttpServer | undefined;
    const client = new Client({ name: 'notary-test', version: '1.0.0' });
    try {
      server = await serveMcpHttp({ baseUrl: apiUrl, payment: apiKey(key) });
      await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
      await exercise(client);
    } finally {
      await client.close();
      await server?.close();
    }
  });

  it('without credits the agent is told what is wrong', async () => {
    const server = await serveMcpHttp({ baseUrl: apiUrl });
    const client = new Client({ name: 'notary-test', version: '1.0.0' });
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
      const result = (await client.callTool({ name: 'notary_search', arguments: { query: 'vacuum' } })) as ToolResult;
      expect(result.isError).toBe(true);
      expect(result.content[0]?.text).toMatch(/notary error 401 unauthenticated/);
    } finally {
      await client.close();
      await server.close();
    }
  });
});
