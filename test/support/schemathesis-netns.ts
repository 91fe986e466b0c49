/**
 * Runs inside a network namespace of its own (`unshare --net`, loopback only; see test/external-suites.test.ts):
 * starts the external suites' `notary serve` and runs Schemathesis against it in every payment mode: with an API key,
 * without credentials, with MPP envelopes and, against a second server with x402 enabled on a local chain, with x402
 * payments. Schemathesis cannot sign: for MPP and x402 it sends a marker credential to a paying proxy
 * (test/support/paying-proxy.ts) that replaces it with one made for that exact request.
 * Generated extraction URLs name arbitrary hosts: here no request can leave the machine, whatever they name.
 * Prints each run's output after a `@@schemathesis {...}` line (label, exit code, milliseconds, and for the proxied
 * modes the proxy's counts); exits 1 if any failed.
 * One worker: Hypothesis describes its filters by parsing source with `ast`, which is not thread-safe on Python 3.11
 * ("AST constructor recursion depth mismatch" runtime errors with two workers).
 * Usage: node --import tsx test/support/schemathesis-netns.ts <schemathesis> <examples> <seed> <report dir>
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { repoRoot } from '../../testkit/components.js';
import { startExternalWorld, type ExternalWorld } from './external-world.js';
import { mppPayer, startPayingProxy, x402Payer, type PayingProxy, type PayingProxyStats } from './paying-proxy.js';
import { payerClient, startChainWorld, startFacilitatorInProcess } from '../../testkit/x402.js';

const [schemathesis = '', examples = '40', seed = '1', reports = '.'] = process.argv.slice(2);

function schemathesisRun(args: string[]): Promise<{ code: number | null; output: string; ms: number }> {
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

/** The MPP marker and the x402 marker: what Schemathesis sends and the proxy replaces. */
const MPP_MARKER = 'MPP envelope=signed-by-the-paying-proxy';
const X402_MARKER = 'paid-by-the-paying-proxy';

let failed = false;
/** NOTARY_SCHEMATHESIS_RUNS (e.g. "x402" or "api-key,mpp") runs only those; all four by default. */
const only = new Set((process.env['NOTARY_SCHEMATHESIS_RUNS'] ?? 'api-key,anonymous,mpp,x402').split(',').map((r) => r.trim()));

/** One Schemathesis run against `base` (its /openapi.json), every check unless `exclude` names some. */
async function runSchemathesis(label: string, base: string, headers: string[], exclude: string[] = [], proxy?: PayingProxy): Promise<void> {
  if (!only.has(label)) return;
  const result = await schemathesisRun([
    '--config-file', path.join(repoRoot, 'test/fixtures/schemathesis.toml'),
    'run', `${base}/openapi.json`,
    '--checks', 'all', ...(exclude.length > 0 ? ['--exclude-checks', exclude.join(',')] : []),
    '--max-examples', examples, '--seed', seed, '--workers', '1', '--max-time', '90',
    '--request-timeout', '20', '--generation-database', 'none', '--no-color', '--report', 'junit', '--report-dir', path.join(reports, label),
    ...headers.flatMap((h) => ['--header', h]),
  ]);
  const stats: PayingProxyStats | undefined = proxy?.stats;
  // A proxied run that paid for nothing, had no paid call served, or whose proxy failed, drove nothing: a failure.
  const proxyFailed = stats !== undefined && (stats.paid === 0 || stats.charged === 0 || stats.errors.length > 0);
  failed ||= result.code !== 0 || proxyFailed;
  process.stdout.write(`@@schemathesis ${JSON.stringify({ label, code: result.code, ms: result.ms, ...(stats ? { proxy: stats } : {}) })}\n${result.output}\n`);
}

async function healthy(world: ExternalWorld): Promise<void> {
  const health = await fetch(`${world.server.url}/healthz`).then((r) => r.status, (err: unknown) => `unreachable (${String(err)})`);
  process.stdout.write(`@@healthz ${health}\n`);
  if (health !== 200) process.stdout.write(`notary serve's output:\n${world.server.output().slice(-4000)}\n`);
  failed ||= health !== 200;
}

// API key, no credentials and MPP: one server (both modes are on by default).
if (['api-key', 'anonymous', 'mpp'].some((l) => only.has(l))) {
  const world = await startExternalWorld();
  try {
    await runSchemathesis('api-key', world.server.url, [`Authorization: Bearer ${world.apiKey}`]);
    await runSchemathesis('anonymous', world.server.url, []);
    const proxy = await startPayingProxy({
      upstream: world.server.url,
      markerHeader: 'authorization',
      markerValue: MPP_MARKER,
      pay: mppPayer({ upstream: world.server.url, parties: world.parties, totalCredits: 1_000 }),
    });
    try {
      await runSchemathesis('mpp', proxy.url, [`Authorization: ${MPP_MARKER}`], [], proxy);
    } finally {
      await proxy.close();
    }
    await healthy(world);
  } finally {
    await world.close();
  }
}

// x402: a second server with the mode on, paying on a local chain through `notary facilitator` (built in process).
// ignored_auth is excluded here only: it accepts 401 or 403 as the refusal of a call without valid credentials, and
// an x402 server refuses with 402 Payment Required (the standard's challenge), which the other runs' probes never see.
if (only.has('x402')) {
  const chain = await startChainWorld({ payers: 1, mint: 10n ** 15n });
  try {
    const facilitatorDir = mkdtempSync(path.join(tmpdir(), 'notary-external-facilitator-'));
    const facilitator = await startFacilitatorInProcess(chain, facilitatorDir);
    try {
      const x402World = await startExternalWorld({
        payments: {
          anonymous_tier: 'bulk',
          modes: {
            x402: {
              enabled: true,
              network: chain.chain.network,
              asset: chain.token.address,
              asset_name: chain.token.name,
              asset_version: chain.token.version,
              pay_to: chain.payTo,
              facilitator_url: facilitator.url,
              rpc_url: chain.chain.rpcUrl,
              receipt_keys: facilitator.jwks.keys,
              tier: 'bulk',
            },
          },
        },
      });
      try {
        const payer = chain.payers[0];
        if (!payer) throw new Error('the chain world has no payer');
        const proxy = await startPayingProxy({
          upstream: x402World.server.url,
          markerHeader: 'payment-signature',
          markerValue: X402_MARKER,
          // Schemathesis also makes up an Authorization value for the API key and MPP alternatives of the same
          // operations; an x402 payer sends none (with one, the server rightly answers 401 invalid_api_key).
          alsoDrop: ['authorization'],
          pay: x402Payer(payerClient(chain, payer).client),
        });
        try {
          await runSchemathesis('x402', proxy.url, [`PAYMENT-SIGNATURE: ${X402_MARKER}`], ['ignored_auth'], proxy);
        } finally {
          await proxy.close();
        }
        await healthy(x402World);
      } finally {
        await x402World.close();
      }
    } finally {
      await facilitator.stop();
      rmSync(facilitatorDir, { recursive: true, force: true });
    }
  } finally {
    await chain.close();
  }
}
process.exit(failed ? 1 : 0);
