import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createConnection } from 'node:net';
import { available } from './components.js';
import { freePort } from './postgres.js';

/** Debian's redis-server, or NOTARY_REDIS_SERVER_BIN. */
export const redisServerBin = process.env['NOTARY_REDIS_SERVER_BIN'] ?? '/usr/bin/redis-server';

export function redisAvailable(): boolean {
  if (process.env['NOTARY_TEST_REDIS_URL']) return true;
  return available(`redis-server (${redisServerBin})`, existsSync(redisServerBin));
}

export interface TestRedis {
  url: string;
  stop(): Promise<void>;
}

/** A throwaway Redis on 127.0.0.1 without persistence, or the server NOTARY_TEST_REDIS_URL names. */
export async function startRedis(): Promise<TestRedis> {
  const external = process.env['NOTARY_TEST_REDIS_URL'];
  if (external) return { url: external, stop: async () => {} };
  const port = await freePort();
  const child = spawn(redisServerBin, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--protected-mode', 'yes'], { stdio: 'ignore' });
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}`);
    const up = await new Promise<boolean>((resolve) => {
      const socket = createConnection({ host: '127.0.0.1', port }, () => {
        socket.end();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (up) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error('redis-server did not start within 20 s');
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
    },
  };
}
