import OpenAI from 'openai';
import type { NotaryConfig } from '../core/index.js';

/** What a rewriter gave one reflection pass: the new queries, or why there are none. */
export interface RewriteOutcome {
  queries: string[];
  ms: number;
  error?: string;
}

/** Turns a query and the passages a first search found into alternative queries. Never throws. */
export interface QueryRewriter {
  readonly model: string;
  rewrite(query: string, passages: readonly string[]): Promise<RewriteOutcome>;
}

/** Characters of each passage shown to the model. */
const PASSAGE_CHARS = 600;

const SYSTEM_PROMPT =
  'You rewrite search queries for a full-text and semantic search engine. Given a query and passages that a first ' +
  'search found, write alternative search queries that would find documents answering the original query: use ' +
  'synonyms and the vocabulary of the passages, and split a question with several parts into one query per part. ' +
  'Answer with the queries only, one per line, without numbering or any other text.';

export function rewritePrompt(query: string, passages: readonly string[], maxQueries: number): string {
  const shown = passages.map((p, i) => `${i + 1}. ${p.replace(/\s+/g, ' ').trim().slice(0, PASSAGE_CHARS)}`);
  return [`Query: ${query}`, '', shown.length > 0 ? `Passages:\n${shown.join('\n')}` : 'Passages: none found', '', `Write at most ${maxQueries} queries.`].join('\n');
}

/**
 * The model's answer as queries: one per line, list markers and quotes removed, without the original query or
 * repeats, at most `maxQueries`, each at most `maxLength` characters.
 */
export function parseRewrites(text: string, original: string, maxQueries: number, maxLength: number): string[] {
  const seen = new Set([normalise(original)]);
  const out: string[] = [];
  for (const line of text.split(/\r?\n/)) {
    const query = line
      .trim()
      .replace(/^(?:[-*•]|\d+[.)]|query\s*\d*\s*:)\s*/i, '')
      .replace(/^["'`“]+|["'`”]+$/g, '')
      .trim()
      .slice(0, maxLength);
    const key = normalise(query);
    if (!key || seen.has(key)) continue;
    seen.add(key);
    out.push(query);
    if (out.length >= maxQueries) break;
  }
  return out;
}

function normalise(query: string): string {
  return query.toLowerCase().replace(/\s+/g, ' ').trim();
}

/** A rewriter behind an OpenAI-compatible chat completions endpoint (OpenAI, vLLM, llama.cpp's server, Ollama). */
export class OpenAiQueryRewriter implements QueryRewriter {
  readonly model: string;
  private readonly client: OpenAI;

  constructor(
    private readonly settings: { url: string; model: string; apiKey?: string; timeoutMs: number; maxQueries: number; maxQueryLength: number },
  ) {
    this.model = settings.model;
    // Local servers need no key, but the client insists on one.
    this.client = new OpenAI({ baseURL: settings.url, apiKey: settings.apiKey ?? 'none', timeout: settings.timeoutMs, maxRetries: 0 });
  }

  async rewrite(query: string, passages: readonly string[]): Promise<RewriteOutcome> {
    const started = performance.now();
    const deadline = AbortSignal.timeout(this.settings.timeoutMs);
    try {
      const completion = await this.client.chat.completions.create(
        {
          model: this.settings.model,
          temperature: 0,
          max_tokens: 60 * this.settings.maxQueries,
          messages: [
            { role: 'system', content: SYSTEM_PROMPT },
            { role: 'user', content: rewritePrompt(query, passages, this.settings.maxQueries) },
          ],
        },
        { signal: deadline },
      );
      const content = completion.choices[0]?.message.content;
      if (typeof content !== 'string') return { queries: [], ms: performance.now() - started, error: 'the answer had no message content' };
      return { queries: parseRewrites(content, query, this.settings.maxQueries, this.settings.maxQueryLength), ms: performance.now() - started };
    } catch (err) {
      const error = deadline.aborted ? `timed out after ${this.settings.timeoutMs} ms` : describe(err);
      return { queries: [], ms: performance.now() - started, error };
    }
  }
}

function describe(err: unknown): string {
  if (err instanceof OpenAI.APIError && err.status !== undefined) return `HTTP ${err.status}: ${err.message}`;
  if (err instanceof OpenAI.APIConnectionTimeoutError) return `timed out: ${err.message}`;
  if (err instanceof Error) return err.message;
  return String(err);
}

/** The configured rewriter, or undefined when `search.query_rewriter.url` is not set. */
export function queryRewriterFromConfig(search: NotaryConfig['search']): QueryRewriter | undefined {
  const cfg = search.query_rewriter;
  if (!cfg.url) return undefined;
  return new OpenAiQueryRewriter({
    url: cfg.url,
    model: cfg.model,
    ...(cfg.api_key ? { apiKey: cfg.api_key } : {}),
    timeoutMs: cfg.timeout_ms,
    maxQueries: cfg.max_queries,
    maxQueryLength: search.max_query_length,
  });
}

/** The same rewriter, reporting each failure through `log` (the search goes on without rewrites). */
export function logRewriterFailures(rewriter: QueryRewriter, log: (message: string) => void): QueryRewriter {
  return {
    model: rewriter.model,
    async rewrite(query, passages) {
      const outcome = await rewriter.rewrite(query, passages);
      if (outcome.error) log(`query rewriter (${rewriter.model}) failed after ${Math.round(outcome.ms)} ms, searched without it: ${outcome.error}`);
      return outcome;
    },
  };
}
