import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiMetrics } from '../api/metrics.js';
import { DashboardClient, PASSWORD, startDashboard, type DashboardHarness } from './support/dashboard.js';

/**
 * What an unauthenticated caller may learn (issue 30): /healthz says ok or not with a non-sensitive summary, the detail
 * is an operator's (the dashboard); /metrics needs its bearer token; reading the dashboard's session page writes no
 * row; sign-up is limited per address and grants the configured credits.
 */
const DATA_DIR = '/srv/notary-secret-data';
const MODEL_URL = 'https://models.internal.example/rerank/model.onnx';
const ERROR_TEXT = 'ENOENT: no such file /srv/notary-secret-data/models/embed.onnx';
const METRICS_TOKEN = 'metrics-token-0123456789abcdef';

const report = async () => ({
  status: 'ok',
  reranker: { kind: 'cross-encoder', model: 'ms-marco-MiniLM-L-6-v2', source: MODEL_URL, why: null },
  index: { backend: 'fts5', path: `${DATA_DIR}/index.sqlite`, documents: 4 },
  retrieval: { mode: 'bm25', why: ERROR_TEXT },
  query_rewriter: null,
  models: [{ role: 'reranker', name: 'ms-marco-MiniLM-L-6-v2', url: MODEL_URL, file: `${DATA_DIR}/models/r.onnx`, depths: [1, 2] }],
  data_dir: DATA_DIR,
  pages: 3,
  passages: 12,
});

let harness: DashboardHarness & { dataDir: string };
const sessionRows = async () => Number((await harness.runtime.storage.db.selectFrom('sessions').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

beforeAll(async () => {
  harness = await startDashboard(
    { server: { metrics_token: METRICS_TOKEN }, dashboard: { signup_credits: 7, signup_limit: { max_per_address: 2, window_minutes: 60 } } },
    { health: report, ready: async () => ({ database: true, index: true, stores: false }), metrics: new ApiMetrics() },
  );
}, 120_000);

afterAll(async () => {
  await harness?.close();
});

describe('/healthz says ok or not; operators see why', () => {
  it('/healthz without credentials: status and a summary, no data folder, model URL or error text', async () => {
    const res = await fetch(`${harness.url}/healthz`);
    const text = await res.text();
    expect(res.status).toBe(200);
    const body = JSON.parse(text) as Record<string, unknown>;
    expect(body['status']).toBe('ok');
    expect(body).toMatchObject({ reranker: { kind: 'cross-encoder', model: 'ms-marco-MiniLM-L-6-v2' }, retrieval: { mode: 'bm25' }, pages: 3, passages: 12 });
    expect(body['models']).toEqual([{ role: 'reranker', name: 'ms-marco-MiniLM-L-6-v2', depths: [1, 2] }]);
    for (const secret of [DATA_DIR, MODEL_URL, 'models.internal', ERROR_TEXT, 'ENOENT', 'index.sqlite']) expect(text).not.toContain(secret);
  });

  it('/readyz names the dependency that is down (names only, no error text)', async () => {
    const res = await fetch(`${harness.url}/readyz`);
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ status: 'unavailable', checks: { database: true, index: true, stores: false } });
  });

  it("the dashboard's operator health page has the full report; a visitor gets 401 and a member 403", async () => {
    const visitor = new DashboardClient(harness.url);
    expect((await visitor.get('operator/health')).status).toBe(401);
    const member = await harness.member('health-member@example.org');
    expect((await member.get('operator/health')).status).toBe(403);
    const operator = await harness.operator();
    const res = await operator.get('operator/health');
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ health: { ok: true, report: { data_dir: DATA_DIR, reranker: { source: MODEL_URL }, retrieval: { why: ERROR_TEXT } } }, ready: { stores: false } });
  });
});

describe('/metrics needs its bearer token', () => {
  it('401 without or with a wrong token, 200 with the right one', async () => {
    const none = await fetch(`${harness.url}/metrics`);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(((await none.json()) as { code: string }).code).toBe('metrics_token_required');
    expect((await fetch(`${harness.url}/metrics`, { headers: { authorization: 'Bearer not-the-token-at-all' } })).status).toBe(401);
    const ok = await fetch(`${harness.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('notary_http_requests_total');
  });

  it('without server.metrics_token, /metrics is not served at all', async () => {
    const bare = await startDashboard({}, { metrics: new ApiMetrics() });
    try {
      const res = await fetch(`${bare.url}/metrics`);
      expect(res.status).toBe(404);
      expect(await res.text()).not.toContain('notary_process_');
    } finally {
      await bare.close();
    }
  });
});

describe('dashboard sessions and sign-up', () => {
  it('300 cookieless reads of the session page write no session row; sign-in with the token it gave still works', async () => {
    const before = await sessionRows();
    const answers = await Promise.all(Array.from({ length: 300 }, () => fetch(`${harness.url}/dashboard/api/v1/session`).then((r) => r.json() as Promise<{ csrf_token: string | null; user: unknown }>)));
    expect(answers.every((a) => a.user === null && typeof a.csrf_token === 'string')).toBe(true);
    expect(await sessionRows()).toBe(before);
    // The token works only with the cookie it came with (double submit), and signing in makes the one row.
    const client = new DashboardClient(harness.url);
    await client.open();
    const forged = await client.post('signin', { email: 'nobody@example.org', password: PASSWORD }, { csrf: 'x'.repeat(43) });
    expect(forged.status).toBe(403);
    expect(forged.body['code']).toBe('csrf_failed');
    await harness.runtime.users.createOperator('rows-operator@example.org', PASSWORD);
    const signedIn = await client.signIn('rows-operator@example.org', PASSWORD);
    expect(signedIn.status, signedIn.text).toBe(200);
    expect(await sessionRows()).toBe(before + 1);
  });

  it('sign-up grants dashboard.signup_credits and is limited per address (429 signup_throttled with Retry-After)', async () => {
    const limited = await startDashboard({ dashboard: { signup_credits: 7, signup_limit: { max_per_address: 2, window_minutes: 60 } } });
    try {
      const results = [];
      for (let i = 0; i < 4; i++) results.push(await new DashboardClient(limited.url).signUp(`limit-${i}@example.org`, PASSWORD));
      expect(results.map((r) => r.status)).toEqual([201, 201, 429, 429]);
      expect(results[2]?.body['code']).toBe('signup_throttled');
      expect(Number(results[2]?.headers.get('retry-after'))).toBeGreaterThan(0);
      const tenants = await limited.runtime.accounts.listTenants();
      expect(tenants.map((t) => t.credits).sort()).toEqual([7, 7]);
    } finally {
      await limited.close();
    }
  });
});
