/**
 * Runs the same search from each client library in each payment mode against a live `notary serve` (the
 * conformance world: API keys, a local EVM chain with notary facilitator for x402, two MPP parties) and writes the commands and their output to docs/sdk-examples.md.
 * Usage: npx tsx scripts/sdk-examples.ts [--out docs/sdk-examples.md]
 */
import { spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startSdkWorld } from '../testkit/sdk-live.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = process.argv.includes('--out') ? (process.argv[process.argv.indexOf('--out') + 1] ?? '') : path.join(root, 'docs/sdk-examples.md');
const query = 'vacuum dead tuples';

function run(command: string, args: string[], cwd: string, env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd, env: { ...process.env, ...env } });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('close', (code) => resolve({ code, output }));
  });
}

const python = process.env['NOTARY_SDK_PYTHON'] ?? spawnSync('bash', [path.join(root, 'scripts/sdk-python-venv.sh')], { encoding: 'utf8' }).stdout.trim();
const world = await startSdkWorld();
try {
  const live = world.env;
  const modes = ['api_key', 'signed', 'x402', 'x402_receipt', 'mpp'];
  const languages = [
    { name: 'TypeScript', key: 'TS', command: process.execPath, args: (mode: string) => [path.join(root, 'node_modules/tsx/dist/cli.mjs'), 'sdk/ts/examples/search.ts', mode, query], cwd: root, shown: (mode: string) => `npx tsx sdk/ts/examples/search.ts ${mode} "${query}"` },
    { name: 'Python', key: 'PY', command: python, args: (mode: string) => ['examples/search.py', mode, query], cwd: path.join(root, 'sdk/python'), shown: (mode: string) => `(cd sdk/python && PYTHONPATH=src python examples/search.py ${mode} "${query}")` },
    { name: 'Go', key: 'GO', command: 'go', args: (mode: string) => ['run', './examples/search', mode, query], cwd: path.join(root, 'sdk/go'), shown: (mode: string) => `(cd sdk/go && go run ./examples/search ${mode} "${query}")` },
  ];
  const sections: string[] = [];
  let failed = 0;
  for (const mode of modes) {
    sections.push(`## ${mode}\n`);
    for (const lang of languages) {
      const env = {
        NOTARY_URL: live['NOTARY_LIVE_URL'] ?? '',
        NOTARY_API_KEY: live['NOTARY_LIVE_KEY'] ?? '',
        NOTARY_WALLET_KEY: live[`NOTARY_LIVE_X402_KEY_${lang.key}`] ?? '',
        NOTARY_FACILITATOR_URL: live['NOTARY_LIVE_FACILITATOR_URL'] ?? '',
        NOTARY_MPP_PARTIES: live['NOTARY_LIVE_MPP_PARTIES'] ?? '',
        PYTHONPATH: path.join(root, 'sdk/python/src'),
      };
      const result = await run(lang.command, lang.args(mode), lang.cwd, env);
      if (result.code !== 0) failed++;
      sections.push(`${lang.name}: \`${lang.shown(mode)}\`\n\n\`\`\`\n${result.output.trim()}${result.code === 0 ? '' : `\n(exit ${result.code})`}\n\`\`\`\n`);
      process.stderr.write(`${mode} ${lang.name}: exit ${result.code}\n`);
    }
  }
  const paidTo = await world.chain.token.balanceOf(world.chain.payTo);
  const header = [
    '# The same search from each library in each payment mode',
    '',
    `Captured by \`npx tsx scripts/sdk-examples.ts\` on ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC (${os.cpus().length} cores, load ${os.loadavg()[0]?.toFixed(1)}), against a live`,
    '`notary serve` started by the script: the four API test documents indexed, API keys, x402 on a local EVM chain',
    '(an EIP-3009 token and `notary facilitator` settling on it), one wallet per library, and two MPP parties',
    '(tenants `sdk-alice` and `sdk-bob`, each with its Ed25519 key registered, sharing every call 0.5/0.5). The programs are',
    '`sdk/ts/examples/search.ts`, `sdk/python/examples/search.py` and `sdk/go/examples/search/main.go`; they read',
    '`NOTARY_URL`, `NOTARY_API_KEY`, `NOTARY_WALLET_KEY`, `NOTARY_FACILITATOR_URL` and `NOTARY_MPP_PARTIES`. Scores come',
    'from the lexical scorer (no model in this run). `attempts: 2` on x402 and MPP calls is the unpaid first attempt',
    '(the 402 with the quote) and the paid retry. `signed` is an API-key call with `X-Notary-Sign: required`, its receipt',
    'verified offline against the JWKS. A depth-1 search costs 1 credit: MPP splits it 0.5/0.5 by largest remainder,',
    'so one party pays the whole credit (the tie goes to the first listed party) and the other 0.',
    '',
    `After the run the service's payTo address held ${paidTo} units of the test token (6 decimals) from these x402 calls.`,
    '',
  ];
  writeFileSync(out, `${header.join('\n')}\n${sections.join('\n')}`);
  console.log(`wrote ${path.relative(root, out)}; ${failed} failed`);
  process.exitCode = failed === 0 ? 0 : 1;
} finally {
  await world.close();
}
