import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../core/config.js';
import { isNotaryError } from '../core/errors.js';
import type { ResolvedAddress } from '../extract/fetch/address-policy.js';
import { migrateToLatest, openPostgres, openSqlite, type Storage } from '../storage/db.js';
import { createDatabase, startPostgres, type TestPostgres } from '../testkit/postgres.js';
import { registerWebhookMigrations } from './migrations.js';
import { WebhookOutbox, webhookSettingsOf, type WebhookSettings } from './outbox.js';

registerWebhookMigrations();

interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A webhook receiver on 127.0.0.1: answers each request with the next status of `answers` (200 when they run out); 0 never answers. */
async function receiver(answers: number[] = [], delayMs = 0): Promise<{ url: string; got: Received[]; close: () => Promise<void> }> {
  const got: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      got.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const status = answers.shift() ?? 200;
      if (status === 0) return; // stalled: never answers
      setTimeout(() => res.writeHead(status, { 'content-type': 'text/plain' }).end('ok'), delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    got,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const settings = (over: Partial<WebhookSettings> = {}): WebhookSettings => ({ timeoutMs: 5_000, maxAttempts: 8, allowPrivateNetworks: true, ...over });

let pgServer: TestPostgres | undefined;
const dir = mkdtempSync(path.join(tmpdir(), 'notary-webhooks-'));
beforeAll(async () => {
  pgServer = await startPostgres();
}, 120_000);
afterAll(() => {
  pgServer?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('webhook settings', () => {
  it('default to a 10 s attempt, 8 attempts, public addresses only; the environment sets them', () => {
    const dataDir = mkdtempSync(path.join(dir, 'cfg-'));
    expect(webhookSettingsOf(loadConfig({ env: { NOTARY_DATA_DIR: dataDir } }))).toEqual({ timeoutMs: 10_000, maxAttempts: 8, allowPrivateNetworks: false });
    const env = { NOTARY_DATA_DIR: dataDir, NOTARY_WEBHOOKS_TIMEOUT_MS: '2500', NOTARY_WEBHOOKS_MAX_ATTEMPTS: '3', NOTARY_WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true' };
    expect(webhookSettingsOf(loadConfig({ env }))).toEqual({ timeoutMs: 2_500, maxAttempts: 3, allowPrivateNetworks: true });
  });
});

/** Two handles on one database, as two processes have. */
const backends: Array<[string, () => Promise<[Storage, Storage]>]> = [
  [
    'sqlite',
    async () => {
      const file = path.join(dir, `hooks-${Date.now()}-${Math.floor(Math.random() * 1e6)}.sqlite`);
      return [openSqlite(file), openSqlite(file)];
    },
  ],
  [
    'postgres',
    async () => {
      const url = await createDatabase((pgServer as TestPostgres).url, `hooks_${Date.now()}_${Math.floor(Math.random() * 1e6)}`);
      return [openPostgres(url), openPostgres(url)];
    },
  ],
];

describe.each(backends)('webhook outbox on %s', (_name, open) => {
  // A new database for each test: a message one test leaves due never counts in another's deliverDue.
  let storage: Storage;
  let other: Storage;
  beforeEach(async () => {
    [storage, other] = await open();
    await migrateToLatest(storage);
  });
  afterEach(async () => {
    await storage.close();
    await other.close();
  });

  it('signs each message per Standard Webhooks: the receiver verifies it with the endpoint secret', async () => {
    const rx = await receiver();
    try {
      const outbox = new WebhookOutbox(storage.db, settings());
      const endpoint = await outbox.registerEndpoint({ url: rx.url, tenantId: 'ten_a' });
      expect(endpoint.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
      const { id } = await outbox.enqueue(endpoint, 'crawl.completed', { job: 'job_1', pages: 3 });
      expect(id).toMatch(/^msg_[0-9A-Za-z]{20}$/);
      expect(await outbox.deliverDue()).toEqual({ attempted: 1, delivered: 1, failed: 0, retrying: 0 });
      expect(rx.got).toHaveLength(1);
      const [req] = rx.got as [Received];
      const headers = { 'webhook-id': String(req.headers['webhook-id']), 'webhook-timestamp': String(req.headers['webhook-timestamp']), 'webhook-signature': String(req.headers['webhook-signature']) };
      expect(headers['webhook-id']).toBe(id);
      expect(new Webhook(endpoint.secret).verify(req.body, headers)).toMatchObject({ type: 'crawl.completed', data: { job: 'job_1', pages: 3 } });
      // Another secret, or a changed body, does not verify.
      const otherSecret = (await outbox.registerEndpoint({ url: rx.url })).secret;
      expect(() => new Webhook(otherSecret).verify(req.body, headers)).toThrow();
      expect(() => new Webhook(endpoint.secret).verify(req.body.replace('"pages":3', '"pages":4'), headers)).toThrow();
      const [delivery] = await outbox.listDeliveries({ tenantId: 'ten_a' });
      expect(delivery).toMatchObject({ id, state: 'delivered', lastStatus: 200, nextAttemptAt: null, attempts: [{ attempt: 1, status: 200, errorCode: null }] });
    } finally {
      await rx.close();
    }
  });

  it('retries after 500 and 503 on the schedule (5 s, then 5 min), with the same webhook-id, then delivers', async () => {
    const rx = await receiver([500, 503, 200]);
    try {
      let now = new Date('2026-11-27T10:00:00.000Z');
      const outbox = new WebhookOutbox(storage.db, settings(), { clock: () => now, random: () => 0.5 });
      const endpoint = await outbox.registerEndpoint({ url: rx.url, tenantId: 'ten_retry' });
      const { id } = await outbox.enqueue(endpoint, 'crawl.completed', { job: 'job_2' });
      expect(await outbox.deliverDue()).toMatchObject({ attempted: 1, retrying: 1 });
      let [delivery] = await outbox.listDeliveries({ endpointId: endpoint.id });
      const first = delivery?.attempts[0];
      expect(first).toMatchObject({ attempt: 1, status: 500, errorCode: 'upstream_error' });
      const due1 = now.getTime() + (first?.durationMs ?? 0) + 5_000;
      expect(delivery?.nextAttemptAt).toBe(new Date(due1).toISOString());

      now = new Date(due1 - 1);
      expect(await outbox.deliverDue()).toMatchObject({ attempted: 0 });
      now = new Date(due1);
      expect(await outbox.deliverDue()).toMatchObject({ attempted: 1, retrying: 1 });
      [delivery] = await outbox.listDeliveries({ endpointId: endpoint.id });
      const second = delivery?.attempts[1];
      expect(second).toMatchObject({ attempt: 2, status: 503 });
      const due2 = due1 + (second?.durationMs ?? 0) + 5 * 60_000;
      expect(delivery?.nextAttemptAt).toBe(new Date(due2).toISOString());

      now = new Date(due2);
      expect(await outbox.deliverDue()).toMatchObject({ attempted: 1, delivered: 1 });
      expect(rx.got.map((r) => r.headers['webhook-id'])).toEqual([id, id, id]);
      [delivery] = await outbox.listDeliveries({ endpointId: endpoint.id });
      expect(delivery).toMatchObject({ state: 'delivered', lastStatus: 200 });
      expect(delivery?.attempts.map((a) => a.status)).toEqual([500, 503, 200]);
    } finally {
      await rx.close();
    }
  });

  it('stops at webhooks.max_attempts', async () => {
    const rx = await receiver([500, 500, 500]);
    try {
      let now = new Date('2026-11-27T10:00:00.000Z');
      const outbox = new WebhookOutbox(storage.db, settings({ maxAttempts: 2 }), { clock: () => now, random: () => 0.5 });
      const endpoint = await outbox.registerEndpoint({ url: rx.url });
      await outbox.enqueue(endpoint, 'crawl.failed', {});
      await outbox.deliverDue();
      now = new Date(now.getTime() + 60_000);
      expect(await outbox.deliverDue()).toMatchObject({ attempted: 1, failed: 1 });
      now = new Date(now.getTime() + 24 * 3_600_000);
      expect(await outbox.deliverDue()).toMatchObject({ attempted: 0 });
      expect(rx.got).toHaveLength(2);
    } finally {
      await rx.close();
    }
  });

  it('does not retry a 400', async () => {
    const rx = await receiver([400]);
    try {
      let now = new Date('2026-11-27T10:00:00.000Z');
      const outbox = new WebhookOutbox(storage.db, settings(), { clock: () => now, random: () => 0.5 });
      const endpoint = await outbox.registerEndpoint({ url: rx.url });
      await outbox.enqueue(endpoint, 'crawl.completed', {});
      expect(await outbox.deliverDue()).toEqual({ attempted: 1, delivered: 0, failed: 1, retrying: 0 });
      now = new Date(now.getTime() + 24 * 3_600_000);
      expect(await outbox.deliverDue()).toMatchObject({ attempted: 0 });
      expect(rx.got).toHaveLength(1);
      const [delivery] = await outbox.listDeliveries({ endpointId: endpoint.id, state: 'failed' });
      expect(delivery).toMatchObject({ state: 'failed', lastStatus: 400, nextAttemptAt: null });
    } finally {
      await rx.close();
    }
  });

  it('gives up on a stalled receiver after webhooks.timeout_ms and retries later', async () => {
    const rx = await receiver([0]);
    try {
      const outbox = new WebhookOutbox(storage.db, settings({ timeoutMs: 300 }), { random: () => 0.5 });
      const endpoint = await outbox.registerEndpoint({ url: rx.url });
      await outbox.enqueue(endpoint, 'crawl.completed', {});
      const started = performance.now();
      expect(await outbox.deliverDue()).toMatchObject({ attempted: 1, retrying: 1 });
      expect(performance.now() - started).toBeLessThan(3_000);
      const [delivery] = await outbox.listDeliveries({ endpointId: endpoint.id });
      expect(delivery?.attempts[0]).toMatchObject({ status: null, errorCode: 'upstream_timeout' });
      expect(delivery?.attempts[0]?.durationMs).toBeGreaterThanOrEqual(250);
      expect(delivery?.state).toBe('pending');
    } finally {
      await rx.close();
    }
  });

  it('delivers each message once when two processes run deliverDue at the same time', async () => {
    const rx = await receiver([], 50);
    try {
      const a = new WebhookOutbox(storage.db, settings());
      const b = new WebhookOutbox(other.db, settings());
      const endpoint = await a.registerEndpoint({ url: rx.url, tenantId: 'ten_race' });
      const ids = new Set<string>();
      for (let i = 0; i < 12; i++) ids.add((await a.enqueue(endpoint, 'crawl.completed', { i })).id);
      const [ra, rb] = await Promise.all([a.deliverDue(), b.deliverDue()]);
      expect(ra.attempted + rb.attempted).toBe(12);
      expect(ra.delivered + rb.delivered).toBe(12);
      const seen = rx.got.map((r) => String(r.headers['webhook-id']));
      expect(seen.sort()).toEqual([...ids].sort());
      const deliveries = await b.listDeliveries({ tenantId: 'ten_race' });
      expect(deliveries.every((d) => d.state === 'delivered' && d.attempts.length === 1)).toBe(true);
    } finally {
      await rx.close();
    }
  });

  it('a process that listed messages before another delivered them claims none of them', async () => {
    const rx = await receiver();
    try {
      const a = new WebhookOutbox(storage.db, settings());
      const b = new WebhookOutbox(other.db, settings());
      const endpoint = await a.registerEndpoint({ url: rx.url });
      for (let i = 0; i < 3; i++) await a.enqueue(endpoint, 'crawl.completed', { i });
      const stale = await a.dueIds();
      expect(stale).toHaveLength(3);
      expect(await b.deliverDue()).toMatchObject({ attempted: 3, delivered: 3 });
      expect(await a.deliver(stale)).toEqual({ attempted: 0, delivered: 0, failed: 0, retrying: 0 });
      expect(rx.got).toHaveLength(3);
    } finally {
      await rx.close();
    }
  });

  it('a claim left by a process that died lapses after webhooks.timeout_ms + 30 s; another process sends it, same webhook-id', async () => {
    const rx = await receiver();
    try {
      let now = new Date('2026-11-27T10:00:00.000Z');
      const dead = new WebhookOutbox(storage.db, settings({ timeoutMs: 1_000 }), { clock: () => now });
      const endpoint = await dead.registerEndpoint({ url: rx.url });
      const { id } = await dead.enqueue(endpoint, 'crawl.completed', {});
      // What claim() writes, left behind by a process killed before it posted.
      await storage.db
        .updateTable('webhook_messages')
        .set({ state: 'delivering', claim_token: 'dead', claimed_until: new Date(now.getTime() + 31_000).toISOString() })
        .where('id', '=', id)
        .execute();
      const restarted = new WebhookOutbox(other.db, settings({ timeoutMs: 1_000 }), { clock: () => now });
      now = new Date(now.getTime() + 30_999);
      expect(await restarted.deliverDue()).toMatchObject({ attempted: 0 });
      now = new Date(now.getTime() + 1);
      expect(await restarted.deliverDue()).toMatchObject({ attempted: 1, delivered: 1 });
      expect(rx.got.map((r) => r.headers['webhook-id'])).toEqual([id]);
    } finally {
      await rx.close();
    }
  });

  it('refuses a private URL without webhooks.allow_private_networks, at registration and at delivery', async () => {
    const rx = await receiver();
    try {
      const strict = new WebhookOutbox(storage.db, settings({ allowPrivateNetworks: false }));
      const err: unknown = await strict.registerEndpoint({ url: rx.url }).catch((e: unknown) => e);
      expect(isNotaryError(err) && { code: err.code, status: err.status }).toEqual({ code: 'webhook_address_blocked', status: 422 });
      expect((err as Error).message).toMatch(/webhooks\.allow_private_networks/);
      // DNS rebinding: a name that was public at registration points at loopback when the message is delivered.
      let answer: ResolvedAddress = { address: '93.184.215.14', family: 4 };
      const rebinding = new WebhookOutbox(storage.db, settings({ allowPrivateNetworks: false }), { resolver: async () => [answer] });
      const port = new URL(rx.url).port;
      const endpoint = await rebinding.registerEndpoint({ url: `http://hooks.example.test:${port}/hooks` });
      answer = { address: '127.0.0.1', family: 4 };
      await rebinding.enqueue(endpoint, 'crawl.completed', {});
      expect(await rebinding.deliverDue()).toMatchObject({ attempted: 1, failed: 1 });
      const [delivery] = await rebinding.listDeliveries({ endpointId: endpoint.id });
      expect(delivery?.attempts[0]).toMatchObject({ status: null, errorCode: 'webhook_address_blocked' });
      expect(rx.got).toHaveLength(0);
      // The operator setting lets it through (what the other tests use for 127.0.0.1).
      const open = new WebhookOutbox(storage.db, settings(), { resolver: async () => [answer] });
      await open.enqueue(endpoint, 'crawl.completed', {});
      expect(await open.deliverDue()).toMatchObject({ attempted: 1, delivered: 1 });
      expect(rx.got).toHaveLength(1);
    } finally {
      await rx.close();
    }
  });

  it('refuses to queue for an unknown endpoint', async () => {
    const outbox = new WebhookOutbox(storage.db, settings());
    await expect(outbox.enqueue('whe_nope', 'crawl.completed', {})).rejects.toMatchObject({ code: 'webhook_not_found' });
  });
});
