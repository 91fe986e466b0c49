import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { available, repoRoot } from '../testkit/components.js';
import { startExternalWorld, type ExternalWorld } from './support/external-world.js';
import { freePort } from '../testkit/postgres.js';

/**
 * Suites we did not write, at the versions scripts/external-suites.sh pins: Schemathesis (every check, with an API
 * key made by the CLI, without credentials, with MPP envelopes and with x402 payments made for each request by a
 * paying proxy) against a live `notary serve` from its own /openapi.json, Spectral's
 * OWASP ruleset over the committed OpenAPI document (spec/.spectral.yaml), and the MCP conformance suite against
 * `notary mcp --http` (mcp/conformance-baseline.yml lists the scenarios a search server does not serve). Any
 * finding fails. Without the tools the suites are skipped on a developer's machine and fail under CI=true.
 */

interface Run {
  code: number | null;
  output: string;
  ms: number;
}

function run(command: string, args: string[], env: Record<string, string> = {}, timeoutMs = 300_000): Promise<Run> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: repoRoot, env: { ...process.env, NO_COLOR: '1', ...env } });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output: stripVTControlCharacters(output), ms: Date.now() - started });
    });
  });
}

/** Where the pinned tools are: NOTARY_* from scripts/test.sh, else what the script installs (or finds) now. */
function tools(): Record<string, string> {
  const names = ['NOTARY_SCHEMATHESIS', 'NOTARY_SPECTRAL', 'NOTARY_EXTERNAL_NODE_MODULES', 'NOTARY_MCP_CONFORMANCE'];
  if (names.every((n) => process.env[n])) return Object.fromEntries(names.map((n) => [n, process.env[n] ?? '']));
  const made = spawnSync('bash', [path.join(repoRoot, 'scripts/external-suites.sh'), '--env'], { encoding: 'utf8', timeout: 600_000 });
  if (made.status !== 0) return {};
  const found: Record<string, string> = {};
  for (const line of made.stdout.split('\n')) {
    const match = /^export (NOTARY_[A-Z_]+)=(.*)$/.exec(line);
    if (match?.[1] && match[2]) found[match[1]] = match[2];
  }
  return found;
}

const found = tools();
const has = (name: string): boolean => Boolean(found[name] && existsSync(found[name]));
/** One line per suite in the run's log: what ran and how long it took. */
const note = (line: string): boolean => process.stderr.write(`external suites: ${line}\n`);

describe.runIf(available('Spectral with the OWASP ruleset (scripts/external-suites.sh)', has('NOTARY_SPECTRAL')))('Spectral: the OWASP API Security ruleset over spec/openapi.json', () => {
  it('finds nothing: every rule of spec/.spectral.yaml is satisfied or switched off there with its reason', async () => {
    const result = await run(process.execPath, [found['NOTARY_SPECTRAL'] ?? '', 'lint', 'spec/openapi.json', '--ruleset', 'spec/.spectral.yaml', '--fail-severity', 'hint', '--format', 'text'], {
      NODE_PATH: found['NOTARY_EXTERNAL_NODE_MODULES'] ?? '',
    });
    expect(result.output, result.output).toMatch(/No results with a severity of 'hint' or higher found!/);
    expect(result.code, result.output).toBe(0);
    note(`spectral: 0 findings in ${result.ms} ms`);
  });

  it('the notary-* rules that stand in for switched-off ones find what they are for', async () => {
    type Doc = { paths: Record<string, Record<string, { requestBody: { content: Record<string, { schema: { properties: Record<string, Record<string, unknown>> } }> }; parameters: Array<{ schema: Record<string, unknown> }>; responses: Record<string, { headers?: Record<string, unknown> }> }>> };
    const doc = JSON.parse(readFileSync(path.join(repoRoot, 'spec/openapi.json'), 'utf8')) as Doc;
    const search = doc.paths['/v1/search']?.['post'];
    delete search?.requestBody.content['application/json']?.schema.properties['query']?.['maxLength'];
    delete search?.responses['400']?.headers?.['RateLimit'];
    delete doc.paths['/v1/receipts/log/entries']?.['get']?.parameters[0]?.schema['maxLength'];
    delete doc.paths['/v1/extract']?.['post']?.responses['429'];
    const dir = mkdtempSync(path.join(tmpdir(), 'notary-spectral-'));
    try {
      writeFileSync(path.join(dir, 'openapi.json'), JSON.stringify(doc));
      const result = await run(process.execPath, [found['NOTARY_SPECTRAL'] ?? '', 'lint', path.join(dir, 'openapi.json'), '--ruleset', 'spec/.spectral.yaml', '--format', 'text'], {
        NODE_PATH: found['NOTARY_EXTERNAL_NODE_MODULES'] ?? '',
      });
      expect(result.code).not.toBe(0);
      for (const finding of [/notary-request-string-limit .*properties\/query/, /notary-request-string-limit .*entries\/get\/parameters/, /notary-paid-rate-limit .*search\/post\/responses\/400/, /notary-paid-problems .*429/]) {
        expect(result.output).toMatch(finding);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** Network namespaces (unshare from util-linux, ip from iproute2, root): Schemathesis runs where only loopback exists. */
const hasNetns = spawnSync('unshare', ['--net', '--', 'ip', 'link', 'set', 'lo', 'up']).status === 0;

describe.runIf(available('Schemathesis (scripts/external-suites.sh) and a network namespace (unshare --net, as root)', has('NOTARY_SCHEMATHESIS') && hasNetns))('Schemathesis against notary serve', () => {
  let reports: string;
  beforeAll(() => {
    reports = mkdtempSync(path.join(tmpdir(), 'notary-schemathesis-'));
  });
  afterAll(() => {
    if (reports) rmSync(reports, { recursive: true, force: true });
  });

  it('finds nothing with every check, with an API key, without credentials, with MPP envelopes and with x402 payments', async () => {
    const examples = process.env['NOTARY_SCHEMATHESIS_EXAMPLES'] ?? '40';
    const seed = process.env['NOTARY_SCHEMATHESIS_SEED'] ?? '1';
    // The server and the tool in a network namespace of their own: generated extraction URLs cannot leave the machine.
    const result = await run('unshare', [
      '--net', '--', 'sh', '-c', 'ip link set lo up && exec "$@"', 'sh',
      process.execPath, '--import', 'tsx', 'test/support/schemathesis-netns.ts', found['NOTARY_SCHEMATHESIS'] ?? '', examples, seed, reports,
    ], { NOTARY_SCHEMATHESIS_RUNS: 'api-key,anonymous,mpp,x402' }, 900_000);
    type Proxy = { marked: number; paid: number; charged: number; statuses: Record<string, number>; errors: string[] };
    const runs = [...result.output.matchAll(/^@@schemathesis (.*)$/gm)].map((m) => JSON.parse(m[1] ?? '{}') as { label: string; code: number; ms: number; proxy?: Proxy });
    expect(runs.map((r) => r.label), result.output).toEqual(['api-key', 'anonymous', 'mpp', 'x402']);
    // Both servers (API key and MPP; x402) outlived every generated request.
    expect(result.output.match(/^@@healthz .*$/gm), 'the servers outlived every generated request').toEqual(['@@healthz 200', '@@healthz 200']);
    for (const r of runs.filter((x) => x.label === 'mpp' || x.label === 'x402')) {
      // The paying proxy made credentials for the marked requests, and paid calls were served and charged.
      expect(r.proxy?.errors, r.label).toEqual([]);
      expect(r.proxy?.paid, r.label).toBeGreaterThan(0);
      expect(r.proxy?.charged, r.label).toBeGreaterThan(0);
    }
    expect(result.code, result.output).toBe(0);
    for (const [i, part] of result.output.split(/^@@schemathesis .*$/m).slice(1).entries()) {
      const r = runs[i];
      expect(part, part).toMatch(/Selected: (\d+)\/\1/);
      const operations = /Tested: (\d+)/.exec(part)?.[1] ?? '?';
      const cases = /(\d+) generated/.exec(part)?.[1] ?? '?';
      const paid = r?.proxy ? `; the proxy paid ${r.proxy.paid} of ${r.proxy.marked} marked requests, ${r.proxy.charged} paid calls served (answers ${JSON.stringify(r.proxy.statuses)})` : '';
      note(`schemathesis ${r?.label}: ${operations} operations, ${cases} generated cases, 0 failures in ${r?.ms} ms (seed ${seed}, ${examples} examples an operation${paid})`);
    }
  }, 900_000);
});

describe.runIf(available('the MCP conformance suite (scripts/external-suites.sh)', has('NOTARY_MCP_CONFORMANCE')))('MCP conformance against notary mcp --http', () => {
  let world: ExternalWorld;
  let mcp: ChildProcess;
  let url: string;
  let results: string;
  beforeAll(async () => {
    world = await startExternalWorld();
    results = mkdtempSync(path.join(tmpdir(), 'notary-mcp-conformance-'));
    const port = await freePort();
    url = `http://127.0.0.1:${port}/mcp`;
    mcp = spawn(process.execPath, [path.join(repoRoot, 'bin/notary.js'), 'mcp', '--http', '--port', String(port), '--url', world.server.url], {
      cwd: repoRoot,
      env: { ...process.env, NOTARY_API_KEY: world.apiKey },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let log = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`notary mcp --http did not start within 30 s:\n${log}`)), 30_000);
      mcp.stderr?.on('data', (d: Buffer) => {
        log += d.toString();
        if (log.includes('Streamable HTTP at')) {
          clearTimeout(timer);
          resolve();
        }
      });
      mcp.once('exit', (code) => reject(new Error(`notary mcp --http exited with ${code}:\n${log}`)));
    });
  }, 180_000);
  afterAll(async () => {
    if (mcp && mcp.exitCode === null) {
      const closed = new Promise((resolve) => mcp.once('close', resolve));
      mcp.kill('SIGTERM');
      setTimeout(() => mcp.kill('SIGKILL'), 10_000).unref();
      await closed;
    }
    await world?.close();
    if (results) rmSync(results, { recursive: true, force: true });
  });

  it('passes every scenario a search server serves; the rest are the baseline, each with its reason', async () => {
    const baseline = path.join(repoRoot, 'mcp/conformance-baseline.yml');
    const result = await run(process.execPath, [found['NOTARY_MCP_CONFORMANCE'] ?? '', 'server', '--url', url, '--expected-failures', baseline, '--output-dir', results]);
    expect(result.output, result.output).toMatch(/Baseline check passed/);
    expect(result.code, result.output).toBe(0);
    // Every baseline entry has its reason beside it.
    for (const line of readFileSync(baseline, 'utf8').split('\n').filter((l) => /^\s+- /.test(l))) expect(line, 'a baseline entry without a reason').toMatch(/ # \S/);
    const total = /Total: (\d+) passed, (\d+) failed/.exec(result.output);
    note(`mcp conformance: ${total?.[1] ?? '?'} checks passed, ${total?.[2] ?? '?'} failed (all in the baseline) in ${result.ms} ms`);
    writeFileSync(path.join(results, 'summary.txt'), result.output);
  }, 300_000);
});
