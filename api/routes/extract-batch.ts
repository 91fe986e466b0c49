import type { NotaryConfig } from '../../core/index.js';
import { isNotaryError, NotaryError } from '../../core/index.js';
import { HostGate } from '../../crawler/index.js';
import { extractUrl, type ExtractDeps, type ExtractRequest, type ExtractResult } from '../../extract/index.js';
import { problemBody, type ProblemBody } from '../problem.js';

/** Most URLs one call may name. */
export const MAX_BATCH_URLS = 20;

type PageResult = Omit<ExtractResult, 'rendered' | 'url'>;

/** One entry of a batch answer, in the order of the request's `urls`. */
export type BatchItem = ({ url: string; ok: true } & PageResult) | { url: string; ok: false; problem: ProblemBody };

export interface BatchResult {
  results: BatchItem[];
}

export interface BatchLimits {
  /** URLs of the batch fetched at once (extract.batch_concurrency). */
  concurrency: number;
  /** At once to one host (crawler.per_host_concurrency). */
  perHost: number;
  /** Between two request starts to one host (crawler.per_host_delay_ms). */
  perHostDelayMs: number;
  /** The whole batch (extract.batch_timeout_ms). */
  timeoutMs: number;
}

export function batchLimits(config: NotaryConfig): BatchLimits {
  return {
    concurrency: config.extract.batch_concurrency,
    perHost: config.crawler.per_host_concurrency,
    perHostDelayMs: config.crawler.per_host_delay_ms,
    timeoutMs: config.extract.batch_timeout_ms,
  };
}

/**
 * Two URLs that name the same page once parsed (`HTTP://A.org` and `http://a.org/`): the batch refuses them, as it
 * refuses the same string twice, since a caller would pay twice for one page.
 */
export function duplicateUrls(urls: readonly string[]): [number, number] | null {
  const seen = new Map<string, number>();
  for (const [i, url] of urls.entries()) {
    const key = URL.canParse(url) ? new URL(url).href : url;
    const first = seen.get(key);
    if (first !== undefined) return [first, i];
    seen.set(key, i);
  }
  return null;
}

function hostKey(url: string): string {
  return URL.canParse(url) ? new URL(url).host.toLowerCase() : '';
}

/**
 * Extracts every URL of a batch: at most `concurrency` at once, each host within the crawler's politeness (its
 * concurrency and the spacing of request starts), the whole within `timeoutMs`. A URL that fails, or that the time
 * limit cut off, is answered by its own problem; the others are unaffected. Order is the request's.
 */
export async function extractBatch(
  urls: readonly string[],
  options: Omit<ExtractRequest, 'url'>,
  deps: ExtractDeps,
  limits: BatchLimits,
  requestId: string,
): Promise<BatchResult> {
  const controller = new AbortController();
  const signal = controller.signal;
  const gate = new HostGate(limits.perHost, limits.perHostDelayMs);
  const outOfTime = new NotaryError(
    'upstream_timeout',
    `The batch ran out of time (extract.batch_timeout_ms = ${limits.timeoutMs} ms) before this URL was extracted; nothing is charged for it`,
    { phase: 'batch' },
  );
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      controller.abort(outOfTime);
      reject(outOfTime);
    }, limits.timeoutMs);
  });
  // A rejection nobody awaits (every URL finished first) must not surface as unhandled.
  deadline.catch(() => undefined);

  const one = async (url: string): Promise<PageResult> => {
    const release = await gate.acquire(hostKey(url), signal);
    try {
      if (signal.aborted) throw outOfTime;
      const { rendered: _rendered, url: _fetched, ...page } = await extractUrl({ ...options, url }, { ...deps, signal });
      return page;
    } finally {
      release();
    }
  };

  const results: BatchItem[] = new Array<BatchItem>(urls.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    for (;;) {
      const index = next++;
      const url = urls[index];
      if (url === undefined) return;
      if (signal.aborted) {
        results[index] = { url, ok: false, problem: problemBody(outOfTime, requestId) };
        continue;
      }
      try {
        const page = await Promise.race([one(url), deadline]);
        results[index] = { url, ok: true, ...page };
      } catch (err) {
        const problem = signal.aborted && !isNotaryError(err) ? outOfTime : isNotaryError(err) ? err : new NotaryError('internal_error');
        results[index] = { url, ok: false, problem: problemBody(problem, requestId) };
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(limits.concurrency, urls.length) }, () => worker()));
  } finally {
    clearTimeout(timer);
    controller.abort(outOfTime);
  }
  if (!results.some((item) => item.ok)) {
    throw new NotaryError('batch_failed', `None of the ${urls.length} URLs could be extracted; nothing was charged. Each URL's problem is in results`, { results });
  }
  return { results };
}

/** How many URLs of a batch answer were extracted: what the call is charged for. */
export function succeeded(result: BatchResult): number {
  return result.results.filter((item) => item.ok).length;
}
