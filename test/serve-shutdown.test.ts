import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, startServer } from '../testkit/cli.js';
import { freePort } from '../testkit/postgres.js';

const env = { NOTARY_MODEL_DOWNLOAD: 'false', NOTARY_EMBEDDING_MODEL: 'off' };

describe('a stop finishes within server.shutdown_timeout_ms', () => {
  it('SIGTERM with an extraction in flight against a site that never answers: exits within the bound, saying what was cut short', async () => {
    const hole = createServer((socket) => socket.on('error', () => undefined));
    await new Promise<void>((resolve) => hole.listen(0, '127.0.0.1', resolve));
    const holePort = (hole.address() as { port: number }).port;
    const data = mkdtempSync(path.join(tmpdir(), 'notary-shutdown-'));
    try {
      writeFileSync(
        path.join(data, 'notary.json'),
        JSON.stringify({ server: { shutdown_timeout_ms: 1500 }, extract: { allow_private_networks: true, respect_robots_txt: false, total_timeout_ms: 120_000 } }),
      );
      const created = await runCli(['--data', data, 'keys', 'create', '--tenant', 'acme', '--credits', '10'], env);
      const key = created.stdout.trim().split('\n').pop() ?? '';
      const server = await startServer(['--data', data, '--no-crawl'], await freePort(), env);
      const controller = new AbortController();
      const inFlight = fetch(`${server.url}/v1/extract`, {
        method: 'POST',
        signal: controller.signal,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ url: `http://127.0.0.1:${holePort}/page`, mode: 'text' }),
      }).catch(() => null);
      await new Promise((r) => setTimeout(r, 700));
      const started = Date.now();
      const exited = new Promise<number | null>((resolve) => server.child.once('exit', (code) => resolve(code)));
      server.child.kill('SIGTERM');
      const code = await Promise.race([exited, new Promise<'hung'>((r) => setTimeout(() => r('hung'), 20_000))]);
      if (code === 'hung') server.child.kill('SIGKILL');
      controller.abort();
      await inFlight;
      expect(code, server.output()).toBe(1);
      expect(Date.now() - started).toBeLessThan(1500 + 3000);
      expect(server.output()).toMatch(/shutdown did not finish within 1500 ms \(server\.shutdown_timeout_ms\)/);
    } finally {
      hole.close();
      rmSync(data, { recursive: true, force: true });
    }
  }, 60_000);
});
