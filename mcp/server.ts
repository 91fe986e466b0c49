import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createMcpHandler,
  hostHeaderValidationResponse,
  localhostAllowedHostnames,
  McpServer,
  type CallToolResult,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { serveStdio, type StdioServerHandle } from '@modelcontextprotocol/server/stdio';
import { z } from 'zod';
import { registerSiteTools } from './site-tools.js';
import {
  NotaryApiError,
  NotaryClient,
  NotaryError,
  paymentRequired,
  x402,
  type CallOptions,
  type ExtractBatchResult,
  type ExtractRequest,
  type ExtractResult,
  type NotaryClientOptions,
  type SearchRequest,
  type SearchResult,
  type X402Payer,
} from '../sdk/ts/src/index.js';

export const MCP_SERVER_NAME = 'notary';
export const MCP_SERVER_VERSION = '0.1.0';

/** x402's MCP transport: the payment travels in the tool call's `_meta`, its settlement in the result's `_meta`. */
export const X402_PAYMENT_META = 'x402/payment';
export const X402_PAYMENT_RESPONSE_META = 'x402/payment-response';

const SEARCH_DESCRIPTION = [
  'Search the web pages this notary service has crawled and indexed, reranked by a neural model.',
  'Use it to find pages that answer a question or mention a topic; then call notary_extract on a result URL to read it.',
  'Returns up to 10 results by default (url, title, snippet, rerank_score 0..1, best first) and what the call cost (credits_used, request_id).',
  'Optional, at no extra cost: max_results, include_domains / exclude_domains, start_date / end_date (publication date), highlights (passages of each result page),',
  'and include: ["published_date"] (each result whose publication date is known gains published_date).',
  'collection searches one named collection of pages instead of "default" (an unknown name fails with collection_not_found, costing nothing).',
  'depth 1 is fast and right for lookups; depth 2 adds a reflection pass (query expansion) that helps broad or',
  'multi-part questions, takes longer and may cost more (the cost is in every result). Read-only: calling it again with the same arguments is safe.',
].join(' ');

const EXTRACT_DESCRIPTION = [
  'Fetch one web page and return its main content without navigation, ads or boilerplate.',
  'mode: excerpt (default, the 1-3 most informative paragraphs; with query, the passages that best answer it), text, markdown or html.',
  'Fails with a clear error, and costs nothing, when the page is a CAPTCHA, a login wall, empty, or forbidden by robots.txt.',
  'include_comments: true keeps the reader comments after the article (left out by default).',
  'Returns title, byline, language, content, word_count and the cost (credits_used, request_id). Read-only.',
].join(' ');

const EXTRACT_BATCH_DESCRIPTION = [
  'Fetch up to 20 web pages in one call and return the main content of each, in the order given.',
  'Each page is answered on its own: ok with title, content and word_count, or not ok with the error that stopped it (code, status, detail).',
  'Costs the price of notary_extract for each page extracted, nothing for the pages that failed; all failing is a tool error that costs nothing.',
  'mode, query, render, include_comments and collection apply to every page, as in notary_extract. Read-only.',
].join(' ');

/** `collection`: a collection name (the API's pattern); the service's collections are listed by `notary collections list`. */
const collection = (what: string) =>
  z
    .string()
    .regex(/^[a-z0-9][a-z0-9_-]{0,63}$/)
    .optional()
    .describe(
      `The collection of pages to ${what} (lower-case name, default "default": every page not put in another collection). ` +
        'Leave it out unless the user or the operator names one: an unknown name fails with collection_not_found, one the credentials may not read with collection_forbidden (nothing is charged).',
    );
const includeComments = z.boolean().optional().describe('true: keep the reader comments after the article (default false: the article alone).');

const searchInput = z.object({
  query: z.string().min(1).max(512).describe('What to search for, in natural language or keywords.'),
  depth: z.number().int().min(1).max(3).default(1).describe('1: fast lookup (default). 2: adds a reflection pass for hard or broad questions; may cost more.'),
  max_results: z.number().int().min(1).max(100).optional().describe("Results wanted (default 10; the server's cap applies, 50 by default). No extra charge."),
  include_domains: z.array(z.string().min(1).max(255)).max(100).optional().describe('Only results from these hosts: "docs.example.com", or "*.example.com" for it and every host under it.'),
  exclude_domains: z.array(z.string().min(1).max(255)).max(100).optional().describe('No results from these hosts, same form.'),
  start_date: z.string().regex(/^\d{4}-\d{2}-\d{2}$/).optional().describe('Only pages published on or after this date (YYYY-MM-DD).'),
  end_date: z.string().regex(/^\d{4}-\d{2}-\d{2}$/).optional().describe('Only pages published on or before this date (YYYY-MM-DD).'),
  undated: z.enum(['keep', 'exclude']).optional().describe('With a date range: keep (default) or exclude pages whose publication date is unknown.'),
  highlights: z
    .object({ count: z.number().int().min(1).max(10).optional(), max_chars: z.number().int().min(40).max(2000).optional() })
    .optional()
    .describe("Add to each result up to count (default 3) passages of its page that best answer the query, with scores."),
  include: z
    .array(z.enum(['published_date']))
    .optional()
    .describe('Optional result fields: ["published_date"] adds the page\'s publication date (ISO 8601, UTC) to each result where it is known.'),
  collection: collection('search'),
});

/** The tool's arguments as the SDK's request (options left out when not given). */
function searchRequest(input: z.infer<typeof searchInput>): SearchRequest {
  const { highlights, include, ...rest } = input;
  const request = Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined)) as unknown as SearchRequest;
  if (include) request.include = [...new Set(include)];
  if (highlights) {
    request.highlights = {
      ...(highlights.count !== undefined ? { count: highlights.count } : {}),
      ...(highlights.max_chars !== undefined ? { max_chars: highlights.max_chars } : {}),
    };
  }
  return request;
}

const extractInput = z.object({
  url: z.string().url().describe('Absolute http(s) URL of the page, e.g. a URL from notary_search results.'),
  mode: z.enum(['excerpt', 'text', 'markdown', 'html']).default('excerpt').describe('excerpt (default), text, markdown or html.'),
  query: z.string().max(2000).optional().describe('With mode excerpt: return the passages that best answer this.'),
  render: z.enum(['auto', 'never', 'always']).optional().describe('auto (default): a browser only when the page needs JavaScript.'),
  include_comments: includeComments,
  collection: collection('read under (the page is fetched the same; the collection decides who may call)'),
});

const extractBatchInput = z.object({
  urls: z.array(z.string().url()).min(1).max(20).describe('1 to 20 distinct absolute http(s) URLs, e.g. URLs from notary_search results.'),
  mode: z.enum(['excerpt', 'text', 'markdown', 'html']).default('excerpt').describe('excerpt (default), text, markdown or html, for every page.'),
  query: z.string().max(2000).optional().describe('With mode excerpt: return the passages of each page that best answer this.'),
  render: z.enum(['auto', 'never', 'always']).optional().describe('auto (default): a browser only when a page needs JavaScript.'),
  include_comments: includeComments,
  collection: collection('read under (the pages are fetched the same; the collection decides who may call)'),
});

/** The extract tools' options as the SDK's request members (left out when not given). */
function extractOptions(args: z.infer<typeof extractBatchInput> | z.infer<typeof extractInput>): Omit<ExtractRequest, 'url'> {
  return {
    mode: args.mode,
    ...(args.query ? { query: args.query } : {}),
    ...(args.render ? { render: args.render } : {}),
    ...(args.include_comments !== undefined ? { include_comments: args.include_comments } : {}),
    ...(args.collection ? { collection: args.collection } : {}),
  };
}

const cost = z.object({ credits_used: z.number().int(), request_id: z.string() });
const searchOutput = z.object({
  query: z.string(),
  depth: z.number().int(),
  results: z.array(
    z.object({
      url: z.string(),
      title: z.string(),
      snippet: z.string(),
      rerank_score: z.number(),
      highlights: z.array(z.object({ text: z.string(), score: z.number() })).optional(),
      published_date: z.string().optional(),
    }),
  ),
  cost,
});
const extractOutput = z.object({
  url: z.string(),
  final_url: z.string(),
  title: z.string().nullable(),
  byline: z.string().nullable(),
  lang: z.string().nullable(),
  mode: z.string(),
  content: z.string(),
  word_count: z.number().int(),
  cost,
});

const extractBatchOutput = z.object({
  results: z.array(
    z.object({
      url: z.string(),
      ok: z.boolean(),
      final_url: z.string().optional(),
      title: z.string().nullable().optional(),
      lang: z.string().nullable().optional(),
      content: z.string().optional(),
      word_count: z.number().int().optional(),
      error: z.object({ code: z.string(), status: z.number().int(), detail: z.string(), retryable: z.boolean() }).optional(),
    }),
  ),
  cost,
});

const annotations = { readOnlyHint: true, idempotentHint: true, destructiveHint: false, openWorldHint: true };

function costOf(result: SearchResult | ExtractResult | ExtractBatchResult) {
  return { credits_used: result.creditsUsed, request_id: result.requestId };
}

/** A payer that hands the service the payment the MCP client put in `_meta["x402/payment"]` (x402 MCP transport). */
function forwardedPayment(payment: unknown): X402Payer {
  return {
    async pay() {
      const json = typeof payment === 'string' ? payment : JSON.stringify(payment);
      return { 'payment-signature': btoa(String.fromCharCode(...new TextEncoder().encode(json))) };
    },
  };
}

function toolError(err: unknown): CallToolResult {
  if (err instanceof NotaryApiError) {
    // x402 MCP transport: a 402 with x402 requirements is answered with them, so the client can pay and call again.
    const required = err.status === 402 ? paymentRequired(err.raw) : null;
    if (required) {
      return {
        isError: true,
        structuredContent: { ...required, error: err.problem?.detail ?? 'payment required' } as Record<string, unknown>,
        content: [{ type: 'text', text: `Payment required: ${err.problem?.detail ?? ''} Pay with x402 and call again with _meta["${X402_PAYMENT_META}"].` }],
      };
    }
    const retry = err.retryable ? ' It may succeed if retried later.' : '';
    return { isError: true, content: [{ type: 'text', text: `notary error ${err.status} ${err.code}: ${err.problem?.detail ?? err.message}.${retry} (request ${err.requestId ?? '?'}; nothing was charged)` }] };
  }
  if (err instanceof NotaryError) return { isError: true, content: [{ type: 'text', text: `notary unreachable: ${err.message}` }] };
  throw err;
}

function callOptions(ctx: ServerContext): CallOptions {
  const payment = ctx.mcpReq._meta?.[X402_PAYMENT_META];
  return { signal: ctx.mcpReq.signal, ...(payment !== undefined ? { payment: x402(forwardedPayment(payment)) } : {}) };
}

function paymentMeta(result: SearchResult | ExtractResult | ExtractBatchResult): Record<string, unknown> | undefined {
  const header = result.raw.headers.get('payment-response');
  if (!header) return undefined;
  try {
    return { [X402_PAYMENT_RESPONSE_META]: JSON.parse(new TextDecoder().decode(Uint8Array.from(atob(header), (c) => c.charCodeAt(0)))) };
  } catch {
    return undefined;
  }
}

/** The MCP server of one notary deployment: the search, extract, crawl and map tools, each call made through the TypeScript SDK. */
export function notaryMcpServer(client: NotaryClient): McpServer {
  const server = new McpServer({ name: MCP_SERVER_NAME, version: MCP_SERVER_VERSION, title: 'notary search' });
  server.registerTool(
    'notary_search',
    { title: 'Search the web index', description: SEARCH_DESCRIPTION, inputSchema: searchInput, outputSchema: searchOutput, annotations: { title: 'Search the web index', ...annotations } },
    async (input, ctx) => {
      try {
        const result = await client.search(searchRequest(input), callOptions(ctx));
        const lines = result.results.map((r, i) => {
          const passages = (r.highlights ?? []).map((h) => `\n   - (${h.score.toFixed(3)}) ${h.text}`).join('');
          const date = r.published_date ? ` (published ${r.published_date})` : '';
          return `${i + 1}. ${r.title} (${r.rerank_score.toFixed(3)})\n   ${r.url}${date}\n   ${r.snippet}${passages}`;
        });
        const meta = paymentMeta(result);
        return {
          content: [{ type: 'text', text: `${lines.join('\n') || 'No results.'}\n\nCost: ${result.creditsUsed} credits (request ${result.requestId}).` }],
          structuredContent: { query: result.query, depth: result.depth, results: result.results, cost: costOf(result) },
          ...(meta ? { _meta: meta } : {}),
        };
      } catch (err) {
        return toolError(err);
      }
    },
  );
  server.registerTool(
    'notary_extract',
    { title: 'Read a web page', description: EXTRACT_DESCRIPTION, inputSchema: extractInput, outputSchema: extractOutput, annotations: { title: 'Read a web page', ...annotations } },
    async (args, ctx) => {
      try {
        const result = await client.extract({ url: args.url, ...extractOptions(args) }, callOptions(ctx));
        const meta = paymentMeta(result);
        return {
          content: [{ type: 'text', text: `${result.title ?? result.final_url}\n\n${result.content}\n\nCost: ${result.creditsUsed} credits (request ${result.requestId}).` }],
          structuredContent: {
            url: result.url,
            final_url: result.final_url,
            title: result.title,
            byline: result.byline,
            lang: result.lang,
            mode: result.mode,
            content: result.content,
            word_count: result.word_count,
            cost: costOf(result),
          },
          ...(meta ? { _meta: meta } : {}),
        };
      } catch (err) {
        return toolError(err);
      }
    },
  );
  server.registerTool(
    'notary_extract_batch',
    {
      title: 'Read several web pages',
      description: EXTRACT_BATCH_DESCRIPTION,
      inputSchema: extractBatchInput,
      outputSchema: extractBatchOutput,
      annotations: { title: 'Read several web pages', ...annotations },
    },
    async (args, ctx) => {
      try {
        const result = await client.extractBatch({ urls: args.urls, ...extractOptions(args) }, callOptions(ctx));
        const results = result.results.map((item) =>
          item.ok
            ? { url: item.url, ok: true, final_url: item.final_url, title: item.title, lang: item.lang, content: item.content, word_count: item.word_count }
            : { url: item.url, ok: false, error: { code: item.problem.code, status: item.problem.status, detail: item.problem.detail, retryable: item.problem.retryable } },
        );
        const text = result.results
          .map((item, i) => (item.ok ? `${i + 1}. ${item.title ?? item.final_url}\n${item.url}\n\n${item.content}` : `${i + 1}. ${item.url}: error ${item.problem.code}: ${item.problem.detail}`))
          .join('\n\n---\n\n');
        const meta = paymentMeta(result);
        return {
          content: [{ type: 'text', text: `${text}\n\nCost: ${result.creditsUsed} credits (request ${result.requestId}).` }],
          structuredContent: { results, cost: costOf(result) },
          ...(meta ? { _meta: meta } : {}),
        };
      } catch (err) {
        return toolError(err);
      }
    },
  );
  registerSiteTools(server, client, { callOptions, toolError });
  return server;
}

/** Serves MCP on this process's stdin/stdout (stdout carries only protocol messages). */
export function serveMcpStdio(clientOptions: NotaryClientOptions): StdioServerHandle {
  const client = new NotaryClient(clientOptions);
  return serveStdio(() => notaryMcpServer(client));
}

export interface McpHttpServer {
  url: string;
  close(): Promise<void>;
}

async function toWebRequest(req: IncomingMessage, base: string): Promise<Request> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else if (value !== undefined) headers.set(name, value);
  }
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD' && chunks.length > 0;
  return new Request(new URL(req.url ?? '/', base), { method: req.method ?? 'GET', headers, ...(hasBody ? { body: Buffer.concat(chunks) } : {}) });
}

async function writeWebResponse(res: ServerResponse, response: Response): Promise<void> {
  res.statusCode = response.status;
  response.headers.forEach((value, name) => res.setHeader(name, value));
  if (!response.body) {
    res.end();
    return;
  }
  for await (const chunk of response.body) res.write(chunk);
  res.end();
}

/**
 * Serves MCP over Streamable HTTP at `path` (default /mcp), stateless: every POST is one exchange. Bound to loopback
 * by default, with Host header validation against DNS rebinding.
 */
export async function serveMcpHttp(clientOptions: NotaryClientOptions, options: { host?: string; port?: number; path?: string } = {}): Promise<McpHttpServer> {
  const client = new NotaryClient(clientOptions);
  const handler = createMcpHandler(() => notaryMcpServer(client));
  const host = options.host ?? '127.0.0.1';
  const path = options.path ?? '/mcp';
  const loopback = host === '127.0.0.1' || host === 'localhost' || host === '::1';
  const http: HttpServer = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', `http://${req.headers.host ?? host}`);
      if (url.pathname !== path) {
        res.writeHead(404, { 'content-type': 'text/plain' }).end(`MCP is served at ${path}\n`);
        return;
      }
      const request = await toWebRequest(req, `http://${req.headers.host ?? host}`);
      const rejected = loopback ? hostHeaderValidationResponse(request, localhostAllowedHostnames()) : undefined;
      await writeWebResponse(res, rejected ?? (await handler.fetch(request)));
    })().catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(`internal error: ${err instanceof Error ? err.message : String(err)}\n`);
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port ?? 0, host, () => resolve());
  });
  const address = http.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${shownHost}:${address.port}${path}`,
    close: async () => {
      await handler.close();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
