import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exchange, rawRequest, sendAndHangUp, startListeningApi, type ListeningApi } from './support/listening-api.js';

/**
 * Money under concurrency with callers that hang up: many calls at once with one Idempotency-Key, most of whose
 * callers close the connection before the answer. Charged at most once; nothing charged when no caller is left; the
 * key free again when nothing was charged. Raw sockets, a real server on 127.0.0.1.
 */

const CALLERS = 10;
const HANG_UP_MS = 300;

const status = (text: string): number => Number(text.split('\r\n')[0]?.split(' ')[1] ?? 0);
const bodyOf = (text: string): Record<string, unknown> => JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4) || '{}') as Record<string, unknown>;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('one Idempotency-Key, many callers, most of them gone', () => {
  let served: ListeningApi;
  const fetched = new Map<string, number>();
  const count = (url: string | undefined) => fetched.set(new URL(url ?? '/', 'http://x').pathname, (fetched.get(new URL(url ?? '/', 'http://x').pathname) ?? 0) + 1);

  beforeAll(async () => {
    served = await startListeningApi('idempotency-hangup', {
      // Takes 1.5 s: the callers that hang up after 300 ms are gone when it ends.
      '/slow': (req, res) => {
        count(req.url);
        setTimeout(() => {
          res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
          res.end(`<!doctype html><html><head><title>Slow page</title></head><body><article><h1>Slow page</h1><p>${'Words that make a page worth extracting, written slowly. '.repeat(6)}</p></article></body></html>`);
        }, 1500);
      },
      // Fails after 500 ms.
      '/broken': (req, res) => {
        count(req.url);
        setTimeout(() => {
          res.writeHead(500, { 'content-type': 'text/plain' });
          res.end('internal error');
        }, 500);
      },
    });
  });
  afterAll(async () => {
    await served?.close();
  });

  /** The tenant's debit rows in the ledger. */
  const debits = async (tenantId: string) => (await served.api.runtime.accounts.ledger(tenantId)).filter((row) => row.delta < 0).length;

  const extractCall = (key: string, idempotencyKey: string, url: string, close = true) =>
    rawRequest(
      'POST',
      '/v1/extract',
      [`Authorization: Bearer ${key}`, 'Content-Type: application/json', `Idempotency-Key: "${idempotencyKey}"`, ...(close ? ['Connection: close'] : [])],
      JSON.stringify({ url, mode: 'excerpt' }),
    );

  /** A patient caller: waits for its answer, and retries after a 409 idempotency_in_progress until it gets another. */
  async function patient(bytes: string): Promise<{ first: string; last: string; conflicts: number }> {
    const first = await exchange(served.port, bytes, 10_000);
    let last = first;
    let conflicts = 0;
    while (status(last) === 409 && bodyOf(last)['code'] === 'idempotency_in_progress' && conflicts < 30) {
      conflicts += 1;
      await sleep(300);
      last = await exchange(served.port, bytes, 10_000);
    }
    return { first, last, conflicts };
  }

  it('nine callers hang up, one waits: charged once, and the one that waited gets the answer', async () => {
    const { tenantId, key } = await served.tenantWithKey('mostly-gone');
    const url = `${served.upstream.origin}/slow?case=mostly-gone`;
    const bytes = extractCall(key, 'mostly-gone-1', url);
    const gone = Array.from({ length: CALLERS - 1 }, () => sendAndHangUp(served.port, bytes, HANG_UP_MS));
    await sleep(50);
    const waited = await patient(bytes);
    await Promise.all(gone);
    expect(status(waited.last), waited.last).toBe(200);
    expect(bodyOf(waited.last)['credits_used']).toBe(1);
    // Either it held the key itself (200 at once) or it was told 409 while a caller that hung up held it.
    if (waited.conflicts > 0) expect(bodyOf(waited.first)['code']).toBe('idempotency_in_progress');
    await sleep(2000); // every call that began has ended
    expect(await served.api.runtime.accounts.balance(tenantId)).toBe(99);
    expect(await debits(tenantId)).toBe(1);
    // A retry gets the stored answer, not a second charge.
    const replay = await exchange(served.port, bytes, 10_000);
    expect(status(replay), replay).toBe(200);
    expect(replay).toMatch(/\r\nidempotency-replayed: true\r\n/i);
    expect(bodyOf(replay)).toEqual(bodyOf(waited.last));
    expect(await served.api.runtime.accounts.balance(tenantId)).toBe(99);
  });

  it('the waiting caller first, then nine that hang up: charged once, the nine told 409', async () => {
    const { tenantId, key } = await served.tenantWithKey('first-waits');
    const bytes = extractCall(key, 'first-waits-1', `${served.upstream.origin}/slow?case=first-waits`);
    const waited = exchange(served.port, bytes, 10_000);
    await sleep(100);
    const gone = await Promise.all(Array.from({ length: CALLERS - 1 }, () => sendAndHangUp(served.port, bytes, HANG_UP_MS)));
    for (const text of gone) expect(bodyOf(text)['code'], text).toBe('idempotency_in_progress');
    const answer = await waited;
    expect(status(answer), answer).toBe(200);
    expect(await served.api.runtime.accounts.balance(tenantId)).toBe(99);
  });

  it('every caller hangs up: nothing charged, and the key is free afterwards', async () => {
    const { tenantId, key } = await served.tenantWithKey('all-gone');
    const url = `${served.upstream.origin}/slow?case=all-gone`;
    const bytes = extractCall(key, 'all-gone-1', url);
    const before = fetched.get('/slow') ?? 0;
    await Promise.all(Array.from({ length: CALLERS }, () => sendAndHangUp(served.port, bytes, HANG_UP_MS)));
    await sleep(2500);
    // One of them held the key and did the work; the others were refused with 409 (nobody heard it).
    expect(fetched.get('/slow')).toBe(before + 1);
    expect(await served.api.runtime.accounts.balance(tenantId)).toBe(100);
    expect(await debits(tenantId)).toBe(0);
    // The key is free: the same call runs again (not a replay; the page may come from the extraction cache) and is
    // charged once.
    const again = await exchange(served.port, bytes, 10_000);
    expect(status(again), again).toBe(200);
    expect(again).not.toMatch(/idempotency-replayed/i);
    expect(await served.api.runtime.accounts.balance(tenantId)).toBe(99);
    expect(await debits(tenantId)).toBe(1);
  });

  it('the work fails for every caller at once: nothing charged, the key free afterwards', async () => {
    const { tenantId, key } = await served.tenantWithKey('all-fail');
    const url = `${served.upstream.origin}/broken?case=all-fail`;
    const bytes = extractCall(key, 'all-fail-1', url);
    const before = fetched.get('/broken') ?? 0;
    const answers = await Promise.all([
      ...Array.from({ length: CALLERS / 2 }, () => patient(bytes)),
      ...Array.from({ length: CALLERS / 2 }, () => sendAndHangUp(served.port, bytes, HANG_UP_MS).then((text) => ({ first: text, last: text, conflicts: 0 }))),
    ]);
    for (const { last } of answers.slice(0, CALLERS / 2)) {
      expect(status(last), last).toBeGreaterThanOrEqual(400);
      expect(bodyOf(last)['code'], last).not.toBe('idempotency_in_progress');
    }
    await sleep(1000);
    expect(await served.api.runtime.accounts.balance(tenantId)).toBe(100);
    // A failed call keeps nothing under its key: each patient retry ran the work again.
    const ranBefore = fetched.get('/broken') ?? 0;
    expect(ranBefore).toBeGreaterThan(before);
    const again = await exchange(served.port, bytes, 10_000);
    expect(status(again), again).toBeGreaterThanOrEqual(400);
    expect(fetched.get('/broken')).toBe(ranBefore + 1);
    expect(await served.api.runtime.accounts.balance(tenantId)).toBe(100);
    expect(await debits(tenantId)).toBe(0);
  });
});
