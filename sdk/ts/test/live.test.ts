import { privateKeyToAccount } from 'viem/accounts';
import { describe, expect, it } from 'vitest';
import {
  AuthenticationError,
  BadRequestError,
  ConflictError,
  ConnectionError,
  NotaryClient,
  NotFoundError,
  PaymentRequiredError,
  PermissionDeniedError,
  RateLimitError,
  TimeoutError,
  UnprocessableError,
  apiKey,
  fromHex,
  mpp,
  receiptPayer,
  walletPayer,
  x402,
  type NotaryReceipt,
} from '../src/index.js';

/**
 * The integration suite against a live `notary serve` (test/sdk-conformance.test.ts starts it and passes NOTARY_LIVE_*).
 * The Python and Go libraries run the same cases.
 */
const env = process.env;
const url = env['NOTARY_LIVE_URL'];
if (!url && env['CI'] === 'true') throw new Error('NOTARY_LIVE_URL is not set and CI=true: run through test/sdk-conformance.test.ts');
const live = (name: string) => {
  const value = env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};

describe.runIf(url)('TypeScript library against a live server', () => {
  const client = () => new NotaryClient({ baseUrl: url, payment: apiKey(live('NOTARY_LIVE_KEY')), retryBaseDelayMs: 50 });

  it('API key: search and extract, with the request id, credits and raw response on every result', async () => {
    const result = await client().search({ query: 'vacuum dead tuples', depth: 1 });
    expect(result.results[0]?.url).toBe('https://docs.test/vacuum');
    expect(result.creditsUsed).toBe(1);
    expect(result.requestId).toMatch(/^req_/);
    expect(result.raw.status).toBe(200);
    expect(result.raw.headers.get('ratelimit-policy')).toContain('bulk');
    expect(JSON.parse(result.raw.body)).toEqual(JSON.parse(JSON.stringify(result)));
    const deep = await client().search({ query: 'vacuum dead tuples', depth: 2 });
    expect(deep.creditsUsed).toBe(2);
    expect((await client().search({ query: 'vacuum', language: 'en' })).creditsUsed).toBe(1);
    const page = await client().extract({ url: live('NOTARY_LIVE_PAGE_URL'), mode: 'markdown' });
    expect(page.title).toBe('Routine vacuuming');
    expect(page.content).toContain('Autovacuum reclaims');
    expect(page.creditsUsed).toBe(1);
  });

  it('crawl jobs and map: a job submitted (202, quote held), read, listed and cancelled; a map page charged 1 credit', async () => {
    // A seed that answers 404: the service's crawl worker may take the job before the cancel, and a crawled page
    // would join the index the other libraries' suites search.
    const job = await client().crawl({ url: live('NOTARY_LIVE_MISSING_URL'), max_pages: 2, max_depth: 0 });
    expect(job.id).toMatch(/^crawl_/);
    expect(job.raw.status).toBe(202);
    expect(job.status).toBe('queued');
    expect(job.credits_quoted).toBeGreaterThan(0);
    expect(job.creditsUsed).toBe(0);
    const read = await client().crawlJob(job.id);
    expect(read.id).toBe(job.id);
    expect(['queued', 'running', 'completed', 'failed']).toContain(read.status);
    expect((await client().crawlJobs()).jobs.map((j) => j.id)).toContain(job.id);
    const cancelled = await client().cancelCrawl(job.id);
    expect(['cancelled', 'completed', 'failed']).toContain(cancelled.status);
    await expect(client().crawlJob('crawl_nope')).rejects.toBeInstanceOf(NotFoundError);
    await expect(client().crawl({ url: 'http://169.254.169.254/latest/' })).rejects.toBeInstanceOf(PermissionDeniedError);
    const site = new URL(live('NOTARY_LIVE_PAGE_URL')).origin;
    const map = await client().map({ url: `${site}/`, sitemaps: false, limit: 5 });
    expect(map.creditsUsed).toBe(1);
    expect(Array.isArray(map.urls)).toBe(true);
    expect(map.url).toBe(`${site}/`);
  });

  it('extractBatch: one page or problem per URL in order, charged for the pages extracted; replayed under one Idempotency-Key', async () => {
    const urls = [live('NOTARY_LIVE_PAGE_URL'), live('NOTARY_LIVE_MISSING_URL'), live('NOTARY_LIVE_EMPTY_URL'), live('NOTARY_LIVE_FORBIDDEN_URL')];
    const batch = await client().extractBatch({ urls, mode: 'text' }, { idempotencyKey: 'ts-batch-1' });
    expect(batch.results.map((item) => item.url)).toEqual(urls);
    const [page, ...failed] = batch.results;
    if (!page?.ok) throw new Error('the page was not extracted');
    expect(page.title).toBe('Routine vacuuming');
    expect(page.content).toContain('Autovacuum reclaims');
    expect(failed.map((item) => (item.ok ? 'ok' : item.problem.code))).toEqual(['upstream_not_found', 'empty_content', 'robots_disallowed']);
    expect(batch.creditsUsed).toBe(1);
    const again = await client().extractBatch({ urls, mode: 'text' }, { idempotencyKey: 'ts-batch-1' });
    expect(again.replayed).toBe(true);
    expect(again.raw.body).toBe(batch.raw.body);
    const refused = await client().extractBatch({ urls: [urls[0] ?? '', urls[0] ?? ''] }).then(() => null, (e: unknown) => e);
    expect(refused).toBeInstanceOf(UnprocessableError);
    expect((refused as UnprocessableError).code).toBe('invalid_batch');
  });

  it('Idempotency-Key: sent on every paid call; a repeat is replayed, not charged again; another body is refused', async () => {
    const first = await client().search({ query: 'analyze statistics' }, { idempotencyKey: 'ts-idem-1' });
    expect(first.idempotencyKey).toBe('ts-idem-1');
    const again = await client().search({ query: 'analyze statistics' }, { idempotencyKey: 'ts-idem-1' });
    expect(again.replayed).toBe(true);
    expect(again.raw.body).toBe(first.raw.body);
    const other = await client().search({ query: 'something else' }, { idempotencyKey: 'ts-idem-1' }).catch((e: unknown) => e);
    expect(other).toBeInstanceOf(ConflictError);
    expect((other as ConflictError).code).toBe('idempotency_key_reused');
    const fresh = await client().search({ query: 'analyze statistics' });
    expect(fresh.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
    expect(fresh.replayed).toBe(false);
  });

  it('signed receipts verify offline, and the receipt is in the log under a verified checkpoint', async () => {
    const c = new NotaryClient({ baseUrl: url, payment: apiKey(live('NOTARY_LIVE_KEY')), sign: true });
    const result = await c.search({ query: 'indexes performance', depth: 1 });
    expect(result.notary_receipt?.claim).toBe('search_call_consumed');
    expect(result.facts).toEqual(result.results);
    const verification = await c.verifyReceipt(result);
    expect(verification.checks.filter((x) => !x.ok)).toEqual([]);
    expect(verification.valid).toBe(true);
    const tampered = { ...result, raw: { ...result.raw, body: result.raw.body.replace('"credits_used":1', '"credits_used":0') } };
    expect((await c.verifyReceipt(tampered)).valid).toBe(false);
    const before = await c.log.checkpoint();
    const inLog = await c.log.verifyInclusion(result.notary_receipt as NotaryReceipt);
    expect(inLog.included).toBe(true);
    await c.search({ query: 'autovacuum', depth: 1 });
    const after = await c.log.checkpoint();
    expect(after.size).toBeGreaterThan(before.size);
    expect(await c.log.verifyConsistency(before, after)).toBe(true);
  });

  it('search options: max_results, domains, dates and highlights, typed, free', async () => {
    const two = await client().search({ query: 'vacuum tables', max_results: 2 });
    expect(two.results).toHaveLength(2);
    expect(two.creditsUsed).toBe(1);
    expect(two.results[0]?.highlights).toBeUndefined();
    expect((await client().search({ query: 'vacuum', include_domains: ['docs.test'] })).results.length).toBeGreaterThan(0);
    expect((await client().search({ query: 'vacuum', exclude_domains: ['*.test'] })).results).toEqual([]);
    // The live index's pages have no publication date: kept by default, left out on request.
    expect((await client().search({ query: 'vacuum', start_date: '2020-01-01' })).results.length).toBeGreaterThan(0);
    expect((await client().search({ query: 'vacuum', start_date: '2020-01-01', end_date: '2020-12-31', undated: 'exclude' })).results).toEqual([]);
    const lit = await client().search({ query: 'vacuum', highlights: { count: 1, max_chars: 80 } });
    const first = lit.results[0]?.highlights?.[0];
    expect(first?.text).toContain('vacuum');
    expect(first?.score).toBeGreaterThan(0);
    const bad = await client().search({ query: 'vacuum', include_domains: ['https://docs.test/'] }).then(() => null, (e: unknown) => e);
    expect(bad).toBeInstanceOf(BadRequestError);
    expect((bad as BadRequestError).code).toBe('invalid_request');
    const range = await client().search({ query: 'vacuum', start_date: '2021-02-01', end_date: '2021-01-01' }).then(() => null, (e: unknown) => e);
    expect(range).toBeInstanceOf(UnprocessableError);
    expect((range as UnprocessableError).code).toBe('invalid_date_range');
  });

  it('collection: "default" is the index searched without it; an unknown one is NotFoundError collection_not_found', async () => {
    const plain = await client().search({ query: 'vacuum dead tuples' });
    const inDefault = await client().search({ query: 'vacuum dead tuples', collection: 'default' });
    expect(inDefault.results.map((r) => r.url)).toEqual(plain.results.map((r) => r.url));
    expect(inDefault.creditsUsed).toBe(1);
    const missing = await client().search({ query: 'vacuum', collection: 'no-such-collection' }).then(() => null, (e: unknown) => e);
    expect(missing).toBeInstanceOf(NotFoundError);
    expect((missing as NotFoundError).code).toBe('collection_not_found');
    expect((missing as NotFoundError).problem?.['collection']).toBe('no-such-collection');
    const page = await client().extract({ url: live('NOTARY_LIVE_PAGE_URL'), mode: 'text', collection: 'default' });
    expect(page.title).toBe('Routine vacuuming');
    const refused = await client().extract({ url: live('NOTARY_LIVE_PAGE_URL'), collection: 'no-such-collection' }).then(() => null, (e: unknown) => e);
    expect((refused as NotFoundError).code).toBe('collection_not_found');
    const batch = await client().extractBatch({ urls: [live('NOTARY_LIVE_PAGE_URL')], collection: 'no-such-collection' }).then(() => null, (e: unknown) => e);
    expect((batch as NotFoundError).code).toBe('collection_not_found');
    // A key limited to another collection may not read "default".
    const limited = new NotaryClient({ baseUrl: url, payment: apiKey(live('NOTARY_LIVE_LIMITED_KEY')) });
    const forbidden = await limited.search({ query: 'vacuum', collection: 'default' }).then(() => null, (e: unknown) => e);
    expect(forbidden).toBeInstanceOf(PermissionDeniedError);
    expect((forbidden as PermissionDeniedError).code).toBe('collection_forbidden');
  });

  it('include_comments: the reader comments after the article are in the content only when asked', async () => {
    const article = await client().extract({ url: live('NOTARY_LIVE_COMMENTS_URL'), mode: 'text' });
    expect(article.content).toContain('every Saturday');
    expect(article.content).not.toContain('number 17');
    const withComments = await client().extract({ url: live('NOTARY_LIVE_COMMENTS_URL'), mode: 'text', include_comments: true });
    expect(withComments.content).toContain('number 17');
  });

  it('include: ["published_date"] adds the publication date where it is known, and only when asked', async () => {
    const dated = await client().search({ query: 'tablespaces', include: ['published_date'] });
    expect(dated.results[0]?.url).toBe('https://docs.test/tablespaces');
    const date: string | undefined = dated.results[0]?.published_date;
    expect(date).toBe('2024-05-01T00:00:00.000Z');
    expect(dated.creditsUsed).toBe(1);
    const undated = await client().search({ query: 'vacuum', include: ['published_date'] });
    expect(undated.results.length).toBeGreaterThan(0);
    for (const r of undated.results) expect(r).not.toHaveProperty('published_date');
    const plain = await client().search({ query: 'tablespaces' });
    expect(Object.keys(plain.results[0] ?? {}).sort()).toEqual(['rerank_score', 'snippet', 'title', 'url']);
    const bad = await client().search({ query: 'tablespaces', include: ['modified_date' as 'published_date'] }).then(() => null, (e: unknown) => e);
    expect(bad).toBeInstanceOf(BadRequestError);
    expect((bad as BadRequestError).code).toBe('invalid_request');
  });

  it('every error class, typed from the problem code', async () => {
    const fail = (p: Promise<unknown>) => p.then(() => null, (e: unknown) => e);
    const bad = await fail(client().search({ query: 'x', depth: 9 }));
    expect(bad).toBeInstanceOf(BadRequestError);
    expect((bad as BadRequestError).code).toBe('depth_out_of_range');
    expect((bad as BadRequestError).requestId).toMatch(/^req_/);
    const revoked = await fail(new NotaryClient({ baseUrl: url, payment: apiKey(live('NOTARY_LIVE_REVOKED_KEY')) }).search({ query: 'vacuum' }));
    expect(revoked).toBeInstanceOf(AuthenticationError);
    expect((revoked as AuthenticationError).code).toBe('revoked_api_key');
    const anonymous = await fail(new NotaryClient({ baseUrl: url }).search({ query: 'vacuum' }));
    // With x402 enabled, a call without credentials is a 402 carrying the price and every mode's challenge.
    expect(anonymous).toBeInstanceOf(PaymentRequiredError);
    expect((anonymous as PaymentRequiredError).code).toBe('payment_required');
    expect((anonymous as PaymentRequiredError).price).toEqual({ credits: 1, amount: '0.001', asset: 'USDC' });
    const poor = await fail(new NotaryClient({ baseUrl: url, payment: apiKey(live('NOTARY_LIVE_POOR_KEY')) }).search({ query: 'vacuum' }));
    expect(poor).toBeInstanceOf(PaymentRequiredError);
    expect((poor as PaymentRequiredError).code).toBe('insufficient_credits');
    const forbidden = await fail(client().extract({ url: live('NOTARY_LIVE_FORBIDDEN_URL') }));
    expect(forbidden).toBeInstanceOf(PermissionDeniedError);
    expect((forbidden as PermissionDeniedError).code).toBe('robots_disallowed');
    const notFound = await fail(client().getJson('/v1/nothing-here'));
    expect(notFound).toBeInstanceOf(NotFoundError);
    const empty = await fail(client().extract({ url: live('NOTARY_LIVE_EMPTY_URL') }));
    expect(empty).toBeInstanceOf(UnprocessableError);
    expect((empty as UnprocessableError).code).toBe('empty_content');
    // A page the upstream does not have is the caller's to fix: 422 upstream_not_found, not retried.
    const missing = await fail(client().extract({ url: live('NOTARY_LIVE_MISSING_URL') }));
    expect(missing).toBeInstanceOf(UnprocessableError);
    expect((missing as UnprocessableError).code).toBe('upstream_not_found');
    expect((missing as UnprocessableError).retryable).toBe(false);
    const closed = await fail(new NotaryClient({ baseUrl: live('NOTARY_LIVE_CLOSED_URL'), maxRetries: 1, retryBaseDelayMs: 10 }).search({ query: 'vacuum' }));
    expect(closed).toBeInstanceOf(ConnectionError);
    const slow = await fail(new NotaryClient({ baseUrl: live('NOTARY_LIVE_SILENT_URL'), payment: apiKey(live('NOTARY_LIVE_KEY')), timeoutMs: 300, maxRetries: 1, retryBaseDelayMs: 10 }).search({ query: 'vacuum' }));
    expect(slow).toBeInstanceOf(TimeoutError);
  });

  it('retries a 429 after Retry-After and succeeds; without retries the RateLimitError says how long to wait', async () => {
    const tiny = (maxRetries: number) => new NotaryClient({ baseUrl: url, payment: apiKey(live('NOTARY_LIVE_TINY_KEY')), maxRetries });
    // Drain the tier's burst of 2 until the service refuses.
    let refused: unknown = null;
    for (let i = 0; i < 5 && !refused; i++) refused = await tiny(0).search({ query: 'vacuum' }).then(() => null, (e: unknown) => e);
    expect(refused).toBeInstanceOf(RateLimitError);
    expect((refused as RateLimitError).retryAfterMs).toBeGreaterThanOrEqual(1000);
    const result = await tiny(3).search({ query: 'vacuum' });
    expect(result.attempts).toBeGreaterThan(1);
    expect(result.creditsUsed).toBe(1);
  });

  it('x402 on the local chain: the standard flow (PAYMENT-SIGNATURE) and the interface flow (X-402-Receipt), paid automatically', async () => {
    const wallet = privateKeyToAccount(live('NOTARY_LIVE_X402_KEY_TS') as `0x${string}`);
    const standard = new NotaryClient({ baseUrl: url, payment: x402(walletPayer(wallet, { maxAmountPerCall: 10_000 })) });
    const paid = await standard.search({ query: 'vacuum dead tuples', depth: 1 });
    expect(paid.creditsUsed).toBe(1);
    expect(paid.attempts).toBe(2);
    expect(paid.facts).toEqual(paid.results);
    const settlement = JSON.parse(atob(paid.raw.headers.get('payment-response') ?? '')) as { success: boolean; transaction: string; payer: string };
    expect(settlement.success).toBe(true);
    expect(settlement.payer.toLowerCase()).toBe(wallet.address.toLowerCase());
    const viaReceipt = new NotaryClient({ baseUrl: url, payment: x402(receiptPayer(wallet, { maxAmountPerCall: 10_000, facilitatorUrl: live('NOTARY_LIVE_FACILITATOR_URL') })) });
    const deep = await viaReceipt.search({ query: 'vacuum dead tuples', depth: 2 });
    expect(deep.creditsUsed).toBe(2);
    expect(deep.results[0]?.url).toBe('https://docs.test/vacuum');
    // The wallet's cap holds: a call dearer than it is refused before anything is signed.
    const capped = new NotaryClient({ baseUrl: url, payment: x402(walletPayer(wallet, { maxAmountPerCall: 1 })) });
    await expect(capped.search({ query: 'vacuum' })).rejects.toThrow(/pays at most 1 per call/);
  });

  // The world registers two parties and passes their names, shares and private keys.
  const mppParties = () =>
    live('NOTARY_LIVE_MPP_PARTIES')
      .split(',')
      .map((entry) => {
        const [party = '', rest = ''] = entry.split('=');
        const [share = '', seed = ''] = rest.split(':');
        return { party, share, privateKey: fromHex(seed) };
      });

  it('MPP: each party signs every call, the receipts split the price, retries re-sign under one Idempotency-Key', async () => {
    const parties = mppParties();
    const shared = new NotaryClient({ baseUrl: url, payment: mpp(parties), sign: true });
    const result = await shared.search({ query: 'vacuum dead tuples', depth: 2 }, { idempotencyKey: 'ts-mpp-1' });
    expect(result.creditsUsed).toBe(2);
    expect(result.attempts).toBe(2); // the quote, then the signed envelope
    expect(result.receipts).toEqual(parties.map((p) => ({ party: p.party, credits: 1, share: '0.5' })));
    expect((await shared.verifyReceipt(result)).valid).toBe(true);
    const again = await new NotaryClient({ baseUrl: url, payment: mpp(parties, { maxCredits: 2 }) }).search({ query: 'vacuum dead tuples', depth: 2 }, { idempotencyKey: 'ts-mpp-1' });
    expect(again.attempts).toBe(1);
    expect(again.replayed).toBe(true);
    // A batch: the envelope covers every URL, the parties share the charge of the pages extracted.
    const batch = await shared.extractBatch({ urls: [live('NOTARY_LIVE_PAGE_URL'), live('NOTARY_LIVE_MISSING_URL')] });
    expect(batch.results.map((item) => item.ok)).toEqual([true, false]);
    expect(batch.creditsUsed).toBe(1);
    expect(batch.receipts?.reduce((sum, r) => sum + r.credits, 0)).toBe(1);
    expect((await shared.verifyReceipt(batch)).valid).toBe(true);
  });

  it('MPP: the parties read, list and cancel the crawl job they ordered; another party set does not see it; x402 is refused', async () => {
    const parties = mppParties();
    const both = new NotaryClient({ baseUrl: url, payment: mpp(parties), retryBaseDelayMs: 50 });
    // A seed that answers 404: the service's crawl worker may take the job at once, and it must store nothing that
    // the other suites' searches would then find.
    const job = await both.crawl({ url: live('NOTARY_LIVE_MISSING_URL'), max_pages: 2, max_depth: 0 });
    expect(job.raw.status).toBe(202);
    expect(job.attempts).toBe(2); // the quote, then the signed envelope
    const read = await both.crawlJob(job.id);
    expect(read).toMatchObject({ id: job.id, max_pages: 2 });
    expect(['queued', 'running', 'completed', 'failed']).toContain(read.status);
    // The payer is the set of the parties: listed the other way round, they are the same payer.
    const reversed = new NotaryClient({ baseUrl: url, payment: mpp([...parties].reverse()) });
    expect((await reversed.crawlJobs()).jobs.map((j) => j.id)).toContain(job.id);
    expect((await both.crawlJobs()).jobs.map((j) => j.id)).toContain(job.id);
    const [first] = parties;
    const alone = new NotaryClient({ baseUrl: url, payment: mpp([{ ...(first as (typeof parties)[number]), share: '1' }]) });
    // One call at a time: a second call made before the first is awaited may reject while nothing awaits it yet.
    for (const call of [() => alone.crawlJob(job.id), () => alone.cancelCrawl(job.id)]) {
      await expect(call()).rejects.toMatchObject({ status: 404, code: 'crawl_job_not_found' });
    }
    expect((await alone.crawlJobs()).jobs.map((j) => j.id)).not.toContain(job.id);
    expect((await both.crawlJob(job.id)).status).not.toBe('cancelled');
    const cancelled = await reversed.cancelCrawl(job.id);
    expect(['cancelled', 'completed', 'failed']).toContain(cancelled.status);
    expect((await both.crawlJob(job.id, { payment: mpp(parties) })).status).toBe(cancelled.status);
    const wallet = privateKeyToAccount(live('NOTARY_LIVE_X402_KEY_TS') as `0x${string}`);
    const byX402 = new NotaryClient({ baseUrl: url, payment: x402(walletPayer(wallet, { maxAmountPerCall: 1 })) });
    await expect(byX402.crawlJob(job.id)).rejects.toThrow(/apiKey\(\.\.\.\) or mpp\(.*x402 payers cannot order crawl jobs/);
  });
});
