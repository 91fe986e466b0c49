import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { NotaryClient, RateLimitError, ServerError, apiKey, mpp, randomSeed, retryAfterMs, sha256Digest } from '../src/index.js';

/** Retry behaviour against a real HTTP server on 127.0.0.1 that answers from a script of responses. */
const KEY = 'sk_live_000000000000000000000000000000002wjyrI';
let server: Server | undefined;
afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

type Scripted = { status: number; headers?: Record<string, string>; body: unknown };

async function scripted(responses: Scripted[]): Promise<{ url: string; seen: IncomingHttpHeaders[] }> {
  const seen: IncomingHttpHeaders[] = [];
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      seen.push(req.headers);
      const next = responses[Math.min(seen.length - 1, responses.length - 1)] as Scripted;
      const problem = next.status >= 400;
      res.writeHead(next.status, { 'content-type': problem ? 'application/problem+json' : 'application/json', 'x-request-id': `req_test${seen.length}xxxxx`, ...next.headers });
      res.end(JSON.stringify(next.body));
    });
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server?.address() as AddressInfo).port}`, seen };
}

const ok = { status: 200, body: { query: 'q', depth: 1, results: [], credits_used: 1, rate_limit: { limit: 10, remaining: 9, reset_ms: 100 } } };
const problem = (status: number, code: string, retryable: boolean) => ({ type: 't', title: 't', status, detail: code, code, request_id: 'req_problem1', retryable });

describe('retries', () => {
  it('honours Retry-After on 503 and 429 and sends the same Idempotency-Key on every attempt', async () => {
    const { url, seen } = await scripted([
      { status: 503, headers: { 'retry-after': '2' }, body: problem(503, 'service_unavailable', true) },
      { status: 429, headers: { 'retry-after': '1' }, body: problem(429, 'rate_limited', true) },
      ok,
    ]);
    const waits: number[] = [];
    const client = new NotaryClient({ baseUrl: url, payment: apiKey(KEY), sleep: async (ms) => void waits.push(ms) });
    const result = await client.search({ query: 'q' });
    expect(result.attempts).toBe(3);
    expect(waits[0]).toBeGreaterThanOrEqual(2000);
    expect(waits[0]).toBeLessThanOrEqual(2200);
    expect(waits[1]).toBeGreaterThanOrEqual(1000);
    expect(waits[1]).toBeLessThanOrEqual(1100);
    const keys = new Set(seen.map((h) => h['idempotency-key']));
    expect(keys.size).toBe(1);
    expect([...keys][0]).toBe(`"${result.idempotencyKey}"`);
    expect(seen.every((h) => h['authorization'] === `Bearer ${KEY}`)).toBe(true);
  });

  it('gives up after maxRetries with the typed error, and never waits for a Retry-After above maxRetryDelayMs', async () => {
    const { url, seen } = await scripted([{ status: 429, headers: { 'retry-after': '1' }, body: problem(429, 'rate_limited', true) }]);
    const client = new NotaryClient({ baseUrl: url, payment: apiKey(KEY), maxRetries: 2, sleep: async () => {} });
    const error = await client.search({ query: 'q' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitError);
    expect(seen).toHaveLength(3);
    const patient = new NotaryClient({ baseUrl: url, payment: apiKey(KEY), maxRetryDelayMs: 500, sleep: async () => {} });
    await expect(patient.search({ query: 'q' })).rejects.toBeInstanceOf(RateLimitError);
    expect(seen).toHaveLength(4);
  });

  it('does not retry what is not retryable (a 500 answers once), and backs off with jitter without Retry-After', async () => {
    const { url, seen } = await scripted([{ status: 500, body: problem(500, 'internal_error', true) }]);
    const client = new NotaryClient({ baseUrl: url, payment: apiKey(KEY), sleep: async () => {} });
    await expect(client.search({ query: 'q' })).rejects.toBeInstanceOf(ServerError);
    expect(seen).toHaveLength(1);
  });

  it('an MPP crawl-job read signs a fresh envelope per attempt: 0 credits, bound to the GET, the full URL and the empty body', async () => {
    const job = { id: 'crawl_x', status: 'queued' };
    const { url, seen } = await scripted([{ status: 503, headers: { 'retry-after': '0' }, body: problem(503, 'service_unavailable', true) }, { status: 200, body: job }]);
    const parties = [{ party: 'alice', share: '1', privateKey: randomSeed() }];
    const client = new NotaryClient({ baseUrl: url, payment: mpp(parties, { maxCredits: 5 }), sleep: async () => {} });
    expect(await client.crawlJob('crawl_x')).toEqual(job);
    const envelopes = seen.map((h) => {
      const [scheme, value = ''] = (h['authorization'] ?? '').split(' envelope=');
      expect(scheme).toBe('MPP');
      return JSON.parse(Buffer.from(value, 'base64url').toString('utf8')) as Record<string, unknown>;
    });
    expect(envelopes).toHaveLength(2);
    for (const e of envelopes) {
      expect(e).toMatchObject({ htm: 'GET', htu: `${url}/v1/crawl/crawl_x`, total_credits: 0, body_digest: await sha256Digest(new Uint8Array()) });
    }
    expect(envelopes[0]?.['nonce']).not.toBe(envelopes[1]?.['nonce']);
    expect(seen.every((h) => h['idempotency-key'] === undefined)).toBe(true);
    await client.cancelCrawl('crawl_x');
    await client.crawlJobs('crawl_y');
    const [cancel, list] = seen.slice(2).map((h) => JSON.parse(Buffer.from((h['authorization'] ?? '').split('=')[1] ?? '', 'base64url').toString('utf8')) as Record<string, unknown>);
    expect(cancel).toMatchObject({ htm: 'DELETE', htu: `${url}/v1/crawl/crawl_x`, total_credits: 0 });
    expect(list).toMatchObject({ htm: 'GET', htu: `${url}/v1/crawl?cursor=crawl_y`, total_credits: 0 });
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    expect(retryAfterMs('3')).toBe(3000);
    expect(retryAfterMs(new Date(Date.parse('2030-01-01T00:00:10Z')).toUTCString(), Date.parse('2030-01-01T00:00:00Z'))).toBe(10_000);
    expect(retryAfterMs('soon')).toBeNull();
    expect(retryAfterMs(null)).toBeNull();
  });
});
