import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = path.join(repoRoot, 'bin/notary.js');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the real `notary` command line (bin/notary.js) as a child process. */
export function runCli(args: string[], env: Record<string, string> = {}, timeoutMs = 600_000): Promise<CliResult> {
  return runChild(process.execPath, [bin, ...args], { env, timeoutMs });
}

export interface RunningServer {
  url: string;
  child: ChildProcess;
  output: () => string;
  stop(): Promise<void>;
}

/** Starts `notary serve` and waits until /healthz answers. */
export async function startServer(args: string[], port: number, env: Record<string, string> = {}): Promise<RunningServer> {
  const child = spawn(process.execPath, [bin, 'serve', '--port', String(port), ...args], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
  });
  return waitForHealthz(child, `http://127.0.0.1:${port}`, 60_000, 'notary serve');
}

/** Collects a started server's output and waits until its /healthz answers (or it exits, or `timeoutMs` passes). */
export async function waitForHealthz(child: ChildProcess, url: string, timeoutMs: number, name: string): Promise<RunningServer> {
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited with ${child.exitCode}:\n${output}`);
    try {
      const res = await fetch(`${url}/healthz`);
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${name} did not answer /healthz within ${timeoutMs / 1000} s:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    url,
    child,
    output: () => output,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('close', () => resolve());
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
      }),
  };
}

/**
 * Runs a command to its end without blocking this process (servers a test runs in-process must stay free to answer),
 * killed after `timeoutMs`.
 */
export function runChild(
  command: string,
  args: string[],
  options: { cwd?: string; env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd ?? repoRoot, env: { ...process.env, ...options.env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 120_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
