/**
 * Writes spec/openapi.json and spec/llms.txt: the OpenAPI 3.1 document and llms.txt of the app `notary serve` builds,
 * on the default configuration (what a fresh deployment serves at /openapi.json and /llms.txt).
 * Usage: npx tsx scripts/openapi.ts [--check]   (--check exits 1 when the committed files are stale)
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildServeApp } from '../cli/serve.js';
import { configSchema } from '../core/config.js';
import { Runtime, silentLog } from '../runtime/index.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const OPENAPI_FILE = path.join(root, 'spec/openapi.json');
export const LLMS_FILE = path.join(root, 'spec/llms.txt');

/** The two documents as the default deployment serves them. */
export async function generateDocuments(): Promise<{ openapi: string; llms: string }> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'notary-openapi-'));
  try {
    const config = configSchema.parse({ data_dir: dataDir, reranker: { download: false }, embeddings: { model: 'off' } });
    const runtime = await Runtime.open(config, { env: {}, log: silentLog });
    try {
      const { app } = await buildServeApp(runtime);
      try {
        const openapi = await app.inject({ method: 'GET', url: '/openapi.json' });
        const llms = await app.inject({ method: 'GET', url: '/llms.txt' });
        if (openapi.statusCode !== 200 || llms.statusCode !== 200) throw new Error(`/openapi.json ${openapi.statusCode}, /llms.txt ${llms.statusCode}`);
        return { openapi: openapi.body, llms: llms.body };
      } finally {
        await app.close();
      }
    } finally {
      await runtime.close();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { openapi, llms } = await generateDocuments();
  if (process.argv.includes('--check')) {
    const stale = [
      [OPENAPI_FILE, openapi],
      [LLMS_FILE, llms],
    ].filter(([file, text]) => readFileSync(file as string, 'utf8') !== text);
    for (const [file] of stale) console.error(`${path.relative(root, file as string)} is stale: run npx tsx scripts/openapi.ts`);
    process.exit(stale.length === 0 ? 0 : 1);
  }
  writeFileSync(OPENAPI_FILE, openapi);
  writeFileSync(LLMS_FILE, llms);
  console.log(`wrote ${path.relative(root, OPENAPI_FILE)} (${openapi.length} bytes) and ${path.relative(root, LLMS_FILE)}`);
}
