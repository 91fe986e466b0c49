import { readFileSync } from 'node:fs';
import { Command, InvalidArgumentError, Option } from 'commander';
import { loadConfig, type ConfigInput, type NotaryConfig } from '../core/config.js';
import { isNotaryError } from '../core/errors.js';

function positiveInt(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new InvalidArgumentError('must be a positive integer');
  return Number(value);
}

function port(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) > 65535) throw new InvalidArgumentError('must be a port number 0-65535');
  return Number(value);
}

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

interface CrawlFlags {
  maxPages?: number;
  maxDepth?: number;
  scope?: 'path' | 'host' | 'domain' | 'any';
  include?: string[];
  exclude?: string[];
  resume?: boolean;
  delayMs?: number;
  concurrency?: number;
}

function packageVersion(): string {
  const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version?: string };
  return `${manifest.version ?? 'unknown'} (node ${process.versions.node})`;
}

interface GlobalOptions {
  data?: string;
  config?: string;
}

function configFrom(global: GlobalOptions, overrides: ConfigInput = {}): NotaryConfig {
  return loadConfig({
    ...(global.config ? { file: global.config } : {}),
    overrides: { ...overrides, ...(global.data ? { data_dir: global.data } : {}) },
  });
}

export function buildProgram(): Command {
  const program = new Command();
  program
    .name('notary')
    .description('Self-hosted web search and page-extraction API: crawl, index, rerank, serve.')
    .version(packageVersion(), '-V, --version', 'print the version')
    .option('--data <dir>', 'data folder holding all state (default ./data, or NOTARY_DATA_DIR)')
    .option('--config <file>', 'JSON config file (default <data>/notary.json, or NOTARY_CONFIG)')
    .showHelpAfterError()
    .configureHelp({ sortSubcommands: false });

  program
    .command('serve')
    .description('run the HTTP API, plus a background crawl worker for the configured seeds')
    .option('--port <port>', 'port to listen on (default 8080, or NOTARY_PORT)', port)
    .option('--host <host>', 'address to bind (default 127.0.0.1, or NOTARY_HOST)')
    .option('--no-crawl', 'do not run the background crawl worker')
    .option('--workers <n>', 'API processes sharing the port; 0 = one per core (default 1, or NOTARY_SERVER_WORKERS)', (v) => {
      if (!/^\d+$/.test(v)) throw new InvalidArgumentError('a whole number: API processes, 0 for one per core');
      return Number(v);
    })
    .action(async (opts: { port?: number; host?: string; crawl: boolean; workers?: number }) => {
      const cfg = configFrom(program.opts<GlobalOptions>(), {
        server: {
          ...(opts.port !== undefined ? { port: opts.port } : {}),
          ...(opts.workers !== undefined ? { workers: opts.workers } : {}),
          ...(opts.host ? { host: opts.host } : {}),
          ...(opts.crawl ? {} : { crawl_on_start: false }),
        },
      });
      const { serveCommand } = await import('./serve.js');
      await serveCommand(cfg);
    });

  program
    .command('crawl')
    .description('crawl the given seeds (or the configured ones) and index what was fetched, with live progress')
    .argument('[seeds...]', 'seed URLs')
    .option('--max-pages <n>', 'stop when this many pages are stored (duplicates, failures and skips do not count)', positiveInt)
    .option('--max-depth <n>', 'follow links at most this many hops from a seed', (v) => Number(v))
    .addOption(
      new Option('--scope <scope>', 'how far from the seeds: path (under the seed folder), host, domain or any (default path)').choices([
        'path',
        'host',
        'domain',
        'any',
      ]),
    )
    .option('--include <regex>', 'crawl only URLs matching one of these patterns (repeatable)', collect)
    .option('--exclude <regex>', 'never crawl URLs matching this pattern (repeatable)', collect)
    .option('--resume', 'continue the latest stopped or interrupted crawl (of these seeds, when given) where it stopped')
    .option('--delay-ms <ms>', 'delay between requests to one host (0 = politeness off)', (v) => Number(v))
    .option('--concurrency <n>', 'requests in flight at once', positiveInt)
    .action(async (seeds: string[], opts: CrawlFlags) => {
      const cfg = configFrom(program.opts<GlobalOptions>(), {
        crawler: {
          ...(seeds.length > 0 ? { seeds } : {}),
          ...(opts.scope ? { scope: opts.scope } : {}),
          ...(opts.include ? { include: opts.include } : {}),
          ...(opts.exclude ? { exclude: opts.exclude } : {}),
          ...(opts.maxPages !== undefined ? { max_pages: opts.maxPages } : {}),
          ...(opts.maxDepth !== undefined ? { max_depth: opts.maxDepth } : {}),
          ...(opts.delayMs !== undefined ? { per_host_delay_ms: opts.delayMs } : {}),
          ...(opts.concurrency !== undefined
            ? { max_concurrency: opts.concurrency, per_host_concurrency: opts.concurrency }
            : {}),
        },
      });
      const { crawlCommand } = await import('./crawl.js');
      await crawlCommand(cfg, { resume: opts.resume === true, seedsGiven: seeds.length > 0, maxPagesGiven: opts.maxPages !== undefined });
    });

  const keys = program.command('keys').description('manage tenants and API keys');
  keys
    .command('create')
    .description('create an API key (and the tenant if new); the key is printed once, alone on the last line')
    .requiredOption('--tenant <name>', 'tenant name')
    .option('--credits <n>', 'credits granted to a new tenant, or added to an existing one', (v) => {
      if (!/^\d+$/.test(v)) throw new InvalidArgumentError('must be a non-negative integer');
      return Number(v);
    })
    .option('--tier <tier>', 'rate-limit tier of a new tenant')
    .option('--name <label>', 'a label for the key')
    .action(async (opts: { tenant: string; credits?: number; tier?: string; name?: string }) => {
      const { keysCreateCommand } = await import('./keys.js');
      await keysCreateCommand(configFrom(program.opts<GlobalOptions>()), opts);
    });
  keys
    .command('revoke')
    .description('revoke an API key by id (key_...)')
    .argument('<key-id>')
    .action(async (keyId: string) => {
      const { keysRevokeCommand } = await import('./keys.js');
      await keysRevokeCommand(configFrom(program.opts<GlobalOptions>()), keyId);
    });
  keys
    .command('list')
    .description('list API keys (never the secret)')
    .option('--tenant <name>', 'only this tenant')
    .option('--json', 'machine-readable output')
    .action(async (opts: { tenant?: string; json?: boolean }) => {
      const { keysListCommand } = await import('./keys.js');
      await keysListCommand(configFrom(program.opts<GlobalOptions>()), opts);
    });

  const admin = program.command('admin').description('dashboard accounts: operators');
  admin
    .command('create')
    .description('create an operator account (reads the password from standard input, or asks for it at a terminal)')
    .requiredOption('--email <email>', "the operator's email, used to sign in")
    .action(async (opts: { email: string }) => {
      const { adminCreateCommand } = await import('./admin.js');
      await adminCreateCommand(configFrom(program.opts<GlobalOptions>()), opts);
    });
  admin
    .command('list')
    .description('list dashboard users (operators and members)')
    .option('--json', 'machine-readable output')
    .action(async (opts: { json?: boolean }) => {
      const { adminListCommand } = await import('./admin.js');
      await adminListCommand(configFrom(program.opts<GlobalOptions>()), opts);
    });

  const nonNegativeInt = (v: string) => {
    if (!/^\d+$/.test(v)) throw new InvalidArgumentError('must be a non-negative integer');
    return Number(v);
  };
  const parties = program.command('parties').description("MPP parties: tenants' Ed25519 public keys that sign multi-party payment envelopes");
  parties
    .command('add-key')
    .description('register a public key for a tenant (created if new); prints the kid alone on the last line')
    .requiredOption('--tenant <name>', 'tenant (party) name: what envelopes call the party')
    .requiredOption('--public-key <base64url>', 'the raw 32-byte Ed25519 public key, base64url (notary mpp keygen prints it)')
    .option('--name <label>', 'a label for the key')
    .option('--credits <n>', 'credits granted to a new tenant, or added to an existing one', nonNegativeInt)
    .option('--tier <tier>', 'rate-limit tier of a new tenant')
    .action(async (opts: { tenant: string; publicKey: string; name?: string; credits?: number; tier?: string }) => {
      const { partiesAddKeyCommand } = await import('./parties.js');
      await partiesAddKeyCommand(configFrom(program.opts<GlobalOptions>()), opts);
    });
  parties
    .command('list')
    .description('list party keys')
    .option('--tenant <name>', 'only this tenant')
    .option('--json', 'machine-readable output')
    .action(async (opts: { tenant?: string; json?: boolean }) => {
      const { partiesListCommand } = await import('./parties.js');
      await partiesListCommand(configFrom(program.opts<GlobalOptions>()), opts);
    });
  parties
    .command('revoke')
    .description('revoke a party key by kid: envelopes it signs are refused from now on')
    .argument('<kid>')
    .action(async (kid: string) => {
      const { partiesRevokeCommand } = await import('./parties.js');
      await partiesRevokeCommand(configFrom(program.opts<GlobalOptions>()), kid);
    });

  const mpp = program.command('mpp').description('client-side helpers for multi-party payments (no database needed)');
  mpp
    .command('keygen')
    .description('make a party key pair: writes the private JWK file, prints the public key alone on the last line')
    .requiredOption('--out <file>', 'where to write the private key (mode 0600)')
    .option('--force', 'replace an existing file')
    .action(async (opts: { out: string; force?: boolean }) => {
      const { mppKeygenCommand } = await import('./mpp.js');
      mppKeygenCommand(opts);
    });
  mpp
    .command('envelope')
    .description('build and sign an envelope for one call; prints it alone on the last line (use as Authorization: MPP envelope=...)')
    .requiredOption('--url <url>', 'the absolute URL of the call, e.g. http://127.0.0.1:8080/v1/search')
    .option('--method <method>', 'HTTP method', 'POST')
    .option('--body <json>', 'the exact request body that will be sent')
    .option('--body-file <file>', 'the exact request body, from a file ("-" for standard input)')
    .requiredOption('--credits <n>', 'total_credits: the most the call may cost (its price must not exceed it)', nonNegativeInt)
    .option('--party <name=share:keyfile>', 'a paying party, its share and its private key file (JWK or PEM); repeat per party; NAME=KEYFILE for equal shares', (v: string, all: string[]) => [...all, v], [] as string[])
    .option('--ttl <seconds>', `lifetime of the envelope, at most ${300}`, (v) => Number(v), 120)
    .option('--header', 'print the whole Authorization value (MPP envelope=...)')
    .action(async (opts: { url: string; method: string; body?: string; bodyFile?: string; credits: number; party: string[]; ttl: number; header?: boolean }) => {
      const { mppEnvelopeCommand } = await import('./mpp.js');
      mppEnvelopeCommand(opts);
    });
  mpp
    .command('decode')
    .description('print the JSON inside an envelope (verifies nothing)')
    .argument('<envelope>', 'the base64url envelope, or the whole "MPP envelope=..." value')
    .action(async (value: string) => {
      const { mppDecodeCommand } = await import('./mpp.js');
      mppDecodeCommand(value);
    });

  const receipts = program.command('receipts').description('signed receipts: keys, offline verification, log audit');
  receipts
    .command('rotate-key')
    .description('make a new current signing key; the old one is retired and keeps verifying the receipts it signed')
    .action(async () => {
      const { rotateKeyCommand } = await import('./receipts.js');
      await rotateKeyCommand(configFrom(program.opts<GlobalOptions>()));
    });
  receipts
    .command('verify')
    .description('verify a saved response (or receipt) offline: signature, kid, key validity at issued_at, response digest')
    .argument('<saved-response.json>')
    .option('--jwks <file-or-url>', 'the published key set to trust (default: <issuer>/.well-known/jwks.json)')
    .option('--request <file>', 'the exact request body that was sent, to check request_digest (a salted one with the saved response\'s notary_request_salt)')
    .action(async (file: string, opts: { jwks?: string; request?: string }) => {
      const { verifyCommand } = await import('./receipts.js');
      await verifyCommand(configFrom(program.opts<GlobalOptions>()), file, opts);
    });
  receipts
    .command('audit')
    .description('offline audit from saved files: checkpoint signatures, consistency between checkpoints, inclusion of receipts')
    .argument('[files...]', 'checkpoints, JWKS, saved responses or receipts, inclusion and consistency proofs')
    .option('--jwks <file-or-url>', 'the published key set to trust')
    .option('--origin <origin>', 'the log origin to expect (default: the first checkpoint\'s)')
    .option('--local', "also re-hash this server's own log from its database")
    .action(async (files: string[], opts: { jwks?: string; origin?: string; local?: boolean }) => {
      const { auditCommand } = await import('./receipts.js');
      await auditCommand(configFrom(program.opts<GlobalOptions>()), files, opts);
    });

  program
    .command('search')
    .description('search the local index from the terminal')
    .argument('<query>')
    .option('--depth <n>', 'search depth', positiveInt, 1)
    .option('--json', 'print the JSON the API would return (without billing fields)')
    .action(async (query: string, opts: { depth: number; json?: boolean }) => {
      const { searchCommand } = await import('./search.js');
      await searchCommand(configFrom(program.opts<GlobalOptions>()), query, opts);
    });

  program
    .command('extract')
    .description('main content of a URL or a local HTML file, as the API would return it')
    .argument('<url-or-file>')
    .option('--mode <mode>', 'excerpt (default, as in the API), text, markdown or html', 'excerpt')
    .option('--query <text>', 'with --mode excerpt: pick the passages that best answer it')
    .option('--render <policy>', 'auto (browser only for JS shells), never or always')
    .option('--max-age <s>', 'accept a cached copy at most this old', (v) => {
      if (!/^\d+$/.test(v)) throw new InvalidArgumentError('must be a non-negative integer');
      return Number(v);
    })
    .option('--json', 'print the whole result as JSON')
    .action(async (target: string, opts: { mode: string; query?: string; render?: string; maxAge?: number; json?: boolean }) => {
      const { extractCommand } = await import('./extract.js');
      await extractCommand(configFrom(program.opts<GlobalOptions>()), target, opts);
    });

  const models = program.command('models').description('list, verify, install and pull reranker and embedding models');
  models
    .command('list')
    .description('models in the cache, the configured one, and which scorer is live and why')
    .option('--json', 'machine-readable output')
    .action(async (opts: { json?: boolean }) => {
      const { modelsListCommand } = await import('./models.js');
      await modelsListCommand(configFrom(program.opts<GlobalOptions>()), opts);
    });
  models
    .command('verify')
    .description('check model files against their pinned or reported sha256 and load each in ONNX Runtime (exit 1 on a problem)')
    .argument('[name-or-dir]', 'a model folder, or a name in the cache (default: every cached and configured model)')
    .option('--json', 'machine-readable output')
    .action(async (target: string | undefined, opts: { json?: boolean }) => {
      const { modelsVerifyCommand } = await import('./models.js');
      await modelsVerifyCommand(configFrom(program.opts<GlobalOptions>()), target, opts);
    });
  models
    .command('pull')
    .description('fetch the pinned models (the bi-encoder and the cross-encoder) from reranker.hub_url now, resuming a cut transfer, each file checked against its sha256 (image builds, air-gapped copies)')
    .option('--to <dir>', 'write them into this folder instead of the model cache (then `notary models install <dir>` elsewhere)')
    .action(async (opts: { to?: string }) => {
      const { modelsPullCommand } = await import('./models.js');
      await modelsPullCommand(configFrom(program.opts<GlobalOptions>()), opts);
    });
  models
    .command('install')
    .description('install the pinned models a folder holds (<dir>/<name>/ as `models pull --to` writes, checked against the pins; what differs is reported), or copy one local model folder into the cache after checking it loads')
    .argument('<dir>')
    .option('--name <name>', 'folder name in the cache (default: the folder\'s own name; the pinned cross-encoder is ms-marco-MiniLM-L-6-v2)')
    .action(async (dir: string, opts: { name?: string }) => {
      const { modelsInstallCommand } = await import('./models.js');
      await modelsInstallCommand(configFrom(program.opts<GlobalOptions>()), dir, opts);
    });

  program
    .command('crawl-worker')
    .description('crawl the configured seeds now and again every crawler.recrawl_after_hours, indexing as it goes (a scaled-out crawler process, no HTTP API)')
    .action(async () => {
      const { crawlWorkerCommand } = await import('./serve.js');
      await crawlWorkerCommand(configFrom(program.opts<GlobalOptions>()));
    });

  const index = program.command('index').description('the search index backend (indexer.backend)');
  index
    .command('rebuild')
    .description('rebuild the whole index from the stored passages; searches see the old index until the new one is complete')
    .action(async () => {
      const { indexRebuildCommand } = await import('./index-admin.js');
      await indexRebuildCommand(configFrom(program.opts<GlobalOptions>()));
    });
  index
    .command('search-key')
    .description('Meilisearch: create (once) and print the search-only key for API nodes (needs the master or an admin key)')
    .action(async () => {
      const { indexSearchKeyCommand } = await import('./index-admin.js');
      await indexSearchKeyCommand(configFrom(program.opts<GlobalOptions>()));
    });

  program
    .command('mcp')
    .description('an MCP server for agents (notary_search, notary_extract) calling a notary API over HTTP; stdio by default')
    .option('--url <url>', 'the notary API to call (default NOTARY_URL, else http://127.0.0.1:8080)')
    .option('--http', 'serve Streamable HTTP instead of stdio')
    .option('--host <host>', 'with --http: address to bind', '127.0.0.1')
    .option('--port <port>', 'with --http: port (default 8090)', port, 8090)
    .option('--path <path>', 'with --http: endpoint path', '/mcp')
    .option('--sign', 'ask for a signed receipt on every call (X-Notary-Sign: required)')
    .option('--timeout-ms <ms>', 'per-attempt timeout of API calls', positiveInt)
    .addHelpText('after', '\nThe API key is read from NOTARY_API_KEY (never from the command line). Without one, calls are paid per call by the MCP client through x402 (_meta["x402/payment"]).')
    .action(async (opts: { url?: string; http?: boolean; host: string; port: number; path: string; sign?: boolean; timeoutMs?: number }) => {
      const { mcpCommand } = await import('./mcp.js');
      await mcpCommand(opts);
    });

  program
    .command('status')
    .description('pages, passages, index size, last crawl and the active reranker')
    .option('--json', 'machine-readable output')
    .action(async (opts: { json?: boolean }) => {
      const { statusCommand } = await import('./status.js');
      await statusCommand(configFrom(program.opts<GlobalOptions>()), opts);
    });

  program
    .command('facilitator')
    .description('serve the standard x402 facilitator API (POST /verify, POST /settle, GET /supported) on an EVM chain, signing settlement receipts')
    .option('--port <port>', 'port to listen on (default 8402)', port)
    .option('--host <host>', 'address to bind (default 127.0.0.1)')
    .option('--rpc-url <url>', 'JSON-RPC URL of the chain (or facilitator.rpc_url, NOTARY_FACILITATOR_RPC_URL)')
    .option('--issuer <name>', 'iss of the receipts (default the facilitator URL)')
    .option('--rotate-key', 'add a new receipt-signing key (older ones stay published), print the JWKS and exit')
    .action(async (opts: { port?: number; host?: string; rpcUrl?: string; issuer?: string; rotateKey?: boolean }) => {
      const cfg = configFrom(program.opts<GlobalOptions>(), {
        facilitator: {
          ...(opts.port !== undefined ? { port: opts.port } : {}),
          ...(opts.host ? { host: opts.host } : {}),
          ...(opts.rpcUrl ? { rpc_url: opts.rpcUrl } : {}),
          ...(opts.issuer ? { issuer: opts.issuer } : {}),
        },
      });
      const { facilitatorCommand } = await import('./facilitator.js');
      await facilitatorCommand(cfg, { ...(opts.rotateKey ? { rotateKey: true } : {}) });
    });

  const payments = program.command('payments').description('the books of paid calls');
  payments
    .command('list')
    .description('every charged call: mode, payer, amount, asset, network, transaction, request id')
    .option('--mode <mode>', 'only this payment mode (x402, api_key)')
    .option('--limit <n>', 'only the newest n', positiveInt)
    .option('--csv', 'CSV with a header row')
    .option('--json', 'machine-readable output')
    .action(async (opts: { mode?: string; limit?: number; csv?: boolean; json?: boolean }) => {
      const { paymentsListCommand } = await import('./payments.js');
      await paymentsListCommand(configFrom(program.opts<GlobalOptions>()), opts);
    });
  payments
    .command('reconcile')
    .description('decide x402 settlements whose outcome was never heard (a settle that timed out) from the chain')
    .option('--json', 'machine-readable output')
    .action(async (opts: { json?: boolean }) => {
      const { paymentsReconcileCommand } = await import('./payments.js');
      await paymentsReconcileCommand(configFrom(program.opts<GlobalOptions>()), opts);
    });

  return program;
}

export async function main(argv: string[]): Promise<void> {
  try {
    await buildProgram().parseAsync(argv);
  } catch (err) {
    if (isNotaryError(err)) {
      process.stderr.write(`notary: ${err.message} [${err.code}]\n`);
    } else {
      process.stderr.write(`notary: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    }
    process.exitCode = 1;
    // A command that failed ends, even when something it opened (a model's worker thread, a pool) would keep the
    // process alive: a half-started server must not linger without serving.
    setTimeout(() => process.exit(1), 2_000).unref();
  }
}
