import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ConfigInput } from '../../core/config.js';
import { deepMerge } from '../../core/config.js';
import type { AppDeps } from '../../api/app.js';
import { apiTestConfig, startApi, type ApiHarness } from '../../testkit/app.js';

export interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
  text: string;
}

/**
 * A dashboard visitor over real HTTP: keeps its session cookie like a browser (only the name=value part is sent back)
 * and sends the session's CSRF token on changes unless told not to.
 */
export class DashboardClient {
  cookie: string | undefined;
  csrf: string | undefined;

  constructor(readonly base: string) {}

  async request(
    method: string,
    url: string,
    options: { body?: unknown; headers?: Record<string, string>; csrf?: boolean | string; rawBody?: string } = {},
  ): Promise<Answer> {
    const headers: Record<string, string> = { ...(options.headers ?? {}) };
    if (this.cookie) headers['cookie'] = this.cookie;
    const token = typeof options.csrf === 'string' ? options.csrf : options.csrf === false ? undefined : this.csrf;
    if (token && method !== 'GET') headers['x-csrf-token'] = token;
    let body: string | undefined = options.rawBody;
    if (options.body !== undefined) {
      headers['content-type'] ??= 'application/json';
      body = JSON.stringify(options.body);
    }
    const res = await fetch(`${this.base}${url.startsWith('/') ? url : `/dashboard/api/v1/${url}`}`, { method, headers, ...(body !== undefined ? { body } : {}) });
    const setCookie = res.headers.get('set-cookie');
    if (setCookie) {
      const pair = setCookie.split(';')[0] ?? '';
      this.cookie = /=$/.test(pair) ? undefined : pair;
    }
    const text = await res.text();
    let parsed: Record<string, unknown> = {};
    try {
      parsed = JSON.parse(text) as Record<string, unknown>;
    } catch {
      parsed = {};
    }
    if (typeof parsed['csrf_token'] === 'string') this.csrf = parsed['csrf_token'];
    return { status: res.status, headers: res.headers, body: parsed, text };
  }

  get(url: string, options?: Parameters<DashboardClient['request']>[2]): Promise<Answer> {
    return this.request('GET', url, options);
  }

  post(url: string, body?: unknown, options: Parameters<DashboardClient['request']>[2] = {}): Promise<Answer> {
    return this.request('POST', url, { ...options, ...(body !== undefined ? { body } : {}) });
  }

  /** The session cookie's token alone. */
  get token(): string | undefined {
    return this.cookie?.split('=')[1];
  }

  async open(): Promise<Answer> {
    return this.get('session');
  }

  async signUp(email: string, password: string, organisation?: string): Promise<Answer> {
    if (!this.csrf) await this.open();
    return this.post('signup', { email, password, ...(organisation ? { organisation } : {}) });
  }

  async signIn(email: string, password: string): Promise<Answer> {
    if (!this.csrf) await this.open();
    return this.post('signin', { email, password });
  }
}

export interface DashboardHarness extends ApiHarness {
  url: string;
  client(): DashboardClient;
  /** A signed-up member's client. */
  member(email: string, organisation?: string): Promise<DashboardClient>;
  /** An operator (created as `notary admin create` does) signed in. */
  operator(email?: string): Promise<DashboardClient>;
  /** POST /v1/search with a key. */
  call(key: string, body?: object, headers?: Record<string, string>): Promise<Answer>;
}

export const PASSWORD = 'correct horse battery';

/**
 * The API with the dashboard, listening on 127.0.0.1 (the real search pipeline over the four API test documents),
 * with the scrypt cost at its floor (2^14) so that suites with many sign-ins stay quick.
 */
export async function startDashboard(overrides: ConfigInput = {}, deps: Partial<Pick<AppDeps, 'health' | 'ready' | 'metrics'>> = {}): Promise<DashboardHarness & { dataDir: string }> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'notary-dashboard-'));
  // Suites sign many members up from 127.0.0.1: the per-address sign-up limit is lifted unless a suite sets it.
  const base: ConfigInput = { dashboard: { scrypt_log_n: 14, settings_refresh_ms: 0, signup_limit: { max_per_address: 0 } }, server: { body_limit_bytes: 16 * 1024 } };
  const config = apiTestConfig(dataDir, deepMerge(base as Record<string, unknown>, overrides as Record<string, unknown>) as ConfigInput);
  const api = await startApi(config, { deps: {} });
  // startApi builds the app without the dashboard: rebuild with it, as `notary serve` does.
  await api.app.close();
  const { buildApp } = await import('../../api/app.js');
  const app = await buildApp({ config, gate: api.runtime.paidCallGate(), search: api.search, extract: api.runtime.extract(), collections: api.runtime.collections, crawl: api.runtime.crawlJobDeps(), webhooks: api.runtime.webhooks, sites: api.runtime.sites, health: async () => ({ status: 'ok' }), dashboard: api.runtime, ...deps });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  const harness: DashboardHarness & { dataDir: string } = {
    ...api,
    app,
    url,
    dataDir,
    client: () => new DashboardClient(url),
    async member(email, organisation) {
      const client = new DashboardClient(url);
      const answer = await client.signUp(email, PASSWORD, organisation);
      if (answer.status !== 201) throw new Error(`sign-up failed: ${answer.text}`);
      return client;
    },
    async operator(email = 'operator@notary.test') {
      const existing = await api.runtime.users.repository.getUserByEmail(email);
      if (!existing) await api.runtime.users.createOperator(email, PASSWORD);
      const client = new DashboardClient(url);
      const answer = await client.signIn(email, PASSWORD);
      if (answer.status !== 200) throw new Error(`operator sign-in failed: ${answer.text}`);
      return client;
    },
    async call(key, body = { query: 'vacuum', depth: 1 }, headers = {}) {
      const res = await fetch(`${url}/v1/search`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
      const text = await res.text();
      return { status: res.status, headers: res.headers, body: JSON.parse(text) as Record<string, unknown>, text };
    },
    close: async () => {
      await app.close();
      await api.runtime.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return harness;
}
