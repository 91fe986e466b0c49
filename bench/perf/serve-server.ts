/**
 * The server side of the serve phase (`npm run bench`): `notary serve` child processes over the benchmark's data
 * folder, the CPU their processes and threads use, and the API key the load runs with.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { freePort } from '../../testkit/postgres.js';
import { processTreeCpuMs } from './machine.js';

export interface ServerHandle {
  url: string;
  child: ChildProcess;
  /** CPU time (ms) the server's processes and threads have used so far; null where /proc cannot tell. */
  cpuMs(): number | null;
  stop(): Promise<void>;
}

/** Starts `notary serve` over `dataDir` and waits for both /healthz and, with several processes, every process. */
export async function startServe(repoRoot: string, configFile: string, dataDir: string, workers: number): Promise<ServerHandle> {
  const port = await freePort();
  const child = spawn(process.execPath, [path.join(repoRoot, 'bin', 'notary.js'), '--config', configFile, '--data', dataDir, 'serve', '--no-crawl', '--port', String(port), '--workers', String(workers)], {
    cwd: repoRoot,
    // BENCH_SERVE_NODE_OPTIONS reaches the server (e.g. "--cpu-prof --cpu-prof-dir=DIR" to profile it under load).
    env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', ...(process.env['BENCH_SERVE_NODE_OPTIONS'] ? { NODE_OPTIONS: process.env['BENCH_SERVE_NODE_OPTIONS'] } : {}) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 180_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`notary serve exited with ${child.exitCode}:\n${output.slice(-4000)}`);
    const listening = (output.match(/notary listening on/g) ?? []).length;
    if (listening >= workers) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`notary serve did not start within 180 s:\n${output.slice(-4000)}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return {
    url,
    child,
    cpuMs: () => (child.pid === undefined ? null : processTreeCpuMs(child.pid)),
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('close', () => resolve());
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 15_000).unref();
      }),
  };
}

/** `notary keys create` for the benchmark's tenant (a tier without limits, a billion credits): the plaintext key. */
export async function createBenchKey(repoRoot: string, configFile: string, dataDir: string): Promise<string> {
  const keyOut = await new Promise<string>((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [path.join(repoRoot, 'bin', 'notary.js'), '--config', configFile, '--data', dataDir, 'keys', 'create', '--tenant', 'bench', '--credits', '1000000000', '--tier', 'bench'],
      { cwd: repoRoot, env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '' } },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`keys create exited ${code}: ${err}`))));
  });
  return keyOut.trim().split('\n').pop() ?? '';
}
