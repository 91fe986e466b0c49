import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { configSchema, type ConfigInput } from '../../core/config.js';
import { Runtime, silentLog } from '../../runtime/index.js';
import { apiIndexDocs } from '../../testkit/app.js';
import { runCli, startServer, type RunningServer } from '../../testkit/cli.js';
import { freePort } from '../../testkit/postgres.js';

/**
 * What the outside suites run against: `notary serve` on a fresh data folder and a free loopback port, the four API
 * test documents indexed, and an API key made by `notary keys create` (a tenant with plenty of credits on a tier
 * generous enough that the generated calls are not all rate-limited).
 */
export interface ExternalWorld {
  server: RunningServer;
  dataDir: string;
  apiKey: string;
  close(): Promise<void>;
}

export async function startExternalWorld(): Promise<ExternalWorld> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'notary-external-'));
  const port = await freePort();
  const settings: ConfigInput = {
    reranker: { download: false },
    embeddings: { model: 'off' },
    tiers: { free: { requests_per_minute: 600, burst: 100 }, bulk: { requests_per_minute: 600_000, burst: 10_000 } },
    // The extract route fetches: only loopback exists here, and the suites must not reach anything else.
    extract: { render: 'never' },
    receipts: { issuer: `http://127.0.0.1:${port}` },
  };
  writeFileSync(path.join(dataDir, 'notary.json'), JSON.stringify(settings, null, 2));
  const runtime = await Runtime.open(configSchema.parse({ ...settings, data_dir: dataDir }), { env: {}, log: silentLog });
  try {
    await runtime.index.upsert(apiIndexDocs());
  } finally {
    await runtime.close();
  }
  const created = await runCli(['--data', dataDir, 'keys', 'create', '--tenant', 'external-suites', '--credits', '1000000', '--tier', 'bulk'], {}, 60_000);
  if (created.code !== 0) throw new Error(`notary keys create failed:\n${created.stderr}`);
  const apiKey = created.stdout.trim().split('\n').at(-1) ?? '';
  const server = await startServer(['--data', dataDir, '--no-crawl'], port, { NOTARY_MODEL_DOWNLOAD: 'false', NOTARY_EMBEDDING_MODEL: 'off', NOTARY_LOG_LEVEL: 'warn' });
  return {
    server,
    dataDir,
    apiKey,
    close: async () => {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
