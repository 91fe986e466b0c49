import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { configSchema, deepMerge, type ConfigInput } from '../../core/config.js';
import { fromBase64Url } from '../../payments/crypto/encoding.js';
import type { PartySigner } from '../../payments/modes/mpp/envelope.js';
import { generatePartyKey } from '../../payments/modes/mpp/key-file.js';
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
  /** Two MPP parties registered with `notary parties add-key` (plenty of credits, the bulk tier), sharing 0.6 / 0.4. */
  parties: PartySigner[];
  close(): Promise<void>;
}

/** `settings` are merged over the world's own (e.g. `payments.modes.x402` for the x402 run). */
export async function startExternalWorld(extra: ConfigInput = {}): Promise<ExternalWorld> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'notary-external-'));
  const port = await freePort();
  const base: ConfigInput = {
    reranker: { download: false },
    embeddings: { model: 'off' },
    tiers: { free: { requests_per_minute: 600, burst: 100 }, bulk: { requests_per_minute: 600_000, burst: 10_000 } },
    // The extract route fetches: only loopback exists here, and the suites must not reach anything else.
    extract: { render: 'never' },
    receipts: { issuer: `http://127.0.0.1:${port}` },
  };
  const settings = deepMerge(base as Record<string, unknown>, extra as Record<string, unknown>) as ConfigInput;
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
  const parties: PartySigner[] = [];
  for (const [party, share] of [['external-alice', '0.6'], ['external-bob', '0.4']] as const) {
    const key = generatePartyKey();
    const added = await runCli(['--data', dataDir, 'parties', 'add-key', '--tenant', party, '--public-key', key.x, '--credits', '1000000', '--tier', 'bulk'], {}, 60_000);
    if (added.code !== 0) throw new Error(`notary parties add-key failed:\n${added.stderr}`);
    parties.push({ party, share, seed: fromBase64Url(key.d) ?? new Uint8Array() });
  }
  const server = await startServer(['--data', dataDir, '--no-crawl'], port, { NOTARY_MODEL_DOWNLOAD: 'false', NOTARY_EMBEDDING_MODEL: 'off', NOTARY_LOG_LEVEL: 'warn' });
  return {
    server,
    dataDir,
    apiKey,
    parties,
    close: async () => {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
