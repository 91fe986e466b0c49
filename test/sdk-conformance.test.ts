import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveMcpHttp } from '../mcp/server.js';
import { signExactPayment, type PaymentRequired } from '../sdk/ts/src/index.js';
import { available, repoRoot } from '../testkit/components.js';
import { docExample } from './support/doc-examples.js';
import { startSdkWorld, type SdkWorld } from '../testkit/sdk-live.js';

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

/** A snippet of docs/client-libraries.md as a program line: the documented address is this world's server. */
const fromDocs = (code: string) => code.trim().replaceAll('http://127.0.0.1:8080', world.env['NOTARY_LIVE_URL'] ?? '');
/** The documented snippets read the key from NOTARY_API_KEY. */
const docsEnv = () => ({ ...world.env, NOTARY_API_KEY: world.env['NOTARY_LIVE_KEY'] ?? '' });

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

/**
 * Each library as its users get it, outside this checkout: the npm tarball (built from tsconfig.build.json, packed,
 * installed into a fresh project, imported by plain Node and type-checked by a consumer), the Python wheel (built
 * by hatchling, installed into an empty folder) and the Go module (required by a fresh module through a replace
 * directive, vetted and run). Each makes one search against the live server with an API key.
 */
describe('the libraries as packages', () => {
  let scratch: string;
  beforeAll(() => {
    scratch = mkdtempSync(path.join(tmpdir(), 'notary-sdk-packages-'));
  });
  afterAll(() => {
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });
  /** What each consumer prints: the top result and the call's cost, from the live server. */
  const expectSearched = (result: Run): void => {
    expect(result.code, result.output).toBe(0);
    const line = result.output.trim().split('\n').at(-1) ?? '';
    expect(JSON.parse(line)).toMatchObject({ url: 'https://docs.test/vacuum', credits: 1, requestId: expect.stringMatching(/^req_/) });
  };

  it('npm: the packed tarball installs into a new project, imports from plain Node and type-checks', async () => {
    const pkg = path.join(scratch, 'ts-package');
    mkdirSync(pkg);
    for (const file of ['package.json', 'README.md']) copyFileSync(path.join(repoRoot, 'sdk/ts', file), path.join(pkg, file));
    const tsc = path.join(repoRoot, 'node_modules/typescript/bin/tsc');
    const built = await run(process.execPath, [tsc, '-p', 'sdk/ts/tsconfig.build.json', '--outDir', path.join(pkg, 'dist')], repoRoot, {});
    expect(built.code, built.output).toBe(0);
    const packed = await run('npm', ['pack', '--silent', '--pack-destination', scratch], pkg, {});
    expect(packed.code, packed.output).toBe(0);
    const tarball = path.join(scratch, packed.output.trim().split('\n').at(-1) ?? '');
    const app = path.join(scratch, 'ts-app');
    mkdirSync(app);
    writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
    // The library's two dependencies come from npm's cache (npm ci put them there), else from the registry.
    const installed = await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', tarball], app, {});
    expect(installed.code, installed.output).toBe(0);
    writeFileSync(
      path.join(app, 'search.mjs'),
      [
        "import { NotaryClient, apiKey } from '@notary-search/client';",
        fromDocs(docExample('client-ts').code),
        'console.log(JSON.stringify({ url: r.results[0].url, credits: r.creditsUsed, requestId: r.requestId }));',
      ].join('\n'),
    );
    expectSearched(await run(process.execPath, ['search.mjs'], app, docsEnv()));
    writeFileSync(
      path.join(app, 'check.ts'),
      [
        "import { NotaryClient, RateLimitError, apiKey, type SearchResult } from '@notary-search/client';",
        'export async function top(baseUrl: string, key: string): Promise<string | undefined> {',
        "  const r: SearchResult = await new NotaryClient({ baseUrl, payment: apiKey(key) }).search({ query: 'vacuum', depth: 1 });",
        '  const requestId: string = r.requestId;',
        '  return r.results[0]?.url ?? (requestId && RateLimitError.name);',
        '}',
      ].join('\n'),
    );
    const compilerOptions = { strict: true, noEmit: true, target: 'ES2022', lib: ['ES2022', 'DOM'], module: 'NodeNext', moduleResolution: 'NodeNext', types: [], skipLibCheck: true };
    writeFileSync(path.join(app, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['check.ts'] }));
    const typed = await run(process.execPath, [tsc, '-p', 'tsconfig.json'], app, {});
    expect(typed.code, typed.output).toBe(0);
  });

  it.runIf(available('the Python library venv (scripts/sdk-python-venv.sh)', sdkPython() !== null))('Python: the wheel builds, installs into an empty folder and carries py.typed', async () => {
    const python = sdkPython() as string;
    const wheels = path.join(scratch, 'wheels');
    const built = await run(python, ['-m', 'pip', 'wheel', '--no-deps', '--no-build-isolation', '--disable-pip-version-check', '-q', '-w', wheels, 'sdk/python'], repoRoot, {});
    expect(built.code, built.output).toBe(0);
    const wheel = readdirSync(wheels).find((name) => /^notary_client-.*\.whl$/.test(name));
    expect(wheel).toBeDefined();
    const site = path.join(scratch, 'python-site');
    const installed = await run(python, ['-m', 'pip', 'install', '--no-deps', '--disable-pip-version-check', '-q', '--target', site, path.join(wheels, wheel ?? '')], scratch, {});
    expect(installed.code, installed.output).toBe(0);
    const script = [
      'import json, os, pathlib, notary_client',
      'from notary_client import ApiKey, Client',
      `assert pathlib.Path(notary_client.__file__).is_relative_to(${JSON.stringify(site)}), notary_client.__file__`,
      "assert (pathlib.Path(notary_client.__file__).parent / 'py.typed').exists()",
      fromDocs(docExample('client-python').code),
      "print(json.dumps({'url': r['results'][0]['url'], 'credits': r.credits_used, 'requestId': r.request_id}))",
    ].join('\n');
    expectSearched(await run(python, ['-c', script], scratch, { ...docsEnv(), PYTHONPATH: site }));
  });

  it.runIf(available('Go (go on PATH)', hasGo))('Go: a new module requires sdk/go, vets and runs', async () => {
    const app = path.join(scratch, 'go-app');
    mkdirSync(app);
    const sdk = path.join(repoRoot, 'sdk/go');
    writeFileSync(path.join(app, 'go.mod'), `module example.com/app\n\ngo 1.22\n\nrequire github.com/notary-search/notary/sdk/go v0.0.0\n\nreplace github.com/notary-search/notary/sdk/go => ${sdk}\n`);
    copyFileSync(path.join(sdk, 'go.sum'), path.join(app, 'go.sum'));
    writeFileSync(
      path.join(app, 'main.go'),
      [
        'package main',
        '',
        'import (',
        '\t"context"',
        '\t"encoding/json"',
        '\t"fmt"',
        '\t"os"',
        '',
        '\tnotary "github.com/notary-search/notary/sdk/go"',
        ')',
        '',
        'func main() {',
        '\tctx := context.Background()',
        ...fromDocs(docExample('client-go').code).split('\n').map((line) => `\t${line}`),
        '\tif err != nil {',
        '\t\tpanic(err)',
        '\t}',
        '\tline, _ := json.Marshal(map[string]any{"url": r.Results[0].URL, "credits": r.CreditsUsed, "requestId": r.RequestID})',
        '\tfmt.Println(string(line))',
        '}',
        '',
      ].join('\n'),
    );
    for (const args of [['mod', 'tidy'], ['vet', './...']]) {
      const step = await run('go', args, app, {});
      expect(step.code, `go ${args.join(' ')}: ${step.output}`).toBe(0);
    }
    expectSearched(await run('go', ['run', '.'], app, docsEnv()));
  });
});

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
