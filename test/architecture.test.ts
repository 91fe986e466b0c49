import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../testkit/components.js';

/** The import zones of eslint.config.js, exercised on probe sources so a broken rule cannot pass silently. */
async function problems(file: string, source: string): Promise<string[]> {
  const eslint = new ESLint({ cwd: repoRoot });
  const [result] = await eslint.lintText(source, { filePath: path.join(repoRoot, file) });
  return (result?.messages ?? []).map((m) => `${m.ruleId ?? ''}: ${m.message}`);
}

describe('architecture: import zones', () => {
  it('payments/ may import neither Fastify nor api/ nor runtime/', async () => {
    const found = await problems(
      'payments/probe.ts',
      "import type { FastifyRequest } from 'fastify';\nimport type { AppDeps } from '../api/app.js';\nimport type { Runtime } from '../runtime/runtime.js';\nexport type Probe = [FastifyRequest, AppDeps, Runtime];\n",
    );
    expect(found).toEqual([
      expect.stringMatching(/no-restricted-imports: .*knows no HTTP framework/),
      expect.stringMatching(/no-restricted-imports: .*payments\/ may import only core, storage/),
      expect.stringMatching(/no-restricted-imports: .*payments\/ may import only core, storage/),
    ]);
  });

  it('lower layers may not import upper ones, product code may not import tests or vitest', async () => {
    expect(await problems('core/probe.ts', "import type { Storage } from '../storage/db.js';\nexport type P = Storage;\n")).toEqual([expect.stringMatching(/core\/ may import only nothing of ours/)]);
    expect(await problems('search/probe.ts', "import type { Accounts } from '../payments/accounts.js';\nexport type P = Accounts;\n")).toEqual([expect.stringMatching(/search\/ may import only core, indexer, reranker/)]);
    expect(await problems('cli/probe.ts', "import type { Accounts } from '../payments/accounts.js';\nexport type P = Accounts;\n")).toEqual([expect.stringMatching(/cli\/ may import only/)]);
    expect(await problems('indexer/probe.ts', "import { it } from 'vitest';\nexport const p = it;\n")).toEqual([expect.stringMatching(/vitest/)]);
    expect(await problems('extract/probe.ts', "import type { TestServer } from '../testkit/upstream-server.js';\nexport type P = TestServer;\n")).toEqual([expect.stringMatching(/extract\/ may import only core/)]);
    expect(await problems('webhooks/probe.ts', "import type { Runtime } from '../runtime/runtime.js';\nexport type P = Runtime;\n")).toEqual([expect.stringMatching(/webhooks\/ may import only core, storage, extract/)]);
  });

  it('allows what the table allows, and tests beside the code may import test helpers', async () => {
    expect(await problems('runtime/probe.ts', "import type { Accounts } from '../payments/accounts.js';\nimport type { SearchPipeline } from '../search/pipeline.js';\nexport type P = [Accounts, SearchPipeline];\n")).toEqual([]);
    expect(await problems('webhooks/probe.ts', "import type { AddressPolicy } from '../extract/fetch/address-policy.js';\nimport type { Storage } from '../storage/db.js';\nexport type P = [AddressPolicy, Storage];\n")).toEqual([]);
    expect(await problems('payments/probe.test.ts', "import type { TestPostgres } from '../testkit/postgres.js';\nexport type P = TestPostgres;\n")).toEqual([]);
  });

  it('benchmarks and the shared test worlds never import the suites; unit tests beside the code import testkit/ only', async () => {
    expect(await problems('bench/probe.ts', "import type { DocBlock } from '../test/support/doc-examples.js';\nexport type P = DocBlock;\n")).toEqual([expect.stringMatching(/bench\/ may import anything but test/)]);
    expect(await problems('testkit/probe.ts', "import type { DocBlock } from '../test/support/doc-examples.js';\nexport type P = DocBlock;\n")).toEqual([expect.stringMatching(/testkit\/ may import anything but/)]);
    expect(await problems('indexer/probe.test.ts', "import { pairedComparison } from '../bench/eval/compare.js';\nexport const p = pairedComparison;\n")).toEqual([expect.stringMatching(/may not import test\/ or bench\/: shared worlds live in testkit/)]);
    expect(await problems('bench/probe.ts', "import { seededRandom } from '../testkit/seeded-random.js';\nexport const p = seededRandom;\n")).toEqual([]);
  });

  it('import() obeys the same zones as a static import', async () => {
    const found = await problems('payments/probe.ts', "export async function probe(): Promise<unknown> {\n  return import('../api/app.js');\n}\n");
    expect(found).toEqual([expect.stringMatching(/no-restricted-syntax: payments\/ may import only core, storage \(the map in docs\/architecture\.md\)/)]);
    expect(await problems('cli/probe.ts', "export async function probe(): Promise<unknown> {\n  return import('../runtime/index.js');\n}\n")).toEqual([]);
  });

  it('every top-level folder of the repository is on the map in docs/architecture.md', () => {
    const page = readFileSync(path.join(repoRoot, 'docs/architecture.md'), 'utf8');
    const mapped = new Set([...page.matchAll(/^\| `([a-z]+)\/` \|/gm)].map((m) => m[1]));
    const tracked = spawnSync('git', ['ls-files'], { cwd: repoRoot, encoding: 'utf8' }).stdout.split('\n');
    const folders = new Set(tracked.filter((f) => f.includes('/') && !f.startsWith('.')).map((f) => f.slice(0, f.indexOf('/'))));
    expect(folders.size).toBeGreaterThan(15);
    expect([...folders].filter((folder) => !mapped.has(folder))).toEqual([]);
    expect([...mapped].filter((folder) => !folders.has(folder ?? ''))).toEqual([]);
  });

  it('keeps test helpers and benchmark code out of product folders', () => {
    const productFolders = ['core', 'storage', 'extract', 'crawler', 'indexer', 'reranker', 'search', 'payments', 'runtime', 'api', 'cli'];
    const offenders: string[] = [];
    const walk = (dir: string): void => {
      for (const name of readdirSync(dir)) {
        const full = path.join(dir, name);
        if (statSync(full).isDirectory()) walk(full);
        else if (/(test-support|test-server|bench)[^/]*\.ts$/.test(name) && !name.endsWith('.test.ts')) offenders.push(path.relative(repoRoot, full));
      }
    };
    for (const folder of productFolders) walk(path.join(repoRoot, folder));
    expect(offenders).toEqual([]);
  });
});
