/**
 * Runs inside a network namespace of its own (`unshare --net`, loopback only; see test/external-suites.test.ts):
 * starts the external suites' `notary serve` and runs Schemathesis against it with an API key and without one.
 * Generated extraction URLs name arbitrary hosts: here no request can leave the machine, whatever they name.
 * Prints each run's output after a `@@schemathesis {...}` line (label, exit code, milliseconds); exits 1 if any failed.
 * One worker: Hypothesis describes its filters by parsing source with `ast`, which is not thread-safe on Python 3.11
 * ("AST constructor recursion depth mismatch" runtime errors with two workers).
 * Usage: node --import tsx test/support/schemathesis-netns.ts <schemathesis> <examples> <seed> <report dir>
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { repoRoot } from '../../testkit/components.js';
import { startExternalWorld } from './external-world.js';

const [schemathesis = '', examples = '40', seed = '1', reports = '.'] = process.argv.slice(2);

function run(args: string[]): Promise<{ code: number | null; output: string; ms: number }> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    // Its working folder is the reports folder: Schemathesis keeps a crash cache (.schemathesis/) where it runs.
    const child = spawn(schemathesis, args, { cwd: reports, env: { ...process.env, NO_COLOR: '1' } });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 360_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output: stripVTControlCharacters(output), ms: Date.now() - started });
    });
  });
}

const world = await startExternalWorld();
let failed = false;
try {
  const runs: Array<[string, string[]]> = [
    ['api-key', [`Authorization: Bearer ${world.apiKey}`]],
    ['anonymous', []],
  ];
  for (const [label, headers] of runs) {
    const result = await run([
      '--config-file', path.join(repoRoot, 'test/fixtures/schemathesis.toml'),
      'run', `${world.server.url}/openapi.json`,
      '--checks', 'all', '--max-examples', examples, '--seed', seed, '--workers', '1', '--max-time', '90',
      '--request-timeout', '20', '--generation-database', 'none', '--no-color', '--report', 'junit', '--report-dir', path.join(reports, label),
      ...headers.flatMap((h) => ['--header', h]),
    ]);
    failed ||= result.code !== 0;
    process.stdout.write(`@@schemathesis ${JSON.stringify({ label, code: result.code, ms: result.ms })}\n${result.output}\n`);
  }
  const health = await fetch(`${world.server.url}/healthz`).then((r) => r.status, (err: unknown) => `unreachable (${String(err)})`);
  process.stdout.write(`@@healthz ${health}\n`);
  if (health !== 200) process.stdout.write(`notary serve's output:\n${world.server.output().slice(-4000)}\n`);
  failed ||= health !== 200;
} finally {
  await world.close();
}
process.exit(failed ? 1 : 0);
