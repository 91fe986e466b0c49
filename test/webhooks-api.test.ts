import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, describe, expect, it } from 'vitest';
import type { NotaryConfig } from '../core/config.js';
import { openSqlite, sqliteFile } from '../storage/db.js';
import { apiTestConfig, startApi } from '../testkit/app.js';
import { spawn } from 'node:child_process';
import { repoRoot, runCli, startServer } from '../testkit/cli.js';
import { freePort } from '../testkit/postgres.js';
import { notifyWebhook, startDeliveryTimer, WebhookOutbox, webhookSettingsOf } from '../webhooks/index.js';
import { receiver, signed, type Received } from './support/webhook-receiver.js';

async function until(what: string, check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const dirs: string[] = [];
function config(allowPrivate: boolean): NotaryConfig {
  const dir = mkdtempSync(path.join(tmpdir(), 'notary-webhooks-api-'));
  dirs.push(dir);
  return apiTestConfig(dir, { webhooks: { allow_private_networks: allowPrivate }, default_tier: 'bulk' });
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('/v1/webhooks', () => {
  it('registers (secret once), lists, delivers signed messages, lists deliveries, deletes; another tenant sees none; nothing is charged', async () => {
    const rx = await receiver();
    const api = await startApi(config(true));
    const app = api.app;
    try {
      const { accounts } = api.runtime;
      const a = await accounts.createTenant('hooks-a', { credits: 10 });
      const b = await accounts.createTenant('hooks-b', { credits: 10 });
      const keyA = (await accounts.createKey(a.id)).key;
      const keyB = (await accounts.createKey(b.id)).key;
      const call = (method: 'GET' | 'POST' | 'DELETE', url: string, key?: string, payload?: unknown) =>
        app.inject({ method, url, headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(payload ? { 'content-type': 'application/json' } : {}) }, ...(payload ? { payload: JSON.stringify(payload) } : {}) });

      const noKey = await call('GET', '/v1/webhooks');
      expect(noKey.statusCode).toBe(401);
      expect(noKey.json()).toMatchObject({ code: 'unauthenticated' });
      expect(String(noKey.headers['www-authenticate'])).toMatch(/Bearer realm="notary"/);

      const created = await call('POST', '/v1/webhooks', keyA, { url: rx.url });
      expect(created.statusCode, created.body).toBe(201);
      const endpoint = created.json<{ id: string; url: string; secret: string; created_at: string }>();
      expect(endpoint).toMatchObject({ id: expect.stringMatching(/^whe_/), url: rx.url, secret: expect.stringMatching(/^whsec_/) });
      expect(created.headers['ratelimit']).toBeDefined();
      expect((await call('POST', '/v1/webhooks', keyA, { url: 'ftp://example.org/x' })).json()).toMatchObject({ code: 'invalid_url' });

      const listed = await call('GET', '/v1/webhooks', keyA);
      expect(listed.json()).toEqual({ webhooks: [{ id: endpoint.id, url: rx.url, created_at: endpoint.created_at }] });
      expect(listed.body).not.toContain('whsec_');
      expect((await call('GET', '/v1/webhooks', keyB)).json()).toEqual({ webhooks: [] });

      // The crawl-job runner's call, twice (a retry after a crash): one message, one POST.
      const outbox = api.runtime.webhooks;
      const notice = { endpointId: endpoint.id, tenantId: a.id, type: 'crawl.completed' as const, data: { id: 'job_1', pages: 3 } };
      const first = await notifyWebhook(outbox, notice);
      const again = await notifyWebhook(outbox, notice);
      expect(first.created).toBe(true);
      expect(again).toEqual({ id: first.id, created: false });
      await expect(notifyWebhook(outbox, { ...notice, tenantId: b.id })).rejects.toMatchObject({ code: 'webhook_not_found' });
      expect(await outbox.deliverDue()).toMatchObject({ attempted: 1, delivered: 1 });
      expect(await outbox.deliverDue()).toMatchObject({ attempted: 0 });
      expect(rx.got).toHaveLength(1);
      const [req] = rx.got as [Received];
      expect(signed(req)['webhook-id']).toBe(first.id);
      expect(new Webhook(endpoint.secret).verify(req.body, signed(req))).toMatchObject({ type: 'crawl.completed', data: { id: 'job_1', pages: 3 } });

      const deliveries = await call('GET', `/v1/webhooks/${endpoint.id}/deliveries`, keyA);
      expect(deliveries.statusCode, deliveries.body).toBe(200);
      expect(deliveries.json()).toEqual({
        deliveries: [
          {
            id: first.id,
            type: 'crawl.completed',
            state: 'delivered',
            attempts: [{ attempt: 1, started_at: expect.any(String), duration_ms: expect.any(Number), status: 200, error_code: null }],
            next_attempt_at: null,
            created_at: expect.any(String),
            finished_at: expect.any(String),
          },
        ],
      });
      // Another tenant's endpoint does not exist for it.
      for (const [method, url] of [['GET', `/v1/webhooks/${endpoint.id}/deliveries`], ['DELETE', `/v1/webhooks/${endpoint.id}`]] as const) {
        const res = await call(method, url, keyB);
        expect(res.statusCode, `${method} ${url}`).toBe(404);
        expect(res.json()).toMatchObject({ code: 'webhook_not_found' });
      }
      const deleted = await call('DELETE', `/v1/webhooks/${endpoint.id}`, keyA);
      expect(deleted.statusCode).toBe(204);
      expect((await call('GET', '/v1/webhooks', keyA)).json()).toEqual({ webhooks: [] });
      expect((await call('DELETE', `/v1/webhooks/${endpoint.id}`, keyA)).statusCode).toBe(404);
      await expect(notifyWebhook(outbox, { ...notice, type: 'crawl.failed' })).rejects.toMatchObject({ code: 'webhook_not_found' });

      // Not charged.
      expect((await accounts.getTenant(a.id)).credits).toBe(10);
    } finally {
      await api.close();
      await rx.close();
    }
  });

  it('refuses a loopback receiver unless the operator allows private networks: webhook_address_blocked', async () => {
    const api = await startApi(config(false));
    try {
      const tenant = await api.runtime.accounts.createTenant('hooks-strict', { credits: 1 });
      const { key } = await api.runtime.accounts.createKey(tenant.id);
      for (const url of ['http://127.0.0.1:9/x', 'http://localhost:9/x', 'http://169.254.169.254/latest', 'http://[::ffff:a9fe:a9fe]/x', 'http://10.0.0.1/x']) {
        const res = await api.app.inject({ method: 'POST', url: '/v1/webhooks', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, payload: JSON.stringify({ url }) });
        expect(res.statusCode, url).toBe(422);
        expect(res.json(), url).toMatchObject({ code: 'webhook_address_blocked' });
      }
    } finally {
      await api.close();
    }
  });

  it('the delivery timer retries a receiver that answered 500, then stops within its bound', async () => {
    const rx = await receiver([500, 200]);
    const api = await startApi(config(true));
    try {
      let now = new Date('2026-11-27T10:00:00.000Z');
      const outbox = new WebhookOutbox(api.runtime.storage.db, webhookSettingsOf(api.runtime.config), { clock: () => now, random: () => 0.5 });
      const endpoint = await outbox.registerEndpoint({ url: rx.url, tenantId: 'ten_timer' });
      await notifyWebhook(outbox, { endpointId: endpoint.id, tenantId: 'ten_timer', type: 'crawl.failed', data: { id: 'job_2' } });
      const timer = startDeliveryTimer(outbox, { everyMs: 20, log: () => undefined });
      try {
        await until('the first attempt', () => rx.got.length === 1);
        await new Promise((r) => setTimeout(r, 200));
        expect(rx.got).toHaveLength(1); // not due again before 5 s
        now = new Date(now.getTime() + 6_000);
        await until('the retry', () => rx.got.length === 2);
      } finally {
        const started = Date.now();
        await timer.stop(1_000);
        expect(Date.now() - started).toBeLessThan(1_000);
      }
      const [delivery] = await outbox.listDeliveries({ endpointId: endpoint.id });
      expect(delivery).toMatchObject({ state: 'delivered', attempts: [{ status: 500 }, { status: 200 }] });
      expect(signed(rx.got[0] as Received)['webhook-id']).toBe(signed(rx.got[1] as Received)['webhook-id']);
    } finally {
      await api.close();
      await rx.close();
    }
  });
});

describe('notary serve delivers webhook messages in the background', () => {
  it('a message queued in the database is posted once by the serve timer, signed', async () => {
    const rx = await receiver();
    const data = mkdtempSync(path.join(tmpdir(), 'notary-webhooks-serve-'));
    dirs.push(data);
    const env = { NOTARY_MODEL_DOWNLOAD: 'false', NOTARY_EMBEDDING_MODEL: 'off' };
    writeFileSync(path.join(data, 'notary.json'), JSON.stringify({ webhooks: { allow_private_networks: true, deliver_every_ms: 200 }, server: { shutdown_timeout_ms: 3000 } }));
    const created = await runCli(['--data', data, 'keys', 'create', '--tenant', 'acme', '--credits', '10'], env);
    const key = created.stdout.trim().split('\n').pop() ?? '';
    const server = await startServer(['--data', data, '--no-crawl'], await freePort(), env);
    try {
      const res = await fetch(`${server.url}/v1/webhooks`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ url: rx.url }) });
      expect(res.status, server.output()).toBe(201);
      const endpoint = (await res.json()) as { id: string; secret: string };
      // The crawl-job runner of another process queues the message, twice.
      const storage = openSqlite(sqliteFile(data));
      try {
        const outbox = new WebhookOutbox(storage.db, { timeoutMs: 5_000, maxAttempts: 8, allowPrivateNetworks: true });
        const tenantId = (await storage.db.selectFrom('webhook_endpoints').select('tenant_id').where('id', '=', endpoint.id).executeTakeFirstOrThrow()).tenant_id ?? '';
        const notice = { endpointId: endpoint.id, tenantId, type: 'crawl.completed' as const, data: { id: 'job_serve' } };
        await notifyWebhook(outbox, notice);
        await notifyWebhook(outbox, notice);
      } finally {
        await storage.close();
      }
      await until('the delivery', () => rx.got.length >= 1, 15_000);
      await new Promise((r) => setTimeout(r, 800)); // four more rounds
      expect(rx.got).toHaveLength(1);
      const [req] = rx.got as [Received];
      expect(new Webhook(endpoint.secret).verify(req.body, signed(req))).toMatchObject({ type: 'crawl.completed', data: { id: 'job_serve' } });
      const listed = await fetch(`${server.url}/v1/webhooks/${endpoint.id}/deliveries`, { headers: { authorization: `Bearer ${key}` } });
      expect(((await listed.json()) as { deliveries: Array<{ state: string }> }).deliveries).toMatchObject([{ state: 'delivered', attempts: [{ status: 200 }] }]);
      const exited = new Promise<number | null>((resolve) => server.child.once('exit', (code) => resolve(code)));
      server.child.kill('SIGTERM');
      expect(await Promise.race([exited, new Promise<string>((r) => setTimeout(() => r('hung'), 10_000))]), server.output()).toBe(0);
    } finally {
      if (server.child.exitCode === null) server.child.kill('SIGKILL');
      await rx.close();
    }
  }, 90_000);
});

describe('notary crawl-worker delivers webhook messages too', () => {
  it('posts a queued message once and stops on SIGTERM', async () => {
    const rx = await receiver();
    const data = mkdtempSync(path.join(tmpdir(), 'notary-webhooks-worker-'));
    dirs.push(data);
    const env = { NOTARY_MODEL_DOWNLOAD: 'false', NOTARY_EMBEDDING_MODEL: 'off' };
    writeFileSync(path.join(data, 'notary.json'), JSON.stringify({ webhooks: { allow_private_networks: true, deliver_every_ms: 200 } }));
    // Any command opens the runtime: the database and its webhook tables exist.
    expect((await runCli(['--data', data, 'keys', 'create', '--tenant', 'acme', '--credits', '1'], env)).code).toBe(0);
    const storage = openSqlite(sqliteFile(data));
    let secret = '';
    try {
      const outbox = new WebhookOutbox(storage.db, { timeoutMs: 5_000, maxAttempts: 8, allowPrivateNetworks: true });
      const endpoint = await outbox.registerEndpoint({ url: rx.url, tenantId: 'ten_worker' });
      secret = endpoint.secret;
      await notifyWebhook(outbox, { endpointId: endpoint.id, tenantId: 'ten_worker', type: 'crawl.cancelled', data: { id: 'job_w' } });
    } finally {
      await storage.close();
    }
    const child = spawn(process.execPath, [path.join(repoRoot, 'bin/notary.js'), '--data', data, 'crawl-worker'], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    try {
      await until('the delivery', () => rx.got.length >= 1, 30_000);
      await new Promise((r) => setTimeout(r, 600));
      expect(rx.got, output).toHaveLength(1);
      const [req] = rx.got as [Received];
      expect(new Webhook(secret).verify(req.body, signed(req))).toMatchObject({ type: 'crawl.cancelled', data: { id: 'job_w' } });
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      child.kill('SIGTERM');
      expect(await Promise.race([exited, new Promise<string>((r) => setTimeout(() => r('hung'), 10_000))]), output).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      await rx.close();
    }
  }, 90_000);
});
