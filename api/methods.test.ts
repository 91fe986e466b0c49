import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiTestConfig, startApi, type ApiHarness } from '../testkit/app.js';

/** Schemathesis ST204: a method a path does not serve gets 405 with Allow, whatever body it declares or lacks. */
describe('unsupported methods over HTTP', () => {
  let dir: string;
  let api: ApiHarness;
  let url: string;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'notary-methods-'));
    api = await startApi(apiTestConfig(dir));
    url = await api.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await api?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function expect405(method: string, route: string, allow: string, init: RequestInit = {}): Promise<void> {
    const res = await fetch(`${url}${route}`, { method, ...init });
    const body = (await res.json()) as Record<string, unknown>;
    expect(res.status, JSON.stringify(body)).toBe(405);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.headers.get('allow')).toBe(allow);
    expect(body['code']).toBe('method_not_allowed');
  }

  it('answers QUERY without a Content-Type with 405 and Allow, not a 400 about the missing header', async () => {
    await expect405('QUERY', '/healthz', 'GET, HEAD');
    await expect405('QUERY', '/openapi.json?x=1', 'GET, HEAD');
    await expect405('QUERY', '/v1/search', 'POST');
  });

  it('answers a body method with an unsupported body with 405, not 415, and keeps 404 for unknown paths', async () => {
    await expect405('QUERY', '/v1/search', 'POST', { headers: { 'content-type': 'text/plain' }, body: 'x' });
    await expect405('PROPFIND', '/openapi.json', 'GET, HEAD', { headers: { 'content-type': 'application/xml' }, body: '<a/>' });
    await expect405('DELETE', '/healthz', 'GET, HEAD');
    const unknown = await fetch(`${url}/v2/nothing`, { method: 'QUERY', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(unknown.status).toBe(404);
    const bare = await fetch(`${url}/v2/nothing`, { method: 'QUERY' });
    expect(bare.status).toBe(404);
    expect(((await bare.json()) as { code: string }).code).toBe('not_found');
  });
});
