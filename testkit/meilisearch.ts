import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { available, repoRoot } from './components.js';
import { freePort } from './postgres.js';

/** ../shared/bin/meilisearch beside the checkout, or NOTARY_MEILISEARCH_BIN. */
export const meilisearchBin = process.env['NOTARY_MEILISEARCH_BIN'] ?? path.resolve(repoRoot, '..', 'shared', 'bin', 'meilisearch');

/** Whether the suite can run: without the binary it skips locally and fails under CI=true. */
export function meilisearchAvailable(): boolean {
  return available(`Meilisearch (${meilisearchBin})`, existsSync(meilisearchBin));
}

export interface TestMeilisearch {
  url: string;
  masterKey: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

/** A throwaway Meilisearch on 127.0.0.1 in a temporary folder, as ../shared/bin/README.md describes. */
export async function startMeilisearch(): Promise<TestMeilisearch> {
  const dir = mkdtempSync(path.join(tmpdir(), 'notary-meili-'));
  const port = await freePort();
  // Hex, not base64url: a key that starts with '-' is read by meilisearch's argument parser as a flag (it failed CI
  // once with "unexpected argument '-m' found").
  const masterKey = randomBytes(24).toString('hex');
  const child = spawn(
    meilisearchBin,
    ['--db-path', path.join(dir, 'db'), '--http-addr', `127.0.0.1:${port}`, '--master-key', masterKey, '--no-analytics', '--env', 'development', '--max-indexing-memory', '256MiB', '--log-level', 'WARN'],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`meilisearch exited with ${child.exitCode}: ${stderr}`);
    try {
      const res = await fetch(`${url}/health`);
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`meilisearch did not start within 30 s: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url,
    masterKey,
    process: child,
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
