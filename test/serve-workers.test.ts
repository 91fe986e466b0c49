import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { request } from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, startServer } from '../testkit/cli.js';
import { freePort } from '../testkit/postgres.js';

/** `notary serve --workers 2`: two API processes on one port and one data folder, the main process supervising. */
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const env = { NOTARY_MODEL_DOWNLOAD: 'false', NOTARY_EMBEDDING_MODEL: 'off', NOTARY_LOG_LEVEL: 'info' };

async function balance(data: string): Promise<number> {
  const listed = await runCli(['--data', data, 'keys', 'list', '--json'], env);
  const [key] = JSON.parse(listed.stdout) as Array<{ balance: number }>;
  return key?.balance ?? Number.NaN;
}

describe('notary serve with several API processes', () => {
  it('answers from both processes, charges each call once across them (Idempotency-Key too), and stops them all on SIGTERM', async () => {
    const data = mkdtempSync(path.join(tmpdir(), 'notary-serve-workers-'));
    dirs.push(data);
    const created = await runCli(['--data', data, 'keys', 'create', '--tenant', 'acme', '--credits', '1000', '--tier', 'pro'], env);
    expect(created.code, created.stderr).toBe(0);
    const key = created.stdout.trim().split('\n').pop() ?? '';
    const limited = await runCli(['--data', data, 'keys', 'create', '--tenant', 'small', '--credits', '1000', '--tier', 'free'], env);
    const freeKey = limited.stdout.trim().split('\n').pop() ?? '';
    const port = await freePort();
    const server = await startServer(['--data', data, '--no-crawl', '--workers', '2'], port, env);
    const pids = new Set<number>();
    try {
      // Both API processes listen before the suite goes on (the first to answer /healthz is only one of them).
      for (let i = 0; i < 300 && [...server.output().matchAll(/"pid":(\d+)[^\n]*notary listening on/g)].length < 2; i++) await new Promise((r) => setTimeout(r, 200));
      for (const m of server.output().matchAll(/"pid":(\d+)[^\n]*notary listening on/g)) pids.add(Number(m[1]));
      expect(pids.size).toBe(2);
      expect(server.output()).toMatch(/serving with 2 API processes/);
      const before = await balance(data);
      // A connection of its own per call, so the main process hands them to both API processes.
      const search = (query: string, headers: Record<string, string> = {}, bearer = key) =>
        new Promise<{ status: number; body: string }>((resolve, reject) => {
          const body = JSON.stringify({ query, depth: 1 });
          const req = request(
            `${server.url}/v1/search`,
            {
              method: 'POST',
              agent: false,
              headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers },
            },
            (res) => {
              let text = '';
              res.on('data', (d: Buffer) => (text += d.toString()));
              res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
            },
          );
          req.on('error', reject);
          req.end(body);
        });
      const plain = await Promise.all(Array.from({ length: 24 }, (_, i) => search(`query ${i}`)));
      expect(plain.map((r) => r.status)).toEqual(Array(24).fill(200));
      const afterPlain = await balance(data);
      const price = (before - afterPlain) / 24;
      expect(price).toBeGreaterThan(0);
      expect(Number.isInteger(price)).toBe(true);
      // The same Idempotency-Key sent 10 times at once, to both processes: charged once.
      const same = await Promise.all(Array.from({ length: 10 }, () => search('same query', { 'idempotency-key': 'k-workers-1' })));
      expect(same.every((r) => r.status === 200 || r.status === 409)).toBe(true);
      expect(same.filter((r) => r.status === 200).length).toBeGreaterThan(0);
      expect(await balance(data)).toBe(afterPlain - price);
      // The free tier's burst is 10 (60 a minute): one limit across both processes, not 10 in each.
      const bursts = await Promise.all(Array.from({ length: 24 }, (_, i) => search(`burst ${i}`, {}, freeKey)));
      const allowed = bursts.filter((r) => r.status === 200).length;
      expect(bursts.filter((r) => r.status !== 200).every((r) => r.status === 429)).toBe(true);
      expect(allowed).toBeGreaterThanOrEqual(10);
      expect(allowed).toBeLessThanOrEqual(13);
      const served = new Set([...server.output().matchAll(/"pid":(\d+)[^\n]*"url":"\/v1\/search"/g)].map((m) => Number(m[1])));
      expect(served).toEqual(pids);
    } finally {
      await server.stop();
    }
    expect(server.child.exitCode).toBe(0);
    for (const pid of pids) expect(() => process.kill(pid, 0)).toThrow();
  }, 240_000);

  it('API processes stop when the main process is killed', async () => {
    const data = mkdtempSync(path.join(tmpdir(), 'notary-serve-workers-'));
    dirs.push(data);
    const server = await startServer(['--data', data, '--no-crawl', '--workers', '2'], await freePort(), env);
    const listening = () => [...server.output().matchAll(/"pid":(\d+)[^\n]*notary listening on/g)].map((m) => Number(m[1]));
    for (let i = 0; i < 300 && listening().length < 2; i++) await new Promise((r) => setTimeout(r, 200));
    const pids = listening();
    expect(pids).toHaveLength(2);
    server.child.kill('SIGKILL');
    const alive = (pid: number) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    for (let i = 0; i < 150 && pids.some(alive); i++) await new Promise((r) => setTimeout(r, 200));
    expect(pids.filter(alive)).toEqual([]);
  }, 120_000);
});
