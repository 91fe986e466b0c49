import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ConfigInput } from '../../core/config.js';
import { deepMerge } from '../../core/config.js';
import { apiTestConfig, startApi, type ApiHarness } from '../../testkit/app.js';
import { startTestServer, type TestServer, type Handler } from '../../testkit/upstream-server.js';

/**
 * The API listening on 127.0.0.1 with extraction on, beside an upstream site of the test's pages: the set-up of the
 * raw-socket suites (hardening, client gone, idempotency under hang-ups). Extraction may fetch the upstream
 * (private networks allowed, robots not asked), an extraction costs 1 credit (2 rendered), the default tier is bulk.
 */
export interface ListeningApi {
  api: ApiHarness;
  port: number;
  upstream: TestServer;
  /** A tenant with `credits` and an API key of its own. */
  tenantWithKey(name: string, credits?: number): Promise<{ tenantId: string; key: string }>;
  close(): Promise<void>;
}

export async function startListeningApi(prefix: string, pages: Record<string, Handler>, overrides: ConfigInput = {}): Promise<ListeningApi> {
  const dir = mkdtempSync(path.join(tmpdir(), `notary-${prefix}-`));
  const upstream = await startTestServer(pages);
  const base: ConfigInput = {
    extract: { allow_private_networks: true, respect_robots_txt: false },
    pricing: { extract: { credits: 1, credits_rendered: 2 } },
    default_tier: 'bulk',
  };
  const api = await startApi(apiTestConfig(dir, deepMerge(base as Record<string, unknown>, overrides as Record<string, unknown>) as ConfigInput), { withExtract: true });
  const address = await api.app.listen({ host: '127.0.0.1', port: 0 });
  return {
    api,
    port: Number(new URL(address).port),
    upstream,
    async tenantWithKey(name, credits = 100) {
      const tenant = await api.runtime.accounts.createTenant(name, { credits, tier: 'bulk' });
      return { tenantId: tenant.id, key: (await api.runtime.accounts.createKey(tenant.id)).key };
    },
    async close() {
      await api.close();
      await upstream.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** An HTTP/1.1 request as raw bytes, with Host and Content-Length. */
export const rawRequest = (method: string, url: string, headers: string[], body = ''): string =>
  [`${method} ${url} HTTP/1.1`, 'Host: 127.0.0.1', ...headers, `Content-Length: ${Buffer.byteLength(body)}`, '', body].join('\r\n');

/** Writes `bytes`, collects what comes back until the server closes or `maxMs` passes. */
export function exchange(port: number, bytes: string | Buffer, maxMs = 5000): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(text);
    };
    const timer = setTimeout(done, maxMs);
    socket.on('connect', () => socket.write(bytes));
    socket.on('data', (d: Buffer) => (text += d.toString('utf8')));
    socket.on('close', done);
    socket.on('error', done);
  });
}

/** Sends `bytes` and closes the connection after `afterMs`, whatever came back. */
export function sendAndHangUp(port: number, bytes: string, afterMs: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    socket.on('connect', () => socket.write(bytes));
    socket.on('data', (d: Buffer) => (text += d.toString('utf8')));
    socket.on('error', () => undefined);
    setTimeout(() => {
      socket.destroy();
      resolve(text);
    }, afterMs);
  });
}
