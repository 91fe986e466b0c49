import type { CallToolResult, McpServer, ServerContext } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { CallOptions, CrawlJob, NotaryClient } from '../sdk/ts/src/index.js';

const CRAWL_DESCRIPTION = [
  'Ask this notary service to crawl a web site into one of its collections, so that notary_search finds its pages.',
  'Answers at once with a job (id, status queued); the crawl runs in the background: poll notary_crawl_status with the id.',
  'url (or urls, up to 20 seeds); collection (must exist; default "default"); max_pages (default 100): the job is quoted at max_pages',
  'and charged only for the pages it stored, when it ends; scope path (under the seed folder, default), host or domain; max_depth links from the seeds (default 3).',
  'Not read-only: it spends credits. Paid with an API key or multi-party payments; pay-per-call x402 cannot pay it.',
].join(' ');

const STATUS_DESCRIPTION = 'The state and progress of a crawl job submitted with notary_crawl: status (queued, running, completed, cancelled, failed), pages stored, queued and failed, rate and time left, credits charged once it ended. Free; read-only.';

const MAP_DESCRIPTION = [
  'List the URLs this notary service knows under a site folder: pages in its index, URLs waiting in its crawl frontier, and the site sitemaps (read live).',
  'Use it to see what a site holds before crawling or extracting it. Paged: pass next_cursor as cursor for more. Costs one call a page; read-only.',
].join(' ');

const job = z.object({
  id: z.string(),
  status: z.string(),
  collection: z.string(),
  seeds: z.array(z.string()),
  max_pages: z.number().int(),
  progress: z.object({ stored: z.number().int(), queued: z.number().int(), failed: z.number().int(), pages_per_minute: z.number().nullable(), eta_seconds: z.number().nullable() }),
  credits_quoted: z.number(),
  credits_used: z.number().nullable(),
  error: z.object({ code: z.string(), detail: z.string() }).nullable(),
});

const crawlInput = z.object({
  url: z.string().optional().describe('The seed URL (or give urls)'),
  urls: z.array(z.string()).min(1).max(20).optional().describe('Up to 20 seed URLs'),
  collection: z.string().optional(),
  max_pages: z.number().int().min(1).optional(),
  max_depth: z.number().int().min(0).max(20).optional(),
  scope: z.enum(['path', 'host', 'domain']).optional(),
});

const mapInput = z.object({
  url: z.string().describe('The site folder, e.g. https://docs.example.org/guide/'),
  limit: z.number().int().min(1).max(5000).optional(),
  cursor: z.string().optional(),
  sitemaps: z.boolean().optional(),
  collection: z.string().optional(),
});

const mapOutput = z.object({
  url: z.string(),
  urls: z.array(z.object({ url: z.string(), source: z.string(), title: z.string().optional() })),
  next_cursor: z.string().nullable(),
  cost: z.object({ credits_used: z.number(), request_id: z.string() }),
});

function jobView(j: CrawlJob) {
  return { id: j.id, status: j.status, collection: j.collection, seeds: j.seeds, max_pages: j.max_pages, progress: j.progress, credits_quoted: j.credits_quoted, credits_used: j.credits_used, error: j.error };
}

function jobText(j: CrawlJob): string {
  const p = j.progress;
  const rate = p.pages_per_minute !== null ? `, ${p.pages_per_minute} pages/min` : '';
  const left = p.eta_seconds !== null ? `, about ${p.eta_seconds} s left` : '';
  const charge = j.credits_used !== null ? `${j.credits_used} credits charged` : `${j.credits_quoted} credits held until it ends`;
  return `Crawl job ${j.id} into "${j.collection}": ${j.status}; ${p.stored} of ${j.max_pages} pages stored, ${p.queued} queued, ${p.failed} failed${rate}${left}; ${charge}.${j.error ? ` Error ${j.error.code}: ${j.error.detail}` : ''}`;
}

/** The MCP tools of crawl jobs and site maps (issue 33), each call made through the TypeScript SDK. */
export function registerSiteTools(
  server: McpServer,
  client: NotaryClient,
  helpers: { callOptions(ctx: ServerContext): CallOptions; toolError(err: unknown): CallToolResult },
): void {
  server.registerTool(
    'notary_crawl',
    {
      title: 'Crawl a web site',
      description: CRAWL_DESCRIPTION,
      inputSchema: crawlInput,
      outputSchema: job,
      annotations: { title: 'Crawl a web site', readOnlyHint: false, idempotentHint: false, destructiveHint: false, openWorldHint: true },
    },
    async (args, ctx) => {
      try {
        const submitted = await client.crawl(args, helpers.callOptions(ctx));
        return { content: [{ type: 'text', text: `${jobText(submitted)} Poll notary_crawl_status with id ${submitted.id}.` }], structuredContent: jobView(submitted) };
      } catch (err) {
        return helpers.toolError(err);
      }
    },
  );
  server.registerTool(
    'notary_crawl_status',
    {
      title: 'A crawl job’s progress',
      description: STATUS_DESCRIPTION,
      inputSchema: z.object({ id: z.string().describe('The job id notary_crawl answered (crawl_...)') }),
      outputSchema: job,
      annotations: { title: 'A crawl job’s progress', readOnlyHint: true, idempotentHint: true, destructiveHint: false, openWorldHint: false },
    },
    async ({ id }, ctx) => {
      try {
        const found = await client.crawlJob(id, helpers.callOptions(ctx));
        return { content: [{ type: 'text', text: jobText(found) }], structuredContent: jobView(found) };
      } catch (err) {
        return helpers.toolError(err);
      }
    },
  );
  server.registerTool(
    'notary_map',
    {
      title: 'List a site’s URLs',
      description: MAP_DESCRIPTION,
      inputSchema: mapInput,
      outputSchema: mapOutput,
      annotations: { title: 'List a site’s URLs', readOnlyHint: true, idempotentHint: true, destructiveHint: false, openWorldHint: true },
    },
    async (args, ctx) => {
      try {
        const page = await client.map(args, helpers.callOptions(ctx));
        const urls = page.urls.map((u) => ({ url: u.url, source: u.source, ...(u.title !== undefined ? { title: u.title } : {}) }));
        const lines = urls.map((u) => `${u.url} (${u.source}${u.title ? `: ${u.title}` : ''})`);
        const more = page.next_cursor ? `\nMore: call again with cursor ${page.next_cursor}.` : '';
        return {
          content: [{ type: 'text', text: `${lines.join('\n') || 'No URLs known under this folder.'}${more}\n\nCost: ${page.creditsUsed} credits (request ${page.requestId}).` }],
          structuredContent: { url: page.url, urls, next_cursor: page.next_cursor, cost: { credits_used: page.creditsUsed, request_id: page.requestId } },
        };
      } catch (err) {
        return helpers.toolError(err);
      }
    },
  );
}
