import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveMcpHttp } from '../mcp/server.js';
import { signExactPayment, type PaymentRequired } from '../sdk/ts/src/index.js';
import { available, repoRoot } from './support/components.js';
import { startSdkWorld, type SdkWorld } from './support/sdk-live.js';

/**
 * The client libraries' shared conformance: one live `notary serve` (started once), and each library's own test
 * runner against it (vitest for TypeScript, pytest for Python, go test for Go), each also passing spec/vectors.
 */
interface Run {
  code: number | null;
  output: string;
}

function run(command: string, args: string[], cwd: string, env: Record<string, string>, timeoutMs = 600_000): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: { ...process.env, ...env } });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      // Runners colour their summaries (vitest even without a terminal): plain text to match against.
      resolve({ code, output: stripVTControlCharacters(output) });
    });
  });
}

/** The venv with the Python library's dependencies (scripts/sdk-python-venv.sh), unless NOTARY_SDK_PYTHON names one. */
function sdkPython(): string | null {
  if (process.env['NOTARY_SDK_PYTHON']) return process.env['NOTARY_SDK_PYTHON'];
  const made = spawnSync('bash', [path.join(repoRoot, 'scripts/sdk-python-venv.sh')], { encoding: 'utf8' });
  return made.status === 0 ? made.stdout.trim() : null;
}

const hasGo = spawnSync('go', ['version']).status === 0;

let world: SdkWorld;
beforeAll(async () => {
  world = await startSdkWorld();
}, 120_000);
afterAll(async () => {
  await world?.close();
});

/** Passed, and nothing skipped: every case of every library runs here (vectors, live API key, x402, MPP, receipts). */
function expectPassed(result: Run, summary: RegExp, skipped: RegExp): void {
  // The runner's own output is the failure message: it names the case that failed.
  expect(result.code, result.output).toBe(0);
  expect(result.output).toMatch(summary);
  expect(result.output, result.output).not.toMatch(skipped);
}

/** How many cases a runner passed, said in the run's log. */
function report(library: string, passed: number): void {
  expect(passed).toBeGreaterThan(0);
  process.stderr.write(`sdk conformance: ${library}: ${passed} passed, 0 skipped\n`);
}

/** What each library's live suite pays by x402 (atomic units of the test token): depth 1 by PAYMENT-SIGNATURE, depth 2 by X-402-Receipt. */
const X402_PAID_PER_LIBRARY = 1000n + 2000n;
let librariesRun = 0n;
let mcpPaid = 0n;

describe('client libraries against a live notary serve', () => {
  it('TypeScript (vitest): live suite', async () => {
    const result = await run(process.execPath, [path.join(repoRoot, 'node_modules/vitest/vitest.mjs'), 'run', '--project', 'sdk-ts-live'], repoRoot, world.env);
    expectPassed(result, /Tests\s+.*\d+ passed/, /\d+ skipped/);
    report('TypeScript (vitest)', Number(/Tests\s+(\d+) passed/.exec(result.output)?.[1] ?? 0));
    librariesRun++;
  });

  it.runIf(available('the Python library venv (scripts/sdk-python-venv.sh)', sdkPython() !== null))('Python (pytest): vectors and live suite, sync and async', async () => {
    const python = sdkPython() as string;
    const result = await run(python, ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', 'tests'], path.join(repoRoot, 'sdk/python'), world.env);
    expectPassed(result, /\d+ passed/, /\d+ skipped/);
    report('Python (pytest)', Number(/(\d+) passed/.exec(result.output)?.[1] ?? 0));
    librariesRun++;
  });

  it.runIf(available('Go (go on PATH)', hasGo))('Go (go test): vectors and live suite', async () => {
    const result = await run('go', ['test', '-count=1', '-v', './...'], path.join(repoRoot, 'sdk/go'), world.env);
    expectPassed(result, /^ok\s+/m, /--- SKIP/);
    report('Go (go test)', result.output.match(/^--- PASS/gm)?.length ?? 0);
    librariesRun++;
  });

  it('notary mcp with x402 (the x402 MCP transport): the agent pays a tool call from its own wallet', async () => {
    const server = await serveMcpHttp({ baseUrl: world.env['NOTARY_LIVE_URL'] ?? '' });
    const agent = new Client({ name: 'x402-agent', version: '1.0.0' });
    try {
      await agent.connect(new StreamableHTTPClientTransport(new URL(server.url)));
      const call = { name: 'notary_search', arguments: { query: 'vacuum dead tuples', depth: 1 } };
      const unpaid = (await agent.callTool(call)) as { isError?: boolean; structuredContent?: Record<string, unknown> };
      expect(unpaid.isError).toBe(true);
      const required = unpaid.structuredContent as unknown as PaymentRequired;
      expect(required.x402Version).toBe(2);
      expect(required.accepts[0]?.amount).toBe('1000');
      const wallet = privateKeyToAccount(world.env['NOTARY_LIVE_X402_KEY_MCP'] as `0x${string}`);
      const payment = await signExactPayment(wallet, required, required.accepts[0] as PaymentRequired['accepts'][number]);
      const paid = (await agent.callTool({ ...call, _meta: { 'x402/payment': payment } })) as {
        isError?: boolean;
        structuredContent?: { cost: { credits_used: number } };
        _meta?: Record<string, { success?: boolean; payer?: string }>;
      };
      expect(paid.isError ?? false).toBe(false);
      expect(paid.structuredContent?.cost.credits_used).toBe(1);
      expect(paid._meta?.['x402/payment-response']?.success).toBe(true);
      expect(paid._meta?.['x402/payment-response']?.payer?.toLowerCase()).toBe(wallet.address.toLowerCase());
      mcpPaid += 1000n;
    } finally {
      await agent.close();
      await server.close();
    }
  });

  it("the chain agrees: the service's payTo received exactly what the libraries paid by x402", async () => {
    expect(librariesRun).toBe(3n);
    expect(await world.chain.token.balanceOf(world.chain.payTo)).toBe(X402_PAID_PER_LIBRARY * librariesRun + mcpPaid);
    expect(mcpPaid).toBe(1000n);
  });
});
