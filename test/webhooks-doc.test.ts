import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest, openSqlite, type Storage } from '../storage/db.js';
import { repoRoot } from '../testkit/cli.js';
import { freePort } from '../testkit/postgres.js';
import { postWebhook } from '../webhooks/deliver.js';
import { registerWebhookMigrations, WebhookOutbox } from '../webhooks/index.js';
import { docExample } from './support/doc-examples.js';

/** docs/webhooks.md's receiver, run as written under Node 24, receives a real delivery and refuses a forged one. */
registerWebhookMigrations();

let dir: string;
let storage: Storage;
let child: ChildProcess;
let stdout = '';

async function waitFor(check: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; receiver said: ${stdout}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("docs/webhooks.md's receiver", () => {
  let outbox: WebhookOutbox;
  let url: string;
  let secret: string;
  let endpointId: string;

  beforeAll(async () => {
    // Under the repository so the sample's `import 'standardwebhooks'` resolves; /tmp/ there is ignored by git.
    mkdirSync(path.join(repoRoot, 'tmp'), { recursive: true });
    dir = mkdtempSync(path.join(repoRoot, 'tmp', 'webhooks-doc-'));
    storage = openSqlite(path.join(dir, 'notary.sqlite'));
    await migrateToLatest(storage);
    outbox = new WebhookOutbox(storage.db, { timeoutMs: 5_000, maxAttempts: 3, allowPrivateNetworks: true });
    const port = await freePort();
    url = `http://127.0.0.1:${port}/hooks`;
    const endpoint = await outbox.registerEndpoint({ url });
    secret = endpoint.secret;
    endpointId = endpoint.id;
    writeFileSync(path.join(dir, 'receiver.ts'), docExample('webhook-receiver').code);
    child = spawn(process.execPath, [path.join(dir, 'receiver.ts')], {
      env: { ...process.env, WEBHOOK_SECRET: secret, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr?.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    await waitFor(() => stdout.includes('listening'), 'the receiver to listen');
  }, 30_000);

  afterAll(async () => {
    child?.kill('SIGTERM');
    await storage?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('verifies a delivery from the outbox and answers 204', async () => {
    await outbox.enqueue(endpointId, 'crawl.completed', { job: 'job_9', stored: 12 });
    expect(await outbox.deliverDue()).toMatchObject({ attempted: 1, delivered: 1 });
    await waitFor(() => stdout.includes('crawl.completed'), 'the event line');
    expect(stdout).toContain('crawl.completed {"job":"job_9","stored":12}');
    const [delivery] = await outbox.listDeliveries({ endpointId });
    expect(delivery).toMatchObject({ state: 'delivered', lastStatus: 204 });
  });

  it('answers 400 to a body signed with another secret', async () => {
    const body = JSON.stringify({ type: 'crawl.completed', timestamp: new Date().toISOString(), data: { job: 'forged' } });
    const outcome = await postWebhook({
      url,
      body,
      timeoutMs: 5_000,
      allowPrivateNetworks: true,
      headers: {
        'webhook-id': 'msg_forged',
        'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
        'webhook-signature': 'v1,AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=',
      },
    });
    expect(outcome.status).toBe(400);
    expect(stdout).not.toContain('forged');
  });
});
