import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../testkit/cli.js';
import { freePort } from '../testkit/postgres.js';

/**
 * A process that cannot do its job exits non-zero with one clear line naming the fix: a taken port, an unusable data
 * folder, a database / index backend / shared store that does not answer at start (after server.start_wait_ms), a
 * config that fails validation. The dependencies here are a real TCP server on 127.0.0.1 that accepts every
 * connection and never answers: the worst case, where only a timeout ends the wait.
 */
const env = { NOTARY_MODEL_DOWNLOAD: 'false', NOTARY_EMBEDDING_MODEL: 'off', NOTARY_START_WAIT_MS: '1500' };

/** The one line of a failed start (what the CLI prints before exiting). */
function failureLine(stderr: string): string {
  const lines = stderr.split('\n').filter((l) => l.startsWith('notary: ') && !l.startsWith('notary: using Node'));
  expect(lines, stderr).toHaveLength(1);
  expect(stderr, 'no stack trace').not.toMatch(/^\s+at /m);
  return lines[0] ?? '';
}

describe('half-starts end with one line and a non-zero exit', () => {
  let blackHole: Server;
  let holePort: number;
  const sockets = new Set<Socket>();
  const dirs: string[] = [];
  const dataDir = (config?: object) => {
    const dir = mkdtempSync(path.join(tmpdir(), 'notary-half-start-'));
    dirs.push(dir);
    if (config) writeFileSync(path.join(dir, 'notary.json'), JSON.stringify(config));
    return dir;
  };

  beforeAll(async () => {
    blackHole = createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => blackHole.listen(0, '127.0.0.1', resolve));
    holePort = (blackHole.address() as { port: number }).port;
  });
  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => blackHole.close(() => resolve()));
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('a taken port: exits 1 naming --port, instead of running without listening', async () => {
    const started = Date.now();
    const res = await runCli(['--data', dataDir(), 'serve', '--no-crawl', '--port', String(holePort)], env, 60_000);
    expect(res.code, res.stderr).toBe(1);
    expect(failureLine(res.stderr)).toMatch(new RegExp(`127\\.0\\.0\\.1:${holePort} is already in use.*--port.*\\[listen_failed\\]`));
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it('a taken port with several API processes: the main process stops too', async () => {
    const res = await runCli(['--data', dataDir(), 'serve', '--no-crawl', '--workers', '2', '--port', String(holePort)], env, 60_000);
    expect(res.code, res.stderr).toBe(1);
    expect(res.stderr).toMatch(/is already in use.*\[listen_failed\]/);
    expect(res.stderr).toMatch(/could not start \(exit 1\); stopping/);
  });

  it('a data folder that is a file: exits 1 naming --data', async () => {
    const file = path.join(dataDir(), 'not-a-folder');
    writeFileSync(file, 'x');
    const res = await runCli(['--data', file, 'serve', '--no-crawl', '--port', String(await freePort())], env, 60_000);
    expect(res.code, res.stderr).toBe(1);
    expect(failureLine(res.stderr)).toMatch(/data folder .*not-a-folder.*--data \/ NOTARY_DATA_DIR.*\[data_dir_unusable\]/);
  });

  it('a config that fails validation: exits 1 naming the setting', async () => {
    const res = await runCli(['--data', dataDir(), 'serve', '--no-crawl'], { ...env, NOTARY_PORT: 'eighty' }, 60_000);
    expect(res.code, res.stderr).toBe(1);
    expect(failureLine(res.stderr)).toMatch(/NOTARY_PORT must be an integer.*\[invalid_config\]/);
  });

  const dependencies: Array<[string, () => Record<string, string>, () => object | undefined, RegExp]> = [
    [
      'PostgreSQL',
      () => ({ NOTARY_STORAGE: 'postgres', NOTARY_DATABASE_URL: `postgres://notary@127.0.0.1:${holePort}/notary` }),
      () => ({ storage: { connect_timeout_ms: 1000 } }),
      /PostgreSQL at 127\.0\.0\.1:\d+ did not answer at start.*storage\.postgres_url \(NOTARY_DATABASE_URL\)/,
    ],
    [
      'Meilisearch',
      () => ({ NOTARY_INDEX_BACKEND: 'meilisearch', NOTARY_MEILISEARCH_URL: `http://127.0.0.1:${holePort}` }),
      () => ({ indexer: { meilisearch: { request_timeout_ms: 1000 } } }),
      /Meilisearch at 127\.0\.0\.1:\d+ did not answer at start.*indexer\.meilisearch\.url \(NOTARY_MEILISEARCH_URL\)/,
    ],
    [
      'Redis',
      () => ({ NOTARY_STORES: 'redis', NOTARY_REDIS_URL: `redis://127.0.0.1:${holePort}` }),
      () => undefined,
      /Redis at 127\.0\.0\.1:\d+ did not answer at start.*stores\.redis_url \(NOTARY_REDIS_URL\)/,
    ],
  ];
  for (const [name, vars, config, message] of dependencies) {
    it(`${name} that accepts and never answers: exits 1 within a bound, naming the setting`, async () => {
      const started = Date.now();
      const res = await runCli(['--data', dataDir(config()), 'serve', '--no-crawl', '--port', String(await freePort())], { ...env, ...vars() }, 60_000);
      expect(res.code, res.stderr).toBe(1);
      expect(failureLine(res.stderr)).toMatch(message);
      expect(failureLine(res.stderr)).toMatch(/\[dependency_unavailable\]$/);
      expect(Date.now() - started).toBeLessThan(30_000);
    });
  }
});

