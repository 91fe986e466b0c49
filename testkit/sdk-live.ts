import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer, type Socket } from 'node:net';
import path from 'node:path';
import { configSchema, type ConfigInput } from '../core/config.js';
import { generatePartyKey, mppParties as partyKeys } from '../payments/modes/mpp/index.js';
import { Runtime, silentLog } from '../runtime/index.js';
import { htmlPageFetched } from '../storage/pages.js';
import { apiIndexDocs } from './app.js';
import { repoRoot, startServer, type RunningServer } from './cli.js';
import { html, writeSite } from './crawl-site.js';
import { freePort } from './postgres.js';
import { serveDirectory, type StaticServer } from './serve-static.js';
import { startChainWorld, startFacilitatorInProcess, type ChainWorld, type RunningFacilitator } from './x402.js';

/**
 * One live `notary serve` for the client libraries' integration suites (TypeScript, Python, Go): the four API test
 * documents indexed, keys for every case (a funded key, a key of a 2-request tier for 429s, an empty one, a revoked
 * one), two MPP parties with registered keys, x402 on a local chain, and a small site to extract from (a page, a
 * page without content, a page robots.txt forbids).
 */
export interface SdkWorld {
  server: RunningServer;
  site: StaticServer;
  /** NOTARY_LIVE_* variables every language suite reads. */
  env: Record<string, string>;
  /** The local chain, for checks of what the x402 payers paid. */
  chain: ChainWorld;
  close(): Promise<void>;
}

/** One x402 payer wallet per library (and one for the MCP agent), funded on the local chain. */
const X402_PAYERS = ['TS', 'PY', 'GO', 'MCP'] as const;

export async function startSdkWorld(): Promise<SdkWorld> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'notary-sdk-live-'));
  // x402: a local EVM chain with an EIP-3009 token, and `notary facilitator` settling on it.
  const chain: ChainWorld = await startChainWorld({ payers: X402_PAYERS.length, mint: 1_000_000_000n });
  const facilitator: RunningFacilitator = await startFacilitatorInProcess(chain, mkdtempSync(path.join(tmpdir(), 'notary-sdk-facilitator-')));
  const paragraph = 'Autovacuum reclaims the storage of dead tuples so that tables do not grow without bound. '.repeat(12);
  const siteDir = writeSite({
    'robots.txt': 'User-agent: *\nDisallow: /private/\n',
    'vacuum.html': html('Routine vacuuming', `<article><h2>Why vacuum</h2><p>${paragraph}</p><p>${paragraph}</p></article>`),
    'empty.html': '<!doctype html><html><head><title>Nothing</title></head><body></body></html>',
    'private/page.html': html('Private', `<article><p>${paragraph}</p></article>`),
    // An article with a reader-comment thread: its comments are in the content only with include_comments.
    'comments.html': readFileSync(path.join(repoRoot, 'test/fixtures/extract-shapes/article-comments.html'), 'utf8'),
  });
  const site = await serveDirectory(siteDir);
  const port = await freePort();
  const settings: ConfigInput = {
    search: { max_depth: 2 },
    // Depth 2 priced above depth 1 here, so the suites can tell the depths' prices apart.
    pricing: { search: { credits_by_depth: [1, 2, 4] } },
    reranker: { download: false },
    embeddings: { model: 'off' },
    extract: { allow_private_networks: true, respect_robots_txt: true, render: 'never' },
    tiers: { free: { requests_per_minute: 600, burst: 100 }, tiny: { requests_per_minute: 60, burst: 2 }, bulk: { requests_per_minute: 60_000, burst: 1000, crawl_concurrent_jobs: 10 } },
    default_tier: 'free',
    payments: {
      anonymous_tier: 'bulk',
      modes: {
        mpp: { enabled: true },
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
    receipts: { issuer: `http://127.0.0.1:${port}` },
  };
  writeFileSync(path.join(dataDir, 'notary.json'), JSON.stringify(settings, null, 2));
  const runtime = await Runtime.open(configSchema.parse({ ...settings, data_dir: dataDir }), { env: {}, log: silentLog });
  let keys: Record<string, string>;
  let mppParties = '';
  try {
    // The API suites' pages (undated), and one dated page for the libraries' `include: ["published_date"]` cases.
    await runtime.index.upsert([
      ...apiIndexDocs(),
      { id: 101, pageId: 101, url: 'https://docs.test/tablespaces', title: 'Tablespaces', headingPath: '', text: 'tablespaces let administrators choose directories for relation files', publishedAt: '2024-05-01' },
    ]);
    // The API documents as stored pages too, so POST /v1/map lists https://docs.test/ from the index.
    for (const doc of apiIndexDocs()) await runtime.pages.saveFetched({ ...htmlPageFetched(doc.url, `<p>${doc.text}</p>`), title: doc.title });
    const key = async (name: string, credits: number, tier: string) => {
      const tenant = await runtime.accounts.createTenant(name, { credits, tier });
      return runtime.accounts.createKey(tenant.id);
    };
    const revoked = await key('sdk-revoked', 100, 'bulk');
    // A key limited to one (empty) collection: naming any other, "default" included, is 403 collection_forbidden.
    const limitedTo = await runtime.collections.ensure('sdk-limited');
    const limitedTenant = await runtime.accounts.createTenant('sdk-limited', { credits: 100, tier: 'bulk' });
    const limited = await runtime.accounts.createKey(limitedTenant.id, { collections: [limitedTo.id] });
    await runtime.accounts.revokeKey(revoked.record.id);
    // MPP parties: two tenants, each with its own Ed25519 key registered; the suites get name=share:seedhex.
    const shares: string[] = [];
    for (const name of ['sdk-alice', 'sdk-bob']) {
      const partyKey = generatePartyKey();
      await runtime.service(partyKeys).addKey(await runtime.accounts.createTenant(name, { credits: 100_000, tier: 'bulk' }), partyKey.x);
      shares.push(`${name}=0.5:${Buffer.from(partyKey.d, 'base64url').toString('hex')}`);
    }
    mppParties = shares.join(',');
    keys = {
      NOTARY_LIVE_KEY: (await key('sdk-main', 100_000, 'bulk')).key,
      NOTARY_LIVE_TINY_KEY: (await key('sdk-tiny', 100_000, 'tiny')).key,
      NOTARY_LIVE_POOR_KEY: (await key('sdk-poor', 0, 'bulk')).key,
      NOTARY_LIVE_REVOKED_KEY: revoked.key,
      NOTARY_LIVE_LIMITED_KEY: limited.key,
    };
  } finally {
    await runtime.close();
  }
  const server = await startServer(['--data', dataDir, '--no-crawl'], port, { NOTARY_MODEL_DOWNLOAD: 'false', NOTARY_EMBEDDING_MODEL: 'off', NOTARY_LOG_LEVEL: 'warn' });
  const closedPort = await freePort();
  // Accepts connections and never answers: where a client's timeout must fire.
  const sockets = new Set<Socket>();
  const silent = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const silentAddress = silent.address();
  const silentPort = typeof silentAddress === 'object' && silentAddress ? silentAddress.port : 0;
  return {
    server,
    site,
    env: {
      NOTARY_LIVE_URL: server.url,
      ...keys,
      NOTARY_LIVE_PAGE_URL: `${site.url}/vacuum.html`,
      NOTARY_LIVE_EMPTY_URL: `${site.url}/empty.html`,
      NOTARY_LIVE_MISSING_URL: `${site.url}/missing.html`,
      NOTARY_LIVE_FORBIDDEN_URL: `${site.url}/private/page.html`,
      NOTARY_LIVE_COMMENTS_URL: `${site.url}/comments.html`,
      NOTARY_LIVE_CLOSED_URL: `http://127.0.0.1:${closedPort}`,
      NOTARY_LIVE_SILENT_URL: `http://127.0.0.1:${silentPort}`,
      NOTARY_LIVE_FACILITATOR_URL: facilitator.url,
      NOTARY_LIVE_MPP_PARTIES: mppParties,
      NOTARY_LIVE_X402_NETWORK: chain.chain.network,
      ...Object.fromEntries(X402_PAYERS.map((name, i) => [`NOTARY_LIVE_X402_KEY_${name}`, chain.payers[i]?.privateKey ?? ''])),
    },
    chain,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
      await server.stop();
      await site.close();
      rmSync(dataDir, { recursive: true, force: true });
      rmSync(siteDir, { recursive: true, force: true });
      await facilitator.stop();
      await chain.close();
    },
  };
}
