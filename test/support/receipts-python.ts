import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { repoRoot } from '../../testkit/cli.js';

/**
 * The Python of the receipt verifier's venv (scripts/receipts-venv.sh, which scripts/test.sh runs), or
 * NOTARY_RECEIPTS_PYTHON. Missing, it fails the suite that needs it: it never skips.
 */
export function receiptsPython(): string {
  const python =
    process.env['NOTARY_RECEIPTS_PYTHON'] ??
    path.join(process.env['XDG_CACHE_HOME'] ?? path.join(homedir(), '.cache'), 'notary/receipts-venv/bin/python');
  if (!existsSync(python)) {
    throw new Error(`no receipt verifier python at ${python}: run scripts/receipts-venv.sh (scripts/test.sh does) or set NOTARY_RECEIPTS_PYTHON`);
  }
  return python;
}

export const PYTHON_VERIFIER = path.join(repoRoot, 'spec/verify-python/notary_verify.py');

/** Runs spec/verify-python/notary_verify.py with the venv's python. */
export function runPythonVerifier(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return runPython([PYTHON_VERIFIER, ...args]);
}

/** Runs the venv's python with these arguments. */
export function runPython(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(receiptsPython(), args, { cwd: repoRoot });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
